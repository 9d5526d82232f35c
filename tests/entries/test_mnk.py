"""m,n,k entries (mnk protocol): an empty cell every time; lookahead is the seed's algorithm."""

from __future__ import annotations

import random
import re
import subprocess

import pytest

from tests.entries import seed004
from tests.entries.conftest import Roster
from tests.entries.harness import Player, play_mnk, run_move, with_args

NAMES = ["random", "random-s1", "greedy", "greedy-s2", "lookahead", "lookahead-f1", "lookahead-scan"]
SHARP = ["greedy", "lookahead", "lookahead-f1", "lookahead-f2", "lookahead-attacking", "lookahead-defensive"]


def ask(player: Player, w: int, h: int, k: int, moves: list[tuple[int, int]]) -> tuple[int, int]:
    text = "\n".join([f"{w} {h} {k}", *(f"{x} {y}" for x, y in moves)]) + "\n"
    out, _ = run_move(player, "X", text)
    lines = out.splitlines()
    assert len(lines) == 1 and re.fullmatch(r"\d+ \d+", lines[0]), out
    x, y = (int(v) for v in lines[0].split())
    assert 1 <= x <= w and 1 <= y <= h, (x, y)
    assert (x, y) not in moves, f"({x}, {y}) is taken"
    return x, y


POSITIONS = [
    (3, 3, 3, []),
    (1, 1, 1, []),
    (7, 7, 4, [(4, 4), (3, 3), (5, 5)]),
    (20, 20, 5, [(10, 10), (11, 11)]),
    (6, 3, 3, [(1, 1), (2, 1), (1, 2), (2, 2), (3, 3)]),
    (3, 3, 3, [(1, 1), (2, 2), (3, 3), (1, 3), (3, 1), (2, 1), (2, 3), (3, 2)]),  # one cell left
]


@pytest.mark.parametrize(
    ("name", "w", "h", "k", "moves"),
    # lookahead-scan (the same search as lookahead in another move order) on the boards it can finish
    [(n, *p) for n in NAMES for p in POSITIONS if not (n == "lookahead-scan" and p[0] == 20)],
)
def test_answer_is_an_empty_cell(
    roster: Roster, name: str, w: int, h: int, k: int, moves: list[tuple[int, int]]
) -> None:
    player = roster("mnk")[name]
    if name.startswith("lookahead") and w == 20:
        # on 20x20 the search spends its whole work budget: the entry.yaml's 5,000,000
        # positions are about 3 s of CPU (test_lookahead_budget.py plays those); a tenth of
        # it ends the same way, in an answer cut by the budget
        player = with_args(player, "--max-work", "500000")
    ask(player, w, h, k, moves)


@pytest.mark.parametrize("name", SHARP)
def test_takes_an_immediate_win(roster: Roster, name: str) -> None:
    # X to move with three in a row on 7x7 K=4; O also threatens
    moves = [(2, 2), (2, 6), (3, 2), (3, 6), (4, 2), (4, 6)]
    assert ask(roster("mnk")[name], 7, 7, 4, moves) in {(1, 2), (5, 2)}


@pytest.mark.parametrize("name", SHARP)
def test_blocks_an_immediate_loss(roster: Roster, name: str) -> None:
    # O to move; X threatens (5, 2) only
    moves = [(2, 2), (1, 2), (3, 2), (7, 7), (4, 2)]
    assert ask(roster("mnk")[name], 7, 7, 4, moves) == (5, 2)


