"""``tourney validate`` says how many games a config implies and refuses a stage beyond the limit."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from runner.commands.validate import cmd_validate
from runner.config import load_config
from runner.domain.stages.requirements import MAX_STAGE_GAMES, planned_games
from tests.config.test_validate import edit, problems, project, write

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
