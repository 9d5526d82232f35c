"""The Boxing Match, POTM January 1994 (seed 002).

The board text is the arena itself: H lines of W characters, each ending in
``"\\n"`` (32x16, 528 bytes, in the seed). ``-`` is a vacant cell, ``o`` a
blocked one, anything else a mark left by a player. Players take turns, in
seat order, marking one filled square box of vacant cells with their mark
(seat 0 is ``A``, seat 1 ``B``, ...); a box is 1x1 up to ``max_box`` x
``max_box`` (16 in the seed). Whoever fills the last vacant cell wins and
scores the number of its marks on the final board; everyone else scores 0.

A move is ``BoxMove(x, y, size)``: the 1-based column and row of the box's
top-left corner and its side, written ``"x y size"``. Entries do not write
moves, they write the whole arena back; ``move_from_output`` turns such an
arena into a move, or says exactly why it is not one.

More than two players (stage 2 of the seed) take turns in seat order. A seat
that forfeits leaves the rotation and play goes on; the last seat left wins
and scores its marks at that moment.
"""

from __future__ import annotations

import random
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import NamedTuple

from runner.domain.games.base import BadMoveText, BoardError, Game, IllegalMove, Outcome

VACANT = "-"
BLOCKED = "o"
MAX_SIDE = 200  # arena width and height
DEFAULT_MAX_BOX = 16
MAX_PLAYERS = 26  # marks A..Z

# The seed's sample arena: 32x16 with a few blocked cells.
SAMPLE_ARENA = (
    "--------------------------------\n"
    "--------------------------------\n"
    "-----o--------------------------\n"
    "--------------------------------\n"
    "--------------------------------\n"
    "--------------------------------\n"
    "--------------------------------\n"
    "----------------o---------------\n"
    "---------------o-o--------------\n"
    "------------------o------------o\n"
    "--oo---------------o------------\n"
    "--oo----------------------------\n"
    "--oo----------------------------\n"
    "--------------------------------\n"
    "--------------------------------\n"
    "------------------------------oo\n"
)


class BoxMove(NamedTuple):
    """A square box: top-left corner at 1-based column ``x``, row ``y``; side ``size``."""

    x: int
    y: int
    size: int


@dataclass(frozen=True)
class BoxingState:
    """A position. ``cells`` is row-major, W*H characters, no newlines.

    ``active`` lists the seats still in the rotation (all of them unless some
    forfeited), in turn order; ``last_mover`` is who marked the latest box.
    """

    width: int
    height: int
    cells: str
    marks: tuple[str, ...]
    active: tuple[int, ...]
    to_move: int
    vacant: int
    last_mover: int | None = None
    forfeited: tuple[int, ...] = ()
    moves: int = 0

    def at(self, x: int, y: int) -> str:
        """The cell at 1-based column ``x``, row ``y``."""
        return self.cells[(y - 1) * self.width + (x - 1)]


def parse_arena(text: str) -> tuple[int, int, str]:
    """``(width, height, cells)`` of an arena text; raises ``BoardError`` with one line."""
    if not text:
        raise BoardError("the arena is empty")
    if "\r" in text:
        raise BoardError("the arena has carriage returns (CRLF line endings); use plain '\\n'")
    if not text.endswith("\n"):
        raise BoardError("the arena's last line does not end in a newline")
    lines = text[:-1].split("\n")
    width, height = len(lines[0]), len(lines)
    if not 1 <= height <= MAX_SIDE:
        raise BoardError(f"the arena has {height} lines; 1..{MAX_SIDE} allowed")
    if not 1 <= width <= MAX_SIDE:
        raise BoardError(f"the arena is {width} characters wide; 1..{MAX_SIDE} allowed")
    for row, line in enumerate(lines, start=1):
        if len(line) != width:
            raise BoardError(f"line {row} has {len(line)} characters, line 1 has {width}: not a rectangle")
        for col, ch in enumerate(line, start=1):
            if not "!" <= ch <= "~":
                raise BoardError(f"line {row} column {col} holds {ch!r}: cells are printable ASCII")
    cells = "".join(lines)
    if VACANT not in cells:
        raise BoardError("the arena has no vacant '-' cell")
    return width, height, cells


