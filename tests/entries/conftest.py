"""Fixtures: every sample entry, built once per session in a scratch copy."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.entries.harness import Player, players


class Roster:
    """The built entries of each game, built on first use."""

    def __init__(self, root: Path):
        self.root = root
        self.games: dict[str, dict[str, Player]] = {}

    def __call__(self, game: str) -> dict[str, Player]:
        if game not in self.games:
            self.games[game] = players(game, self.root)
        return self.games[game]


@pytest.fixture(scope="session")
def roster(tmp_path_factory: pytest.TempPathFactory) -> Roster:
    return Roster(tmp_path_factory.mktemp("entries"))
