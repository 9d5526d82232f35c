"""A brute-force transcription of the TRYST'98 look-ahead (seed 004), for tests.

No pruning, no symmetry, no shortcuts: the value of a move is the
probability that the computer (the side to move) wins, with

- the opponent winning at once when it can (value 0), else playing uniformly
  at random among the empty cells (average of the children);
- the computer maximising; an immediate win worth 1, a full board ``dv``;
- ``foresight`` levels of (computer move, opponent reply), after which an
  undecided position is worth 0.5;
- among equal values (within 1e-9), the last move in the check order.

entries/mnk/lookahead/main.c must choose exactly the same moves.
"""

from __future__ import annotations

EPS = 1e-9
COMP, USER = 1, 2


def wins_at(cells: list[int], w: int, h: int, k: int, i: int, p: int) -> bool:
    """Would ``p`` have ``k`` in a row by playing the empty cell ``i``?"""
    x0, y0 = i % w, i // w
    for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
        n = 1
        for sgn in (1, -1):
            x, y = x0 + sgn * dx, y0 + sgn * dy
            while 0 <= x < w and 0 <= y < h and cells[y * w + x] == p:
                n += 1
                x, y = x + sgn * dx, y + sgn * dy
        if n >= k:
            return True
    return False


def check_order(w: int, h: int, order: str) -> list[int]:
    """Cell indexes in the order they are checked (``scan`` or ``centre``)."""
    seq = [y * w + x for x in range(w) for y in range(h)]
    if order == "centre":
        # stable sort: scan order among cells equally far from the centre
        seq.sort(key=lambda i: -((2 * (i % w) - (w - 1)) ** 2 + (2 * (i // w) - (h - 1)) ** 2))
    return seq


def choose(
    w: int, h: int, k: int, moves: list[tuple[int, int]], foresight: int, dv: float, order: str = "centre"
) -> tuple[int, int, float]:
    """The move (1-based x, y) the seed's algorithm plays, and its value."""
    cells = [0] * (w * h)
    me_first = len(moves) % 2 == 0
    for n, (x, y) in enumerate(moves):
        cells[(y - 1) * w + x - 1] = COMP if (n % 2 == 0) == me_first else USER

    def after_computer(d: int) -> float:
        empty = [i for i in range(w * h) if cells[i] == 0]
        if not empty:
            return dv
        if any(wins_at(cells, w, h, k, i, USER) for i in empty):
            return 0.0
        total = 0.0
        for u in empty:
            cells[u] = USER
            if len(empty) == 1:
                total += dv
            elif d == 1:
                total += 0.5
            else:
                total += computer(d - 1)
            cells[u] = 0
        return total / len(empty)

    def move_value(i: int, d: int) -> float:
        if wins_at(cells, w, h, k, i, COMP):
            return 1.0
        cells[i] = COMP
        v = after_computer(d)
        cells[i] = 0
        return v

    def computer(d: int) -> float:
        return max(move_value(i, d) for i in range(w * h) if cells[i] == 0)

    values = {i: move_value(i, foresight) for i in range(w * h) if cells[i] == 0}
    best = max(values.values())
    choice = -1
    for i in check_order(w, h, order):
        if i in values and values[i] >= best - EPS:
            choice = i
    return choice % w + 1, choice // w + 1, best
