"""The end-to-end bench's split of a run's wall time (``bench/e2e_bench.py``): start-up
and per-match overhead apart, read from a real run's store against a real bare script."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench.__main__ import main as bench_main
from bench.e2e_bench import (
    BOARD,
    BareTiming,
    RunTiming,
    _bare_script,
    _orders,
    split_run,
    tourney_run,
)
from bench.fairtime_bench import ENTRY as THINKING_ENTRY
from bench.fairtime_bench import fixed_work_config
from bench.throughput_bench import greedy_mnk_config


def test_split_puts_fixed_seconds_in_start_up_and_the_rest_per_match() -> None:
    # launched at 100, first match started 100.8, last finished 110.8, exited 111.0
    run = RunTiming(
        launched=100.0, exited=111.0, first_started=100.8, last_finished=110.8, matches=50, moves=900
    )
    bare = BareTiming(wall_s=8.2, build_s=0.2, moves=900)
    split = split_run(run, bare)
    assert run.wall_s == pytest.approx(11.0)
    assert split.start_up_s == pytest.approx(1.0)  # 0.8 s before the first match, 0.2 s after the last
    assert split.per_match_overhead_ms == pytest.approx((10.0 - 8.0) / 50 * 1000)  # 40 ms
    assert split.ratio == pytest.approx(11.0 / 8.2)
    # the run's wall time is its start-up, the bare script's play span and the matches' overhead
    assert run.wall_s == pytest.approx(
        split.start_up_s + bare.span_s + run.matches * split.per_match_overhead_ms / 1000
    )


def test_split_of_a_run_faster_per_match_than_the_bare_script_is_negative() -> None:
    run = RunTiming(launched=0.0, exited=9.0, first_started=1.0, last_finished=8.5, matches=10, moves=1)
    bare = BareTiming(wall_s=8.1, build_s=0.1, moves=1)
    assert split_run(run, bare).per_match_overhead_ms == pytest.approx(-50.0)


def test_split_of_a_run_without_matches_is_refused() -> None:
    run = RunTiming(launched=0.0, exited=1.0, first_started=0.5, last_finished=0.5, matches=0, moves=0)
    with pytest.raises(ValueError, match="no match"):
        split_run(run, BareTiming(wall_s=1.0, build_s=0.1, moves=0))


def test_rounds_below_one_are_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        bench_main(["e2e", "--rounds", "0"])
    assert exit_.value.code == 2
    assert "--rounds: 0 is not a number of rounds; expected 1 or more" in capsys.readouterr().err


@pytest.mark.integration
def test_a_real_run_splits_into_start_up_and_play_span(tmp_path: Path) -> None:
    config = greedy_mnk_config(
        tmp_path, name="split", seed=13, board=BOARD, entrants=3, games=2, sandbox="none"
    )
    run = tourney_run(config, tmp_path / "run", workers=2)
    assert run.matches == 3  # 3 pairings of a round robin
    assert run.launched < run.first_started <= run.last_finished < run.exited
    assert run.start_up_s + run.span_s == pytest.approx(run.wall_s)
    bare = _bare_script(_orders(tmp_path / "run"), os.cpu_count() or 1)
    assert 0 < bare.build_s < bare.wall_s
    # the same games: the seeded entry plays the same moves under the same referee
    assert bare.moves == run.moves > 0
    split = split_run(run, bare)
    assert split.ratio == pytest.approx(run.wall_s / bare.wall_s)
    assert split.start_up_s > 0


@pytest.mark.integration
def test_the_bare_script_plays_the_thinking_entries_games_too(tmp_path: Path) -> None:
    """The third config's bare script runs the fixed-work entry, not the greedy one, and plays
    the very games the run played (the greedy entry plays other moves: fewer of them)."""
    config = fixed_work_config(
        tmp_path, "thinking", entrants=3, exclusive=False, work=1, sandbox="none", reserved=0, board=BOARD
    )
    run = tourney_run(config, tmp_path / "run", workers=2)
    assert run.matches == 3
    orders = _orders(tmp_path / "run")
    bare = _bare_script(orders, 2, THINKING_ENTRY, ("1",))
    assert bare.moves == run.moves > 0
    assert _bare_script(orders, 2).moves != run.moves  # what a bare script of the wrong entry shows
