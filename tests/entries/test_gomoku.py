"""Gomoku brains (gomocup), spoken to by the real adapter: the handshake, moves on empty cells,
wins and blocks."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.entries.conftest import Roster
from tests.entries.harness import brain, play_gomocup
from workers.protocols import GomocupProtocol
from workers.sandbox import RunOutcome

NAMES = ["threats", "randomish", "randomish-s1"]


def stones(b: GomocupProtocol, cells: list[tuple[int, int]]) -> tuple[Any, list[Any]]:
    """The position after ``cells`` (0-based x,y, seats alternating from X), and its history."""
    state = b.game.new_game(b.board_text, 2)
    history: list[Any] = []
    for x, y in cells:
        move = b.game.parse_move(f"{x + 1} {y + 1}")
        state = b.game.play(state, move)
        history.append(move)
    return state, history


def answer(b: GomocupProtocol, cells: list[tuple[int, int]]) -> tuple[int, int]:
    """The brain's legal move (0-based x,y) after ``cells``."""
    state, history = stones(b, cells)
    reply = b.request_move(state, history)
    assert reply.verdict is None and reply.move is not None, reply.verdict
    x, y = (int(v) for v in b.game.format_move(reply.move).split())
    return x - 1, y - 1


@pytest.mark.parametrize("name", NAMES)
def test_handshake_and_a_few_turns(roster: Roster, name: str) -> None:
    with brain(roster("gomoku")[name]) as b:
        assert b.begin(b.game.new_game(b.board_text, 2)) is None  # START answered OK
        assert re.match(r'name="[^"]+", version="[^"]+"', b.about)
        played = [answer(b, [])]  # BEGIN
        corners = [(0, 0), (14, 14), (0, 14), (14, 0), (1, 1)]
        for _ in range(3):
            played.append(next(c for c in corners if c not in played))
            played.append(answer(b, played))  # TURN: a legal move on an empty cell
        assert b.proc is not None
        b.proc.send("END\n")
        ended = b.proc.read_line(5.0)
        assert isinstance(ended, RunOutcome) and (ended.failure, ended.exit_code) == (None, 0)


def interleave(
    own: list[tuple[int, int]], other: list[tuple[int, int]], own_first: bool
) -> list[tuple[int, int]]:
    first, second = (own, other) if own_first else (other, own)
    cells = [c for pair in zip(first, second, strict=False) for c in pair]
    return cells + first[len(second) :]


@pytest.mark.parametrize("name", NAMES)
def test_completes_five_from_a_board(roster: Roster, name: str) -> None:
    own = [(3, 3), (4, 3), (5, 3), (6, 3)]
    other = [(3, 4), (4, 4), (5, 4), (6, 4)]
    with brain(roster("gomoku")[name]) as b:
        assert b.begin(b.game.new_game(b.board_text, 2)) is None
        assert answer(b, interleave(own, other, own_first=True)) in {(2, 3), (7, 3)}  # sent as BOARD


def test_threats_blocks_four_and_open_three(roster: Roster) -> None:
    with brain(roster("gomoku")["threats"], seat=1) as b:
        assert b.begin(b.game.new_game(b.board_text, 2)) is None
        four = interleave([(6, 7), (0, 0), (14, 14)], [(7, 7), (8, 7), (9, 7), (10, 7)], own_first=False)
        assert answer(b, four) == (11, 7)
        three = interleave([(0, 0), (14, 14)], [(7, 7), (8, 7), (9, 7)], own_first=False)  # stop it now
        assert answer(b, three) in {(6, 7), (10, 7), (5, 7), (11, 7)}


def test_threats_plays_a_rectangular_board(roster: Roster) -> None:
    with brain(roster("gomoku")["threats"], board_text="20 10 5", seat=1) as b:
        assert b.begin(b.game.new_game(b.board_text, 2)) is None  # RECTSTART 20,10
        assert answer(b, [(19, 9)]) != (19, 9)  # TURN 19,9


def test_threats_beats_randomish(roster: Roster) -> None:
    threats, randomish = roster("gomoku")["threats"], roster("gomoku")["randomish-s2"]
    assert play_gomocup([randomish, threats]).winner == 1
    assert play_gomocup([threats, randomish]).winner == 0
