"""``tourney validate`` says how many games a config implies and refuses a stage beyond the limit."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from runner.commands.validate import cmd_validate
from runner.config import load_config
from runner.domain.stages.requirements import MAX_STAGE_GAMES, planned_games
from tests.config.test_validate import GOOD, edit, problems, project, write

__all__ = ["project"]  # the fixture, used by name

TEN_THOUSAND = edit(
    "  - path: ../entries/boxing/gamma\n",
    "  - path: ../entries/boxing/gamma\n    variants: {count: 9998, args: ['{i}']}\n",
)


def test_a_round_robin_of_10000_entries_is_refused_with_the_number(project: Path) -> None:
    got = problems(project, TEN_THOUSAND)
    assert len(got) == 1
    # 49,995,000 pairs, two games each (the default games_per_pairing)
    limit = f"{MAX_STAGE_GAMES:,}"
    expected = f"round_robin with 10,000 entrants implies 99,990,000 games, more than the limit of {limit}"
    assert expected in got[0]


def test_a_swiss_of_10000_entries_is_accepted_and_counted(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = TEN_THOUSAND.replace("planner: round_robin", "planner: swiss\n    rounds: 10")
    path = write(project, text)
    config = load_config(path)
    assert planned_games(list(config.stages), len(config.entry_specs()), 0) == [100_000]
    assert cmd_validate(argparse.Namespace(config=str(path))) == 0
    assert "games: at most 100,000 (rr 100,000)" in capsys.readouterr().out


def test_the_limit_lets_a_1000_entry_round_robin_through_and_refuses_one_more(project: Path) -> None:
    """The documented limit (README, docs/config.md): 1,000,000 games per stage."""
    from runner.domain.stages.requirements import game_objections

    assert MAX_STAGE_GAMES == 1_000_000
    config = load_config(write(project, GOOD))
    (rr,) = [st for st in config.stages if st.planner == "round_robin"]
    assert game_objections(rr, 1_000, 0) == []  # 499,500 pairs x 2 games = 999,000
    (refused,) = game_objections(rr, 1_001, 0)
    assert "implies 1,001,000 games, more than the limit of 1,000,000 games per stage" in refused.message
    assert "under 2 GB" in refused.message


def test_an_sprt_counts_its_max_pairs_or_says_it_is_known_only_as_the_run_goes(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sprt = "planner: sprt\n    elo0: 0\n    elo1: 5\n    engine: alpha\n    baseline: beta"
    path = write(project, edit("planner: round_robin", sprt))
    assert cmd_validate(argparse.Namespace(config=str(path))) == 0
    assert "games: known only as the run goes (rr (depends on results))" in capsys.readouterr().out
    path = write(project, edit("planner: round_robin", sprt + "\n    max_pairs: 500"))
    assert cmd_validate(argparse.Namespace(config=str(path))) == 0
    assert "games: at most 1,000 (rr 1,000)" in capsys.readouterr().out
