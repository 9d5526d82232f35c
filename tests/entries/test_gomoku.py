"""Gomoku brains (gomocup): the handshake, moves on empty cells, wins and blocks."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from tests.entries.conftest import Roster
from tests.entries.harness import Brain, play_gomocup

NAMES = ["threats", "randomish", "randomish-s1"]


@contextmanager
def brain(roster: Roster, name: str) -> Iterator[Brain]:
    b = Brain(roster("gomoku")[name])
    try:
        yield b
    finally:
        b.close()


def cell(text: str, w: int = 15, h: int = 15) -> tuple[int, int]:
    assert re.fullmatch(r"\d+,\d+", text), text
    x, y = (int(v) for v in text.split(","))
    assert 0 <= x < w and 0 <= y < h
    return x, y


@pytest.mark.parametrize("name", NAMES)
def test_handshake_and_a_few_turns(roster: Roster, name: str) -> None:
    with brain(roster, name) as b:
        b.send("START 15\n")
        assert b.answer() == "OK"
        b.send("INFO timeout_turn 1000\nINFO win_length 5\nABOUT\n")
        assert re.match(r'name="[^"]+", version="[^"]+"', b.answer())
        b.send("BEGIN\n")
        taken = {cell(b.answer())}
        for opp in [(0, 0), (14, 14), (1, 1)]:
            b.send(f"TURN {opp[0]},{opp[1]}\n")
            taken.add(opp)
            mine = cell(b.answer())
            assert mine not in taken
            taken.add(mine)
        b.send("END\n")
        assert b.proc.wait(timeout=5) == 0


@pytest.mark.parametrize("name", NAMES)
def test_completes_five_from_a_board(roster: Roster, name: str) -> None:
    with brain(roster, name) as b:
        b.send("START 15\n")
        assert b.answer() == "OK"
        b.send("BOARD\n3,3,1\n4,3,1\n5,3,1\n6,3,1\n3,4,2\n4,4,2\n5,4,2\n6,4,2\nDONE\n")
        assert cell(b.answer()) in {(2, 3), (7, 3)}


def test_threats_blocks_four_and_open_three(roster: Roster) -> None:
    with brain(roster, "threats") as b:
        b.send("START 15\n")
        assert b.answer() == "OK"
        b.send("BOARD\n7,7,2\n8,7,2\n9,7,2\n10,7,2\n6,7,1\n0,0,1\n14,14,1\nDONE\n")
        assert cell(b.answer()) == (11, 7)
        b.send("BOARD\n7,7,2\n8,7,2\n9,7,2\n0,0,1\n14,14,1\nDONE\n")  # open three: stop it now
        assert cell(b.answer()) in {(6, 7), (10, 7), (5, 7), (11, 7)}


def test_threats_plays_a_rectangular_board(roster: Roster) -> None:
    with brain(roster, "threats") as b:
        b.send("RECTSTART 20,10\n")
        assert b.answer() == "OK"
        b.send("TURN 19,9\n")
        assert cell(b.answer(), 20, 10) != (19, 9)


def test_threats_beats_randomish(roster: Roster) -> None:
    threats, randomish = roster("gomoku")["threats"], roster("gomoku")["randomish-s2"]
    assert play_gomocup([randomish, threats]).winner == 1
    assert play_gomocup([threats, randomish]).winner == 0