def random_position(rng: random.Random, w: int, h: int, k: int, stones: int) -> list[tuple[int, int]]:
    """A random game of up to ``stones`` moves that nobody has won yet."""
    cells = [0] * (w * h)
    moves: list[tuple[int, int]] = []
    for n in range(stones):
        empty = [i for i in range(w * h) if cells[i] == 0]
        if len(empty) <= 1:
            break
        i = rng.choice(empty)
        p = 1 if n % 2 == 0 else 2
        if seed004.wins_at(cells, w, h, k, i, p):
            break
        cells[i] = p
        moves.append((i % w + 1, i // w + 1))
    return moves


CASES = [
    # (w, h, k, foresight, fewest stones)
    (3, 3, 3, 1, 0),
    (3, 3, 3, 3, 1),
    (4, 4, 3, 2, 3),
    (4, 3, 3, 2, 0),
    (5, 4, 4, 1, 0),
    (5, 5, 3, 2, 9),
    (4, 4, 2, 2, 2),
]


@pytest.mark.parametrize(("w", "h", "k", "foresight", "fewest"), CASES)
def test_lookahead_chooses_what_the_seed_algorithm_chooses(
    roster: Roster, w: int, h: int, k: int, foresight: int, fewest: int
) -> None:
    base = roster("mnk")["lookahead"]
    rng = random.Random(f"{w}{h}{k}{foresight}")
    for trial in range(6):
        moves = random_position(rng, w, h, k, rng.randint(fewest, w * h - 2))
        dv = (0.0, 0.5, 1.0, 0.3)[trial % 4]
        order = ("centre", "scan")[trial % 2]
        player = with_args(base, "--foresight", str(foresight), "--draw-value", str(dv), "--order", order)
        expected = seed004.choose(w, h, k, moves, foresight, dv, order)
        assert ask(player, w, h, k, moves) == expected[:2], (moves, foresight, dv, order, expected)


def test_lookahead_keeps_to_its_work_budget_on_20x20(roster: Roster) -> None:
    """Foresight 4 on 20x20 is far beyond any budget: the search stops once its budget of
    positions is spent (a count, the same on every machine), just past it. (A twelfth of the
    entry.yaml's 5,000,000, which ``test_lookahead_budget.py`` checks: the same cut, in a
    twelfth of the time.)"""
    budget = 400_000
    player = with_args(
        roster("mnk")["lookahead"], "--foresight", "4", "--verbose", "1", "--max-work", str(budget)
    )
    moves = [(10, 10), (11, 11), (10, 11), (11, 10), (12, 12), (9, 9)]
    text = "\n".join(["20 20 5", *(f"{x} {y}" for x, y in moves)]) + "\n"
    out, err = _stderr_of(player, text)
    assert re.fullmatch(r"\d+ \d+\n", out)
    assert f"the work budget (--max-work {budget} positions) cut the search" in err, err
    spent = int(re.findall(r"^work: (\d+) positions$", err, re.M)[-1])
    assert budget < spent < budget + 20 * 20 * 20 * 20  # at most one level-2 node past it


def _stderr_of(player: Player, text: str) -> tuple[str, str]:
    done = subprocess.run(
        player.command("X"), cwd=player.cwd, input=text.encode(), capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.decode(), done.stderr.decode()


def test_lookahead_reports_when_the_budget_cuts_its_fixed_foresight(roster: Roster) -> None:
    """Seed 004's 'level of foresight' is fixed; a work budget bounds it and says when it fires."""
    player = with_args(roster("mnk")["lookahead"], "--foresight", "4", "--max-work", "20000")
    out, err = _stderr_of(player, "20 20 5\n10 10\n11 11\n")
    assert re.fullmatch(r"\d+ \d+\n", out)
    assert re.search(
        r"lookahead: the work budget \(--max-work 20000 positions\) cut the search: "
        r"played foresight [0-3] of 4",
        err,
    ), err


def test_lookahead_plays_its_full_foresight_silently_when_in_time(roster: Roster) -> None:
    player = with_args(roster("mnk")["lookahead"], "--foresight", "3", "--verbose", "1")
    _, err = _stderr_of(player, "6 6 4\n3 3\n4 4\n")
    assert "foresight 3:" in err and "cut the search" not in err


def test_lookahead_beats_greedy(roster: Roster) -> None:
    lookahead, greedy = roster("mnk")["lookahead"], roster("mnk")["greedy-s1"]
    assert play_mnk([greedy, lookahead], 7, 7, 4).winner == 1
    assert play_mnk([lookahead, greedy], 7, 7, 4).winner == 0
