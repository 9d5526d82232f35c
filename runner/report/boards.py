"""Positions as grids of cells, for drawing boards (HTML) without the rules.

A ``Grid`` is the picture of one position: ``width`` columns of one-character
cells, row-major, plus a ``kinds`` legend that says what each character is
(``empty``, ``blocked`` or ``seat<i>``) so the page can colour cells without
knowing the game. One pure function per game turns a state into a grid,
reading only what the state exposes; ``generic_grid`` falls back on the
``render()`` text for a game that has no function here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from runner.domain.games.base import Game
from runner.domain.games.boxing import BLOCKED, VACANT, BoxingState
from runner.domain.games.mnk import EMPTY as MNK_EMPTY
from runner.domain.games.mnk import MnkState
from runner.domain.games.pousse import EMPTY as POUSSE_EMPTY
from runner.domain.games.pousse import PousseState

if TYPE_CHECKING:  # python-chess builds its attack tables at import: only chess_grid needs it
    from runner.domain.games.chess import ChessState


@dataclass(frozen=True)
class Grid:
    width: int
    height: int
    cells: str  # row-major, width * height characters
    kinds: dict[str, str]  # character -> "empty" | "blocked" | "seat<i>"

    def rows(self) -> list[str]:
        w = self.width
        return [self.cells[r * w : (r + 1) * w] for r in range(self.height)]


def _seat_kinds(game: Game[Any, Any], state: Any, players: int) -> dict[str, str]:
    return {game.seat_mark(state, seat): f"seat{seat}" for seat in range(players)}


def boxing_grid(game: Game[Any, Any], state: BoxingState, players: int) -> Grid:
    """The arena as it is; a character that is no player's mark and not
    vacant (``o`` or any other pre-set obstacle) counts as blocked."""
    kinds = {ch: "blocked" for ch in set(state.cells)}
    kinds[VACANT] = "empty"
    kinds[BLOCKED] = "blocked"
    kinds.update({mark: f"seat{seat}" for seat, mark in enumerate(state.marks)})
    return Grid(state.width, state.height, state.cells, kinds)


def pousse_grid(game: Game[Any, Any], state: PousseState, players: int) -> Grid:
    kinds = {POUSSE_EMPTY: "empty", **_seat_kinds(game, state, players)}
    return Grid(state.size, state.size, state.cells, kinds)


def mnk_grid(game: Game[Any, Any], state: MnkState, players: int) -> Grid:
    kinds = {MNK_EMPTY: "empty", **_seat_kinds(game, state, players)}
    return Grid(state.width, state.height, state.cells, kinds)


#: a chess grid's cell kinds: White's pieces (upper case) are seat 0's
_CHESS_KINDS = {".": "empty", **{c: "seat0" for c in "PNBRQK"}, **{c: "seat1" for c in "pnbrqk"}}


def chess_grid(game: Game[Any, Any], state: ChessState, players: int) -> Grid:
    """The 8x8 board, rank 8 on top, pieces as FEN letters: White's (upper case) are seat 0's."""
    import chess  # a chess state exists: python-chess is loaded already

    board = state.board
    cells = ["."] * 64
    # by the twelve piece sets, not square by square: a report draws every position of every
    # game, and asking each of 64 squares for its piece was most of a chess report's time
    for color in chess.COLORS:
        for piece_type in chess.PIECE_TYPES:
            letter = chess.piece_symbol(piece_type)
            letter = letter.upper() if color == chess.WHITE else letter
            for square in chess.scan_forward(board.pieces_mask(piece_type, color)):
                cells[square ^ 56] = letter  # square a1 = 0; the grid's row 0 is rank 8
    return Grid(8, 8, "".join(cells), dict(_CHESS_KINDS))


def generic_grid(game: Game[Any, Any], state: Any, players: int) -> Grid:
    """Each line of ``render()`` as a row, padded to the widest (a game
    without its own function still gets a readable, steppable picture)."""
    lines = game.render(state).rstrip("\n").split("\n")
    width = max((len(line) for line in lines), default=0)
    cells = "".join(line.ljust(width) for line in lines)
    kinds = {" ": "empty", **_seat_kinds(game, state, players)}
    return Grid(width, len(lines), cells, kinds)


GridFn = Callable[[Game[Any, Any], Any, int], Grid]

GRID_FUNCTIONS: dict[str, GridFn] = {
    "boxing": boxing_grid,
    "chess": chess_grid,
    "pousse": pousse_grid,
    "mnk": mnk_grid,
    "gomoku": mnk_grid,
}


def grid_of(game: Game[Any, Any], state: Any, players: int) -> Grid:
    """The grid of ``state`` for ``game`` (``players`` seats)."""
    return GRID_FUNCTIONS.get(game.name, generic_grid)(game, state, players)


def grid_changes(before: Grid, after: Grid) -> list[tuple[int, int, str]]:
    """Runs ``(start, length, char)`` of cells that differ from ``before``:
    a box or a pushed line changes contiguous cells, so runs keep replay data
    small. Grids of different shapes give one run over the whole board."""
    if (before.width, before.height) != (after.width, after.height):
        return [(i, 1, ch) for i, ch in enumerate(after.cells)]
    old, new = before.cells, after.cells
    start, end = _differing_span(old, new)
    runs: list[tuple[int, int, str]] = []
    # only the span between the first and the last changed cell is walked cell by cell: a
    # move changes a few cells, and walking every cell of every position of every game was
    # most of the time a run's report took to write
    for i in range(start, end):
        a, b = old[i], new[i]
        if a == b:
            continue
        if runs and runs[-1][0] + runs[-1][1] == i and runs[-1][2] == b:
            start, length, ch = runs[-1]
            runs[-1] = (start, length + 1, ch)
        else:
            runs.append((i, 1, b))
    return runs


def _differing_span(old: str, new: str) -> tuple[int, int]:
    """``(start, end)``: ``old[:start] == new[:start]`` and ``old[end:] == new[end:]``, both
    as long as can be (strings of one length; slices compared at C speed, by bisection)."""
    n = len(old)
    if old == new:
        return n, n
    lo, hi = 0, n  # the common prefix is at least lo long and shorter than hi + 1
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[:mid] == new[:mid]:
            lo = mid
        else:
            hi = mid - 1
    start = lo
    lo, hi = 0, n - start  # the common suffix, within what the prefix left
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if old[n - mid :] == new[n - mid :]:
            lo = mid
        else:
            hi = mid - 1
    return start, n - lo
