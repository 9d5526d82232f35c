"""Generalised tic-tac-toe: m,n,k games (seed 004) and gomoku.

Board text ``"W H K"``: a W-column, H-row board on which X (seat 0, first)
and O take turns marking one empty cell; the first to get K or more of their
marks in a row, column or diagonal wins, and a full board with no such line
is a draw. Moves are ``"x y"``: 1-based column, then row, from the top left.

Gomoku is the same game on a default 15x15 board with K = 5 and boards up to
25x25; "five or more" wins (free-style gomoku, no exact-five rule).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import NamedTuple

from runner.domain.games.base import BadMoveText, BoardError, Game, IllegalMove, Outcome

EMPTY = "."
COLOURS = "XO"
_DIRECTIONS = ((1, 0), (0, 1), (1, 1), (1, -1))


class MnkMove(NamedTuple):
    """A cell, 1-based: ``x`` the column, ``y`` the row."""

    x: int
    y: int


@dataclass(frozen=True)
class MnkState:
    """A position. ``cells`` is row-major, W*H characters of ``X``, ``O`` or ``.``."""

    width: int
    height: int
    k: int
    cells: str
    to_move: int = 0
    moves: int = 0
    result: Outcome | None = None

    def at(self, x: int, y: int) -> str:
        """The cell at 1-based column ``x``, row ``y``."""
        return self.cells[(y - 1) * self.width + (x - 1)]


def _win(winner: int, reason: str) -> Outcome:
    return Outcome((winner,), (1, 0) if winner == 0 else (0, 1), reason)


class Mnk(Game[MnkState, MnkMove]):
    name = "mnk"
    max_side = 20

    # -- boards ---------------------------------------------------------
    def default_board(self) -> str:
        return "3 3 3"  # the classic game the seed generalises

    def parse_board(self, board_text: str) -> tuple[int, int, int]:
        """``(W, H, K)`` from ``"W H K"``; raises ``BoardError``."""
        parts = board_text.split()
        if len(parts) != 3 or not all(p.isascii() and p.isdigit() for p in parts):
            raise BoardError(f"{self.name} board must be three numbers 'W H K', got {board_text.strip()!r}")
        w, h, k = (int(p) for p in parts)
        for label, v in (("width", w), ("height", h)):
            if not 1 <= v <= self.max_side:
                raise BoardError(f"{self.name} board {label} must be 1..{self.max_side}, got {v}")
        if not 1 <= k <= max(w, h):
            raise BoardError(f"{self.name} K must be 1..max(W, H) = {max(w, h)}, got {k}")
        return w, h, k

    def validate_board(self, board_text: str) -> None:
        self.parse_board(board_text)

    # -- play -----------------------------------------------------------
    def new_game(self, board_text: str, players: int) -> MnkState:
        if players != 2:
            raise ValueError(f"{self.name} is a two-player game, got {players} players")
        w, h, k = self.parse_board(board_text)
        return MnkState(w, h, k, EMPTY * (w * h))

    def to_move(self, state: MnkState) -> int:
        return state.to_move

    def legal_moves(self, state: MnkState) -> list[MnkMove]:
        if state.result is not None:
            return []
        w = state.width
        return [MnkMove(i % w + 1, i // w + 1) for i, v in enumerate(state.cells) if v == EMPTY]

    def play(self, state: MnkState, move: MnkMove) -> MnkState:
        if state.result is not None:
            raise IllegalMove("the game is over")
        w, h = state.width, state.height
        if not (1 <= move.x <= w and 1 <= move.y <= h):
            raise IllegalMove(f"{move.x} {move.y} is off the {w}x{h} board")
        if state.at(move.x, move.y) != EMPTY:
            raise IllegalMove(f"{move.x} {move.y} is already taken by {state.at(move.x, move.y)}")
        mark = COLOURS[state.to_move]
        i = (move.y - 1) * w + (move.x - 1)
        cells = state.cells[:i] + mark + state.cells[i + 1 :]
        result: Outcome | None = None
        run = _longest_through(w, h, cells, move, mark)
        if run >= state.k:
            result = _win(state.to_move, f"{mark} made {run} in a row")
        elif EMPTY not in cells:
            result = Outcome((), (0, 0), "draw")
        return MnkState(w, h, state.k, cells, 1 - state.to_move, state.moves + 1, result)

    def outcome(self, state: MnkState) -> Outcome | None:
        return state.result

    def forfeit(self, state: MnkState, seat: int) -> MnkState:
        if state.result is not None:
            return state
        return replace(state, result=_win(1 - seat, f"{COLOURS[seat]} forfeited"))

    # -- text -----------------------------------------------------------
    def render(self, state: MnkState) -> str:
        """Column numbers on top, row numbers on the left, ``.`` for empty."""
        w = state.width
        lines = ["   " + "".join(f"{x:>3}" for x in range(1, w + 1))]
        for y in range(1, state.height + 1):
            row = state.cells[(y - 1) * w : y * w]
            lines.append(f"{y:>3}" + "".join(f"{v:>3}" for v in row))
        return "\n".join(lines) + "\n"

    def parse_move(self, text: str) -> MnkMove:
        parts = text.split()
        if len(parts) != 2 or not all(p.isascii() and p.isdigit() for p in parts):
            raise BadMoveText(f"not an {self.name} move ('x y', column then row): {text.strip()[:40]!r}")
        x, y = int(parts[0]), int(parts[1])
        if x < 1 or y < 1:
            raise BadMoveText(f"columns and rows are numbered from 1: {text.strip()!r}")
        return MnkMove(x, y)

    def format_move(self, move: MnkMove) -> str:
        return f"{move.x} {move.y}"


class Gomoku(Mnk):
    name = "gomoku"
    max_side = 25

    def default_board(self) -> str:
        return "15 15 5"


def _longest_through(w: int, h: int, cells: str, move: MnkMove, mark: str) -> int:
    """Length of the longest line of ``mark`` through ``move`` (only such a line can have grown)."""
    best = 0
    for dx, dy in _DIRECTIONS:
        run = 1
        for sign in (1, -1):
            x, y = move.x + sign * dx, move.y + sign * dy
            while 1 <= x <= w and 1 <= y <= h and cells[(y - 1) * w + (x - 1)] == mark:
                run += 1
                x, y = x + sign * dx, y + sign * dy
        best = max(best, run)
    return best