def _cell(x0: int, y0: int) -> str:
    """A cell named for people: 1-based column and row."""
    return f"cell (x={x0 + 1}, y={y0 + 1})"


class Boxing(Game[BoxingState, BoxMove]):
    name = "boxing"
    min_players = 2
    max_players = MAX_PLAYERS

    def __init__(self, max_box: int = DEFAULT_MAX_BOX) -> None:
        if isinstance(max_box, bool) or not isinstance(max_box, int) or max_box < 1:
            raise ValueError(f"boxing max_box must be a positive integer, got {max_box!r}")
        self.max_box = max_box

    # -- boards ---------------------------------------------------------
    def default_board(self) -> str:
        return SAMPLE_ARENA

    def validate_board(self, board_text: str) -> None:
        parse_arena(board_text)

    def generate_board(self, rng: random.Random, **params: object) -> str:
        """An arena of ``width`` x ``height`` (32x16) with ``blocked`` (20) random ``o`` cells.

        The default of 20 blocked cells is the seed's sample partial game.
        """
        unknown = sorted(set(params) - {"width", "height", "blocked"})
        if unknown:
            raise BoardError(f"unknown boxing board parameter(s): {', '.join(unknown)}")
        width = _int_param(params, "width", 32)
        height = _int_param(params, "height", 16)
        blocked = _int_param(params, "blocked", 20)
        if not (1 <= width <= MAX_SIDE and 1 <= height <= MAX_SIDE):
            raise BoardError(f"arena sides must be 1..{MAX_SIDE}, got {width}x{height}")
        if not 0 <= blocked < width * height:
            raise BoardError(f"blocked must be 0..{width * height - 1} on a {width}x{height} arena")
        cells = [VACANT] * (width * height)
        for i in rng.sample(range(width * height), blocked):
            cells[i] = BLOCKED
        return "".join("".join(cells[r * width : (r + 1) * width]) + "\n" for r in range(height))

    # -- play -----------------------------------------------------------
    def new_game(self, board_text: str, players: int) -> BoxingState:
        if not self.min_players <= players <= self.max_players:
            raise ValueError(f"boxing takes {self.min_players}..{self.max_players} players, got {players}")
        width, height, cells = parse_arena(board_text)
        marks = tuple(chr(ord("A") + seat) for seat in range(players))
        return BoxingState(width, height, cells, marks, tuple(range(players)), 0, cells.count(VACANT))

    def to_move(self, state: BoxingState) -> int:
        return state.to_move

    def seat_mark(self, state: BoxingState, seat: int) -> str:
        return state.marks[seat]

    def legal_moves(self, state: BoxingState) -> list[BoxMove]:
        """Every box, ordered by row, column, then size.

        ``largest[i]`` is the side of the biggest all-vacant square whose
        top-left corner is cell ``i`` (the classic maximal-square recurrence,
        run from the bottom-right), so each corner yields sizes 1..largest.
        """
        if self.outcome(state) is not None:
            return []
        w, h, cells = state.width, state.height, state.cells
        largest = [0] * (w * h + w + 1)  # one spare row and cell: no edge cases below
        for y in reversed(range(h)):
            for x in reversed(range(w)):
                i = y * w + x
                if cells[i] != VACANT:
                    continue
                if x == w - 1 or y == h - 1:
                    largest[i] = 1
                else:
                    largest[i] = 1 + min(largest[i + 1], largest[i + w], largest[i + w + 1])
        cap = self.max_box
        return [
            BoxMove(i % w + 1, i // w + 1, size)
            for i in range(w * h)
            for size in range(1, min(largest[i], cap) + 1)
        ]

    def check_move(self, state: BoxingState, move: BoxMove) -> None:
        """Raise ``IllegalMove`` naming the problem if ``move`` is not legal now."""
        if self.outcome(state) is not None:
            raise IllegalMove("the game is over")
        x, y, size = move
        if size < 1:
            raise IllegalMove(f"box side {size} is not positive")
        if size > self.max_box:
            raise IllegalMove(f"box side {size} is larger than the maximum {self.max_box}")
        w, h = state.width, state.height
        if not (x >= 1 and y >= 1 and x + size - 1 <= w and y + size - 1 <= h):
            raise IllegalMove(
                f"box {x} {y} {size} (columns {x}-{x + size - 1}, rows {y}-{y + size - 1}) "
                f"does not fit in the {w}x{h} arena"
            )
        for yy in range(y - 1, y - 1 + size):
            row = state.cells[yy * w + x - 1 : yy * w + x - 1 + size]
            if row != VACANT * size:
                xx = x - 1 + next(i for i, c in enumerate(row) if c != VACANT)
                raise IllegalMove(f"{_cell(xx, yy)} holds {state.cells[yy * w + xx]!r}, not a vacant '-'")

    def play(self, state: BoxingState, move: BoxMove) -> BoxingState:
        self.check_move(state, move)
        x, y, size = move
        w = state.width
        mover = state.to_move
        mark = state.marks[mover]
        cells = list(state.cells)
        for yy in range(y - 1, y - 1 + size):
            start = yy * w + x - 1
            cells[start : start + size] = mark * size
        return replace(
            state,
            cells="".join(cells),
            to_move=_next_seat(state.active, mover),
            vacant=state.vacant - size * size,
            last_mover=mover,
            moves=state.moves + 1,
        )

    def outcome(self, state: BoxingState) -> Outcome | None:
        if state.vacant == 0 and state.last_mover is not None:
            winner = state.last_mover
            reason = f"{state.marks[winner]} filled the last vacant cell"
        elif len(state.active) == 1:
            winner = state.active[0]
            gone = ", ".join(state.marks[s] for s in state.forfeited)
            reason = f"{gone} forfeited; {state.marks[winner]} is the last player left"
        else:
            return None
        marks = state.cells.count(state.marks[winner])
        scores = tuple(marks if seat == winner else 0 for seat in range(len(state.marks)))
        return Outcome((winner,), scores, reason)

    def forfeit(self, state: BoxingState, seat: int) -> BoxingState:
        if self.outcome(state) is not None or seat not in state.active:
            return state
        active = tuple(s for s in state.active if s != seat)
        to_move = _next_seat(state.active, seat) if state.to_move == seat else state.to_move
        return replace(state, active=active, to_move=to_move, forfeited=(*state.forfeited, seat))

    def adjudicate(self, state: BoxingState, players: int) -> Outcome:
        """Seed 002 ends a game only when the last vacant cell is filled ("the winner ... scores
        the number of its own marks"); a game stopped at its configured bound goes to the player
        still in the rotation with the most marks on the board, who scores them as a winner
        does. Players tied for the most marks: a draw, nobody scores."""
        settled = self.outcome(state)
        if settled is not None:
            return settled
        seats = len(state.marks)
        counts = {seat: state.cells.count(state.marks[seat]) for seat in state.active}
        best = max(counts.values())
        top = [seat for seat, n in counts.items() if n == best]
        if len(top) > 1:
            tied = ", ".join(state.marks[seat] for seat in top)
            draw = tuple(0 for _ in range(seats))
            return Outcome((), draw, f"{tied} share the most marks ({best}): a draw")
        winner = top[0]
        runner_up = max((n for seat, n in counts.items() if seat != winner), default=0)
        scores = tuple(best if seat == winner else 0 for seat in range(seats))
        return Outcome((winner,), scores, f"{state.marks[winner]} has the most marks ({best} to {runner_up})")

    # -- the arena protocol ---------------------------------------------
    def arena_text(self, state: BoxingState) -> str:
        """The arena as an entry reads it (and must write it back)."""
        w = state.width
        return "".join(state.cells[r * w : (r + 1) * w] + "\n" for r in range(state.height))

    def move_from_output(self, state: BoxingState, text: str | bytes) -> BoxMove:
        """The box that the mover's output arena adds to the current arena.

        Raises ``BadMoveText`` when the output is not an arena of the right
        shape (size, line lengths) and ``IllegalMove`` when it is one but
        differs from the input by anything other than one legal box of the
        mover's mark; each reason is one line and names the offending cell.
        """
        if isinstance(text, bytes):
            # latin-1 maps every byte to one character, so counts stay byte counts
            text = text.decode("latin-1")
        if self.outcome(state) is not None:
            raise IllegalMove("the game is over")
        w, h = state.width, state.height
        expected = h * (w + 1)
        if len(text) != expected:
            raise BadMoveText(f"expected {expected} bytes ({h} lines of {w} + newline), got {len(text)}")
        lines = text.split("\n")
        for row, line in enumerate(lines[:h], start=1):
            if len(line) != w:
                raise BadMoveText(f"line {row} has {len(line)} characters, expected {w}")
        if len(lines) != h + 1 or lines[h]:
            raise BadMoveText(f"expected {h} lines each ending in a newline")
        after = "".join(lines[:h])
        before = state.cells
        if after == before:
            raise IllegalMove("no box marked: the output arena is the input unchanged")
        mark = state.marks[state.to_move]
        changed = [i for i in range(w * h) if after[i] != before[i]]
        for i in changed:
            where = _cell(i % w, i // w)
            if before[i] != VACANT:
                raise IllegalMove(f"{where} changed from {before[i]!r} to {after[i]!r}; only '-' may change")
            if after[i] != mark:
                raise IllegalMove(f"{where} marked {after[i]!r}; this player's mark is {mark!r}")
        xs = [i % w for i in changed]
        ys = [i // w for i in changed]
        x0, x1, y0, y1 = min(xs), max(xs), min(ys), max(ys)
        if x1 - x0 != y1 - y0:
            raise IllegalMove(
                f"the marked cells span columns {x0 + 1}-{x1 + 1} and rows {y0 + 1}-{y1 + 1}: not a square"
            )
        size = x1 - x0 + 1
        if len(changed) != size * size:
            inside = (i for i in _square(w, x0, y0, size) if after[i] == before[i])
            i = next(inside)
            raise IllegalMove(
                f"the marked cells are not one filled square: {_cell(i % w, i // w)} inside "
                f"columns {x0 + 1}-{x1 + 1}, rows {y0 + 1}-{y1 + 1} still holds {after[i]!r}"
            )
        if size > self.max_box:
            raise IllegalMove(f"box side {size} is larger than the maximum {self.max_box}")
        return BoxMove(x0 + 1, y0 + 1, size)

    # -- text -----------------------------------------------------------
    def render(self, state: BoxingState) -> str:
        return self.arena_text(state)

    def parse_move(self, text: str) -> BoxMove:
        parts = text.split()
        if len(parts) != 3 or not all(p.isascii() and p.isdigit() for p in parts):
            raise BadMoveText(f"not a boxing move ('x y size'): {text.strip()[:40]!r}")
        x, y, size = (int(p) for p in parts)
        if min(x, y, size) < 1:
            raise BadMoveText(f"column, row and size are all at least 1: {text.strip()!r}")
        return BoxMove(x, y, size)

    def format_move(self, move: BoxMove) -> str:
        return f"{move.x} {move.y} {move.size}"


def _next_seat(active: tuple[int, ...], seat: int) -> int:
    """The seat after ``seat`` in turn order, among ``active`` (which holds ``seat``)."""
    later = [s for s in active if s > seat]
    return later[0] if later else active[0]


def _square(w: int, x0: int, y0: int, size: int) -> Iterable[int]:
    return (y * w + x for y in range(y0, y0 + size) for x in range(x0, x0 + size))


def _int_param(params: dict[str, object], key: str, default: int) -> int:
    value = params.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int):
        raise BoardError(f"boxing board parameter {key} must be an integer, got {value!r}")
    return value
