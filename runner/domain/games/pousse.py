"""Pousse, the ICFP 1998 contest game (seed 003).

On an N x N board (4 <= N <= 20, board text ``"N"``) X and O take turns
sliding one marker in from the Left or Right of a row, or the Top or Bottom of
a column (moves ``L3``, ``R1``, ``T2``, ``B4``; 1-based, rows and columns
counted from the top left). Markers in the way are pushed one square along up
to the first empty square; with no empty square on that line the last marker
falls off the board. A *straight* is a row or column holding N markers of one
colour.

The game ends when a move

1. recreates an earlier configuration (board plus side to move): the mover
   loses; or
2. leaves one colour with more straights than the other: that colour wins
   (even if it is the mover's opponent).

A configuration includes the side to move (the contest's clarification):
counting the board alone would end 8 of the 2352 real 1998 tournament records
(replayed by tests/games/test_pousse_conformance.py) too early. The records do not tell which
check comes first when one move does both (none does), so the seed's order
is kept: a move that repeats a configuration loses even if it also gives the
mover more straights. tests/games/test_pousse_conformance.py replays them all.

History is kept cheaply by an observation about the rules: a move adds one
marker, or keeps the count when one is pushed off, so the marker count never
falls. A configuration can therefore only repeat one with the same count, and
the state keeps only the configurations seen since the count last grew.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import NamedTuple

from runner.domain.games.base import BadMoveText, BoardError, Game, IllegalMove, Outcome

MIN_SIZE = 4
MAX_SIZE = 20
EMPTY = "."
COLOURS = "XO"
SIDES = "LRTB"

_MOVE_RE = re.compile(r"([LRTB])([0-9]{1,3})")


class PousseMove(NamedTuple):
    """An insertion: ``side`` is one of L, R, T, B; ``number`` the 1-based row or column."""

    side: str
    number: int


@dataclass(frozen=True)
class PousseState:
    """A position. ``cells`` is row-major, N*N characters of ``X``, ``O`` or ``.``.

    ``seen`` holds the configuration keys (cells plus side to move) reached
    since the marker count last grew, the current one included; see the
    module docstring for why older ones can never repeat.
    """

    size: int
    cells: str
    to_move: int
    markers: int
    seen: frozenset[str]
    moves: int = 0
    result: Outcome | None = None

    @property
    def key(self) -> str:
        return self.cells + COLOURS[self.to_move]

    def rows(self) -> list[str]:
        n = self.size
        return [self.cells[r * n : (r + 1) * n] for r in range(n)]


def parse_size(board_text: str) -> int:
    """The N of a board text ``"N"``; raises ``BoardError``."""
    text = board_text.strip()
    if not (text.isascii() and text.isdigit()):
        raise BoardError(f"pousse board must be a single number N ({MIN_SIZE}..{MAX_SIZE}), got {text!r}")
    n = int(text)
    if not MIN_SIZE <= n <= MAX_SIZE:
        raise BoardError(f"pousse board size must be {MIN_SIZE}..{MAX_SIZE}, got {n}")
    return n


def _line_indexes(n: int, move: PousseMove) -> list[int]:
    """Cell indexes along the insertion line, starting at the insertion square."""
    i = move.number - 1
    if move.side == "L":
        return [i * n + c for c in range(n)]
    if move.side == "R":
        return [i * n + c for c in reversed(range(n))]
    if move.side == "T":
        return [r * n + i for r in range(n)]
    return [r * n + i for r in reversed(range(n))]


def count_straights(n: int, cells: str) -> tuple[int, int]:
    """Rows plus columns filled entirely with X, and with O."""
    x = o = 0
    full_x, full_o = "X" * n, "O" * n
    for r in range(n):
        row = cells[r * n : (r + 1) * n]
        col = cells[r::n]
        for line in (row, col):
            if line == full_x:
                x += 1
            elif line == full_o:
                o += 1
    return x, o


class Pousse(Game[PousseState, PousseMove]):
    name = "pousse"
    min_players = 2
    max_players = 2
    default_move_wall_s = 2.0  # what tourney play has always given pousse entries

    # -- boards ---------------------------------------------------------
    def default_board(self) -> str:
        return "6"  # the size of phase 1 of the 1998 tournament

    def validate_board(self, board_text: str) -> None:
        parse_size(board_text)

    # -- play -----------------------------------------------------------
    def new_game(self, board_text: str, players: int) -> PousseState:
        if players != 2:
            raise ValueError(f"pousse is a two-player game, got {players} players")
        n = parse_size(board_text)
        cells = EMPTY * (n * n)
        return PousseState(n, cells, 0, 0, frozenset({cells + "X"}))

    def to_move(self, state: PousseState) -> int:
        return state.to_move

    def legal_moves(self, state: PousseState) -> list[PousseMove]:
        if state.result is not None:
            return []
        return [PousseMove(side, i) for side in SIDES for i in range(1, state.size + 1)]

    def play(self, state: PousseState, move: PousseMove) -> PousseState:
        if state.result is not None:
            raise IllegalMove("the game is over")
        n = state.size
        if move.side not in SIDES or not 1 <= move.number <= n:
            raise IllegalMove(f"{self.format_move(move)} is off a {n}x{n} board (use L/R/T/B 1..{n})")
        mover = state.to_move
        mark = COLOURS[mover]
        line = _line_indexes(n, move)
        values = [state.cells[i] for i in line]
        pushed_off = EMPTY not in values
        gap = n - 1 if pushed_off else values.index(EMPTY)
        shifted = [mark, *values[:gap], *values[gap + 1 :]]
        cells = list(state.cells)
        for i, v in zip(line, shifted, strict=True):
            cells[i] = v
        new_cells = "".join(cells)
        markers = state.markers if pushed_off else state.markers + 1
        to_move = 1 - mover
        key = new_cells + COLOURS[to_move]

        result: Outcome | None = None
        if pushed_off and key in state.seen:
            result = _win(1 - mover, f"{mark} repeated a position")
        else:
            x, o = count_straights(n, new_cells)
            if x != o:
                winner = 0 if x > o else 1
                hi, lo = max(x, o), min(x, o)
                result = _win(winner, f"{COLOURS[winner]} has more straights ({hi} to {lo})")
        seen = state.seen | {key} if pushed_off else frozenset({key})
        return PousseState(n, new_cells, to_move, markers, seen, state.moves + 1, result)

    def outcome(self, state: PousseState) -> Outcome | None:
        return state.result

    def forfeit(self, state: PousseState, seat: int) -> PousseState:
        if state.result is not None:
            return state
        return replace(state, result=_win(1 - seat, f"{COLOURS[seat]} forfeited"))

    def adjudicate(self, state: PousseState, players: int) -> Outcome:
        """A game stopped at its configured bound still has a winner, for seed 003 says "A game
        always leads to a win by one of the two players. Draws are impossible.": the colour with
        more markers on the board; if equal, the one whose fullest row or column holds more of
        its markers (the nearer to a straight, which is what wins by the rules); if still equal,
        O, the second player (X had the first move, the game's one asymmetry)."""
        if state.result is not None:
            return state.result
        n = state.size
        x, o = state.cells.count("X"), state.cells.count("O")
        if x != o:
            winner = 0 if x > o else 1
            more = f"{COLOURS[winner]} has more markers on the board ({max(x, o)} to {min(x, o)})"
            return _win(winner, more)
        lines = [state.cells[r * n : (r + 1) * n] for r in range(n)] + [state.cells[c::n] for c in range(n)]
        bx = max(line.count("X") for line in lines)
        bo = max(line.count("O") for line in lines)
        if bx != bo:
            winner = 0 if bx > bo else 1
            return _win(
                winner,
                f"equal markers ({x} each); {COLOURS[winner]} has the fuller line "
                f"({max(bx, bo)} of {n} to {min(bx, bo)})",
            )
        return _win(1, f"equal markers ({x} each) and fullest lines ({bx} of {n}); O, the second player")

    # -- text -----------------------------------------------------------
    def render(self, state: PousseState) -> str:
        """The seed's picture: column numbers, ``+-+`` rules, row numbers."""
        n = state.size
        rule = "    +" + "-+" * n
        head = []
        if n >= 10:
            head.append("     " + " ".join(str(c // 10) if c >= 10 else " " for c in range(1, n + 1)))
        head.append("     " + " ".join(str(c % 10) for c in range(1, n + 1)))
        out = [h.rstrip() for h in head]
        out.append(rule)
        for r, row in enumerate(state.rows(), start=1):
            out.append(f"{r:>3} |" + "|".join(" " if v == EMPTY else v for v in row) + "|")
            out.append(rule)
        return "\n".join(out) + "\n"

    def parse_move(self, text: str) -> PousseMove:
        m = _MOVE_RE.fullmatch(text.strip())
        if m is None:
            raise BadMoveText(f"not a pousse move (L/R/T/B then a number, e.g. T2): {text.strip()[:40]!r}")
        index = int(m.group(2))
        if index < 1:
            raise BadMoveText(f"rows and columns are numbered from 1: {text.strip()!r}")
        return PousseMove(m.group(1), index)

    def format_move(self, move: PousseMove) -> str:
        return f"{move.side}{move.number}"


def _win(winner: int, reason: str) -> Outcome:
    scores = (1, 0) if winner == 0 else (0, 1)
    return Outcome((winner,), scores, reason)
