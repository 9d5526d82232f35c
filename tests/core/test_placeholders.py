"""{mark}, {size} and {move_time} in an entry's arguments."""

from __future__ import annotations

from runner.domain.games import get_game
from runner.domain.placeholders import board_size, fill


def test_board_size_as_play_size_writes_it() -> None:
    assert board_size(get_game("pousse"), "7") == "7"
    assert board_size(get_game("boxing"), "-----\n--o--\n") == "5x2"
    assert board_size(get_game("mnk"), "9 9 5") == "9x9x5"


def test_fill_replaces_every_placeholder() -> None:
    args = ["./a.out", "{mark}", "--size={size}", "--budget", "{move_time}", "plain"]
    assert fill(args, mark="A", size="32x16", move_time=1.0) == [
        "./a.out",
        "A",
        "--size=32x16",
        "--budget",
        "1",
        "plain",
    ]
