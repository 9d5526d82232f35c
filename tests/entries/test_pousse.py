"""Pousse entries (icfp98): one legal move line; the greedy and searcher see one move ahead."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from runner.domain.games import get_game
from tests.entries.conftest import Roster
from tests.entries.harness import Player, play_pousse, run_move, with_args

POUSSE = get_game("pousse")
NAMES = ["random", "random-s2", "greedy", "greedy-s1", "searcher-fast", "searcher-d2"]
LOOKING = ["greedy", "greedy-s3", "searcher-fast", "searcher-d2"]  # never miss a win, never lose at once


def stdin_for(size: int, history: list[str]) -> str:
    return "\n".join([str(size), *history]) + "\n"


def replay(size: int, history: list[str]) -> Any:
    state = POUSSE.new_game(str(size), 2)
    for text in history:
        state = POUSSE.play(state, POUSSE.parse_move(text))
    return state


def verdicts(state: Any) -> dict[str, str]:
    """Each move's immediate result for the mover: win, repeat (loses), gift (loses), or none."""
    out = {}
    for move in POUSSE.legal_moves(state):
        outcome = POUSSE.outcome(POUSSE.play(state, move))
        text = POUSSE.format_move(move)
        if outcome is None:
            out[text] = "none"
        elif outcome.winners[0] == state.to_move:
            out[text] = "win"
        else:
            out[text] = "repeat" if "repeated" in outcome.reason else "gift"
    return out


def find_positions(kind: str, count: int, size: int = 4) -> list[list[str]]:
    """Histories of random games that reach a position where some move is a
    ``kind`` (win, repeat, gift) and some other move does not lose."""
    rng = random.Random(f"{kind}{size}")
    found: list[list[str]] = []
    for _ in range(400):
        state = POUSSE.new_game(str(size), 2)
        history: list[str] = []
        for _ in range(120):
            v = verdicts(state)
            safe = [m for m, r in v.items() if r == "none"]
            if kind in v.values() and (safe or kind == "win"):
                found.append(list(history))
                break
            if not safe:
                break
            move = rng.choice(safe)
            state = POUSSE.play(state, POUSSE.parse_move(move))
            history.append(move)
        if len(found) >= count:
            break
    assert len(found) >= count, f"only {len(found)} {kind} positions"
    return found


def move_of(player: Player, size: int, history: list[str]) -> str:
    out, _ = run_move(player, "X", stdin_for(size, history))
    lines = out.splitlines()
    assert len(lines) == 1 and re.fullmatch(r"[LRTB]\d{1,2}", lines[0]), out
    assert 1 <= int(lines[0][1:]) <= size
    return lines[0]


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize(
    ("size", "history"),
    [
        (6, []),
        (4, ["L2", "T2", "L2", "B2", "R2"]),  # the seed's sample game
        (20, ["T1", "B20", "L7"]),
        (7, ["L1"] * 9),  # a row full and pushing
    ],
)
def test_answer_is_one_move_line(roster: Roster, name: str, size: int, history: list[str]) -> None:
    move_of(roster("pousse")[name], size, history)


@pytest.mark.parametrize("name", LOOKING)
def test_takes_a_win(roster: Roster, name: str) -> None:
    for history in find_positions("win", 3):
        v = verdicts(replay(4, history))
        assert v[move_of(roster("pousse")[name], 4, history)] == "win", history


@pytest.mark.parametrize("name", LOOKING)
def test_never_repeats_a_configuration(roster: Roster, name: str) -> None:
    for history in find_positions("repeat", 3):
        v = verdicts(replay(4, history))
        assert v[move_of(roster("pousse")[name], 4, history)] not in ("repeat", "gift"), history


@pytest.mark.parametrize("name", LOOKING)
def test_never_gives_the_opponent_more_straights(roster: Roster, name: str) -> None:
    for history in find_positions("gift", 3):
        v = verdicts(replay(4, history))
        assert v[move_of(roster("pousse")[name], 4, history)] not in ("repeat", "gift"), history


def test_searcher_keeps_to_its_budget(roster: Roster) -> None:
    searcher = with_args(roster("pousse")["searcher"], "--budget-ms", "150")
    _, wall = run_move(searcher, "X", stdin_for(10, ["L1", "T3", "R5", "B7"]))
    assert wall < 1.5


def test_searcher_beats_greedy(roster: Roster) -> None:
    searcher = with_args(roster("pousse")["searcher"], "--budget-ms", "60")
    greedy = roster("pousse")["greedy"]
    assert play_pousse([greedy, searcher], 6).winner == 1
