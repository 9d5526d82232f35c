"""Boxing entries (potm-arena): every answer is the input plus one legal box."""

from __future__ import annotations

import random
from functools import cache

import pytest

from runner.domain.games import Boxing
from tests.entries.conftest import Roster
from tests.entries.harness import Player, play_boxing, run_move, with_args

BOXING = Boxing()
BASES = ["random", "greedy", "sprague"]
VARIANTS = ["random-s3", "greedy-s5", "greedy-max4", "sprague-l1", "sprague-fast"]


def arena(rows: list[str]) -> str:
    return "".join(r + "\n" for r in rows)


def box_added(before: str, after: str, mark: str) -> tuple[int, int, int]:
    """The one square box of ``mark`` that ``after`` adds to ``before`` (0-based x, y, side)."""
    a, b = before.split("\n"), after.split("\n")
    assert len(a) == len(b) and all(len(p) == len(q) for p, q in zip(a, b, strict=True)), "shape changed"
    changed = [
        (x, y) for y, (p, q) in enumerate(zip(a, b, strict=True)) for x in range(len(p)) if p[x] != q[x]
    ]
    assert changed, "nothing marked"
    for x, y in changed:
        assert a[y][x] == "-" and b[y][x] == mark, f"cell {x},{y}: {a[y][x]!r} -> {b[y][x]!r}"
    xs, ys = [c[0] for c in changed], [c[1] for c in changed]
    side = max(xs) - min(xs) + 1
    assert max(ys) - min(ys) + 1 == side and len(changed) == side * side, "not a filled square"
    assert side <= 16
    return min(xs), min(ys), side


def nearly_full(seed: int, vacant: int) -> str:
    """A 32x16 arena with ``vacant`` scattered vacant cells, the rest marked."""
    rng = random.Random(seed)
    cells = [rng.choice("AB") for _ in range(32 * 16)]
    for i in rng.sample(range(32 * 16), vacant):
        cells[i] = "-"
    return arena(["".join(cells[r * 32 : (r + 1) * 32]) for r in range(16)])


POSITIONS = {
    "sample": BOXING.default_board(),
    "random-blocks": BOXING.generate_board(random.Random(7), blocked=20),
    "nearly-full": nearly_full(1, 9),
    "one-vacant": nearly_full(2, 1),
    "one-cell-arena": arena(["-"]),
    "7x5": arena(["--o----", "-------", "--AA---", "--AA-o-", "-------"]),
    "tall-16x40": arena(["-" * 16] * 40),
    "wide-70x8": arena(["-" * 70] * 8),
    "three-marks": arena(["AAB-----", "AAC-----", "CCC-----", "--------"]),
}


@pytest.mark.parametrize("name", BASES + VARIANTS)
@pytest.mark.parametrize("position", sorted(POSITIONS))
def test_answer_is_the_arena_plus_one_box(roster: Roster, name: str, position: str) -> None:
    player = roster("boxing")[name]
    before = POSITIONS[position]
    for mark in "AZ":
        after, _ = run_move(player, mark, before)
        box_added(before, after, mark)
    # and the referee agrees
    state = BOXING.new_game(before, 2)
    after, _ = run_move(player, "A", before)
    BOXING.play(state, BOXING.move_from_output(state, after))


@pytest.mark.parametrize("name", BASES)
def test_full_arena_is_echoed(roster: Roster, name: str) -> None:
    full = nearly_full(3, 0)
    after, _ = run_move(roster("boxing")[name], "A", full)
    assert after == full


@pytest.mark.parametrize("name", ["greedy", "sprague"])
def test_takes_the_last_square_and_wins(roster: Roster, name: str) -> None:
    rows = ["AAAAAAAA", "AA---BBB", "AA---BBB", "AA---BBB", "BBBBBBBB"]
    after, _ = run_move(roster("boxing")[name], "B", arena(rows))
    assert "-" not in after


def test_sprague_opens_with_a_central_box_on_a_symmetric_arena(roster: Roster) -> None:
    """Then it can mirror every answer: the first player wins an empty arena."""
    empty = arena(["-" * 32] * 16)
    after, _ = run_move(roster("boxing")["sprague"], "A", empty)
    rows = after.split("\n")[:16]
    assert rows == [r[::-1] for r in reversed(rows)], "the answer is not point-symmetric"
    x, y, side = box_added(empty, after, "A")
    assert side == 16 and (x, y) == (8, 0)


@cache
def grundy(cells: frozenset[tuple[int, int]]) -> int:
    """Brute-force Sprague-Grundy value of a set of vacant cells."""
    values = set()
    for x, y in cells:
        side = 1
        while all((x + i, y + j) in cells for i in range(side) for j in range(side)):
            box = {(x + i, y + j) for i in range(side) for j in range(side)}
            values.add(grundy(cells - box))
            side += 1
    g = 0
    while g in values:
        g += 1
    return g


def vacant(text: str) -> frozenset[tuple[int, int]]:
    return frozenset((x, y) for y, row in enumerate(text.split("\n")) for x, c in enumerate(row) if c == "-")


def small_arenas(count: int) -> list[str]:
    rng = random.Random(2024)
    out: list[str] = []
    while len(out) < count:
        w, h = rng.randint(2, 6), rng.randint(2, 5)
        cells = ["-"] * (w * h)
        for i in rng.sample(range(w * h), max(0, w * h - rng.randint(4, 13))):
            cells[i] = rng.choice("oAB")
        text = arena(["".join(cells[r * w : (r + 1) * w]) for r in range(h)])
        if grundy(vacant(text)) != 0:
            out.append(text)
    return out


@pytest.mark.parametrize("name", ["sprague", "sprague-l1"])
def test_sprague_plays_a_winning_move_whenever_there_is_one(roster: Roster, name: str) -> None:
    player = roster("boxing")[name]
    for before in small_arenas(25):
        after, _ = run_move(player, "A", before)
        box_added(before, after, "A")
        assert grundy(vacant(after)) == 0, f"missed the win in\n{before}"


def test_sprague_answers_well_within_a_second(roster: Roster) -> None:
    sprague = roster("boxing")["sprague"]
    greedy = with_args(roster("boxing")["greedy"], "--seed", "1")
    result = play_boxing([sprague, greedy], BOXING.generate_board(random.Random(3), blocked=12))
    assert result.winner == 0
    assert result.max_wall_s[0] < 1.0


def test_seed_changes_greedys_tie_break(roster: Roster) -> None:
    greedy = roster("boxing")["greedy"]
    empty = arena(["-" * 32] * 16)
    boxes = {
        box_added(empty, run_move(with_args(greedy, "--seed", str(s)), "A", empty)[0], "A") for s in range(6)
    }
    assert len(boxes) > 1 and all(side == 16 for _, _, side in boxes)


def test_seeded_random_is_reproducible(roster: Roster) -> None:
    player: Player = roster("boxing")["random-s1"]
    before = POSITIONS["random-blocks"]
    assert run_move(player, "A", before)[0] == run_move(player, "A", before)[0]
