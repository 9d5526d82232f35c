"""docs/games.md shows the example plugin's files as they are (the integration test runs them)."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "games.md"
EXAMPLE = ROOT / "examples" / "connect4"


@pytest.mark.parametrize(
    "path",
    [
        "connect4/game.py",
        "connect4.yaml",
        "entries/rightmost/entry.yaml",
        "entries/rightmost/main.py",
        "entries/centre/entry.yaml",
        "entries/centre/main.c",
        "entries/leftmost/main.py",
        "../nim-referee/nim.awk",
        "../nim-referee/nim.yaml",
    ],
)
def test_the_doc_quotes_the_example_file_whole(path: str) -> None:
    assert (EXAMPLE / path).read_text() in DOC.read_text()


def test_a_new_game_takes_under_100_lines() -> None:
    lines = len((EXAMPLE / "connect4" / "game.py").read_text().splitlines())
    assert lines < 100
    assert f"the game is {lines} lines" in DOC.read_text()
