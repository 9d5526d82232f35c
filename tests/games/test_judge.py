"""``tourney judge`` and the pure ``judge_transcript`` behind it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from runner.domain.games import BoardError
from runner.domain.games.boxing import SAMPLE_ARENA
from runner.domain.games.judge import judge_transcript
from tests import forked_cli

from .conftest import PROJECT_ROOT

# A real 1998 record: X (entry 1) beat O (entry 2) with its 57th move.
ICFP98_FIRST_TEXT = (
    "6 L3 T3 L3 T3 T3 L3 B3 T2 L3 R3 L3 B3 L3 B1 T3 R3 T3 R3 L1 B3 L1 L1 T3 R6 T6 T4 R1 R1 "
    "L3 T4 B4 B3 L1 L2 B3 R1 L3 T3 T3 R3 L1 B3 L3 L1 T3 T4 B4 T1 R3 T1 L5 T4 L5 R1 L1 T3 R3"
)
ICFP98_FIRST = ICFP98_FIRST_TEXT.split()


def transcript(lines: list[str]) -> str:
    return "\n".join(lines) + "\n"


def test_pousse_record_that_ended_normally() -> None:
    verdict = judge_transcript("pousse", transcript(ICFP98_FIRST))
    assert verdict == {
        "over": True,
        "winner": "X",
        "reason": verdict["reason"],
        "moves": len(ICFP98_FIRST) - 1,
    }
    assert "X" in verdict["reason"]


def test_unfinished_game() -> None:
    verdict = judge_transcript("pousse", "4\nL2\nT2\nL2\nB2\nR2\n")
    assert verdict == {"over": False, "winner": None, "reason": "not over; O to move", "moves": 5}
    assert judge_transcript("pousse", "6\n")["moves"] == 0


def test_moves_after_the_end_are_not_applied() -> None:
    verdict = judge_transcript("pousse", transcript([*ICFP98_FIRST, "L1", "L2"]))
    assert verdict["over"] is True and verdict["moves"] == len(ICFP98_FIRST) - 1


def test_invalid_move_loses_for_its_player() -> None:
    verdict = judge_transcript("pousse", "6\nL3\nT9\nL1\n")
    assert verdict == {
        "over": True,
        "winner": "X",
        "reason": "O made an invalid move: T9: T9 is off a 6x6 board (use L/R/T/B 1..6)",
        "moves": 1,
    }
    verdict = judge_transcript("pousse", "6\nbanana\n")
    assert verdict["over"] is True and verdict["winner"] == "O" and verdict["moves"] == 0
    assert verdict["reason"].startswith("X made an invalid move: banana: not a pousse move")


def test_blank_lines_and_whitespace_are_ignored() -> None:
    messy = " 4 \r\n\r\nL2\r\n  T2\n\n"
    assert judge_transcript("pousse", messy) == judge_transcript("pousse", "4\nL2\nT2\n")


def test_bad_board_line_raises() -> None:
    with pytest.raises(BoardError):
        judge_transcript("pousse", "3\nL1\n")
    with pytest.raises(BoardError, match="empty"):
        judge_transcript("mnk", "\n\n")
    with pytest.raises(BoardError, match="own board"):
        judge_transcript("pousse", "6\n", board="6")


def test_mnk_transcripts() -> None:
    won = judge_transcript("mnk", "3 3 3\n1 1\n1 2\n2 1\n2 2\n3 1\n")
    assert won == {"over": True, "winner": "X", "reason": "X made 3 in a row", "moves": 5}
    draw = judge_transcript("mnk", "3 3 3\n1 1\n2 1\n3 1\n2 2\n1 2\n3 2\n2 3\n1 3\n3 3\n")
    assert draw == {"over": True, "winner": None, "reason": "draw", "moves": 9}
    taken = judge_transcript("gomoku", "15 15 5\n8 8\n8 8\n")
    assert taken["winner"] == "X" and taken["moves"] == 1 and "O made an invalid move" in taken["reason"]


def test_boxing_transcripts() -> None:
    board = "---\n---\n--o\n"
    won = judge_transcript("boxing", "1 1 2\n3 1\n", board=board)  # "3 1" is no move
    assert won["winner"] == "A" and won["moves"] == 1
    won = judge_transcript("boxing", "1 1 2\n3 1 1\n3 2 1\n1 3 1\n2 3 1\n", board=board)
    assert won == {"over": True, "winner": "A", "reason": "A filled the last vacant cell", "moves": 5}
    going = judge_transcript("boxing", "1 1 2\n10 1 3\n")  # the seed's sample arena by default
    assert going == {"over": False, "winner": None, "reason": "not over; A to move", "moves": 2}
    blocked = judge_transcript("boxing", "5 2 2\n", board=SAMPLE_ARENA)
    assert blocked["winner"] == "B" and "holds 'o'" in blocked["reason"]


# -- the command --------------------------------------------------------------


def tourney(*args: str) -> subprocess.CompletedProcess[str]:
    return forked_cli.run(
        [*forked_cli.TOURNEY, *args], capture_output=True, text=True, timeout=60, cwd=PROJECT_ROOT
    )


def test_command_prints_one_line_per_transcript(tmp_path: Path) -> None:
    done = tmp_path / "done.txt"
    done.write_text(transcript(ICFP98_FIRST))
    going = tmp_path / "going.txt"
    going.write_text("4\nL2\nT2\nL2\nB2\nR2\n")
    missing = tmp_path / "missing.txt"
    result = tourney("judge", "--game", "pousse", str(done), str(missing), str(going))
    assert result.returncode == 2
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    assert [(v["over"], v["winner"], v["moves"]) for v in lines] == [
        (True, "X", len(ICFP98_FIRST) - 1),
        (False, None, 5),
    ]
    assert "missing.txt" in result.stderr

    ok = tourney("judge", "--game", "pousse", str(going))
    assert ok.returncode == 0 and json.loads(ok.stdout)["moves"] == 5


def test_command_for_boxing_with_a_board_file(tmp_path: Path) -> None:
    board = tmp_path / "arena.txt"
    board.write_text("---\n---\n--o\n")
    moves = tmp_path / "game.txt"
    moves.write_text("1 1 2\n3 1 1\n3 2 1\n1 3 1\n2 3 1\n")
    result = tourney("judge", "--game", "boxing", "--board", str(board), str(moves))
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {
        "over": True,
        "winner": "A",
        "reason": "A filled the last vacant cell",
        "moves": 5,
    }


def test_command_errors(tmp_path: Path) -> None:
    t = tmp_path / "t.txt"
    t.write_text("6\n")
    unknown = tourney("judge", "--game", "checkers", str(t))
    assert unknown.returncode == 2 and "known games" in unknown.stderr
    board_for_pousse = tourney("judge", "--game", "pousse", "--board", str(t), str(t))
    assert board_for_pousse.returncode == 2 and "--board is for boxing" in board_for_pousse.stderr
    bad_board = tourney("judge", "--game", "boxing", "--board", str(t), str(t))
    assert bad_board.returncode == 2 and "no vacant" in bad_board.stderr
