"""Real engines play at their strength (issue 35, item 1; docs/engines.md, "Clocks").

Through ``tourney run`` with the shipped entries: stockfish scores at least 75% over 6 games
against gnuchess at 2+0.05 with a median depth above 8 (the bench: 90% over 20). That it
finishes first in the shipped ``configs/engines.yaml`` is checked by the round robin of
``tests/integration/test_engine_tournaments.py``, one opening of it. A setting that starves
an engine (the ``Move Overhead: 100`` once shipped gave stockfish 1 ms a move and last place)
fails here. ``make bench ARGS=engine_strength`` prints the same figures.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.engine_strength import (
    MAX_LOAD_PER_CORE,
    MIN_MEDIAN_DEPTH,
    load_per_core,
    missing_engines,
    run_tourney,
    stockfish_gnuchess_config,
    tally,
)
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import LOADED_MARGIN_MS, assert_nothing_left

#: openings of the suite's stockfish-gnuchess run (each played twice), and the score it must reach
TEST_OPENINGS, TEST_MIN_SCORE = 3, 0.75

pytestmark = [
    pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}"),
    pytest.mark.skipif(bool(missing_engines()), reason=f"not installed: {missing_engines()}"),
]


def test_the_depth_of_a_move_is_read_from_its_pgn_comment() -> None:
    pgn = (
        '[White "a"]\n[Black "b"]\n[Result "0-1"]\n\n'
        "1. e4 { +0.31/14 0.120s [%clk 0:00:01.880] } e5 { -M3/9 0.1s } 0-1\n"
    )
    t = tally(pgn)
    assert t.depths == {"a": [14], "b": [9]}
    assert t.points == {"a": 0.0, "b": 1.0}


#: the priority the games play at where the suite may raise it (root): ahead of the suite's
#: own workers, which load 2 cores 4 to 6 deep; entries and engines inherit it
AHEAD = -10


@contextlib.contextmanager
def ahead_of_the_suite() -> Iterator[bool]:
    """The games' processes (this test's ``tourney run``, its workers, the engines) at a higher
    priority than the rest of the suite, where that is allowed: then the suite's own load does
    not starve their clocks. Yields whether it was."""
    before = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        os.setpriority(os.PRIO_PROCESS, 0, AHEAD)
    except PermissionError:
        yield False
        return
    try:
        yield True
    finally:
        os.setpriority(os.PRIO_PROCESS, 0, before)


def not_overloaded(ahead: bool) -> None:
    """Strength on a clock needs the CPU the clock assumes: on a machine loaded far beyond its
    cores the engines' moves wait for the scheduler and the check says nothing. Ahead of the
    suite, only a load beyond what the suite itself makes (other work) is too much."""
    load, limit = load_per_core(), MAX_LOAD_PER_CORE * (3 if ahead else 1)
    if load > limit:
        pytest.skip(f"the machine is loaded {load:.1f} per core (> {limit:g}): no strength check")


def test_stockfish_beats_gnuchess_at_2_plus_005_searching_deep(tmp_path: Path) -> None:
    with ahead_of_the_suite() as ahead:
        not_overloaded(ahead)
        _stockfish_beats_gnuchess(tmp_path)


def _stockfish_beats_gnuchess(tmp_path: Path) -> None:
    # 6 games (the bench plays 20 and wants MIN_SCORE), whose flag falls only 1.5 s past the
    # clock: the suite's own load delays a move's last milliseconds (stockfish plays to within
    # 10 ms of its flag). Each game costs about 7 s of CPU, so the suite plays few, and asks for
    # 75% (a draw or two allowed): the starved engine this guards against searched 1 to 8 plies
    # and finished last, which the depth and the score show all the same.
    config = stockfish_gnuchess_config(TEST_OPENINGS)
    config["each"]["timemargin"] = LOADED_MARGIN_MS
    t = run_tourney(config, tmp_path)
    assert t.games["stockfish"] == 2 * TEST_OPENINGS
    assert t.score("stockfish") >= TEST_MIN_SCORE, t
    assert t.median_depth("stockfish") > MIN_MEDIAN_DEPTH, t
    assert_nothing_left([str(tmp_path / "runs")])
