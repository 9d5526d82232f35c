"""The contract every game's referee keeps.

A referee is pure: no I/O, no clock, no randomness except a seeded
``random.Random`` passed in (board generation only). States are immutable
values, so the match loop can keep every position for replays and a rerun can
compare positions move by move.

A *board* is always described by text (``board_text``): the boxing arena
itself, ``"6"`` for a 6x6 pousse board, ``"15 15 5"`` for an m,n,k board.
Text keeps boards content-addressable (the board id is a digest of the text),
storable in the run store and shippable to remote workers unchanged.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import ClassVar, Generic, TypeVar

from runner.domain.match_values import DEFAULT_MAX_MOVES
from runner.errors import EntryFault


class RulesError(EntryFault, ValueError):
    """Base of the errors a referee raises about its inputs."""


class BoardError(RulesError):
    """The board text does not describe a board of this game."""


class BadMoveText(RulesError):
    """Text that is not a move of this game at all (charged as ``bad_output``)."""


class IllegalMove(RulesError):
    """A well-formed move that the rules forbid here (charged as ``illegal_move``)."""


@dataclass(frozen=True)
class Outcome:
    """How a finished game ended by the rules.

    ``winners`` holds seat indexes (empty for a draw; one seat in every seed
    game). ``scores`` holds each seat's game score (boxing: the winner's marks,
    0 for everyone else; pousse and m,n,k: 1 for the winner, 0 otherwise).
    """

    winners: tuple[int, ...]
    scores: tuple[int, ...]
    reason: str


#: the default move bound (a config's ``bound.max_moves``, ``runner.domain.game_bound``); a game
#: stopped there is scored by ``Game.adjudicate`` and its reason says so. Kept under its old name.
MAX_MOVES = DEFAULT_MAX_MOVES

S = TypeVar("S")
M = TypeVar("M")


class Game(ABC, Generic[S, M]):
    """Rules of one game. Subclasses are stateless; all state lives in ``S``."""

    name: ClassVar[str]
    min_players: ClassVar[int] = 2
    max_players: ClassVar[int] = 2
    #: the per-move wall limit ``tourney play`` uses when not told (seed 002: one second)
    default_move_wall_s: ClassVar[float] = 1.0

    # -- boards ---------------------------------------------------------
    @abstractmethod
    def default_board(self) -> str:
        """The board text used when a config or ``tourney play`` names none."""

    @abstractmethod
    def validate_board(self, board_text: str) -> None:
        """Raise ``BoardError`` with a one-line reason if the text is no board."""

    def generate_board(self, rng: random.Random, **params: object) -> str:
        """A board made from a seeded RNG (e.g. boxing with random blocked cells)."""
        raise BoardError(f"{self.name} has no board generator")

    # -- play -----------------------------------------------------------
    @abstractmethod
    def new_game(self, board_text: str, players: int) -> S:
        """The start position for ``players`` seats; seat 0 moves first."""

    @abstractmethod
    def to_move(self, state: S) -> int:
        """Seat index of the player to move (meaningless once the game is over)."""

    @abstractmethod
    def legal_moves(self, state: S) -> list[M]:
        """Every legal move in ``state`` (empty once the game is over)."""

    @abstractmethod
    def play(self, state: S, move: M) -> S:
        """The position after the player to move plays ``move``; raises ``IllegalMove``."""

    @abstractmethod
    def outcome(self, state: S) -> Outcome | None:
        """``None`` while the game goes on; the ``Outcome`` once it is over."""

    @abstractmethod
    def forfeit(self, state: S, seat: int) -> S:
        """The position after ``seat`` is removed for a verdict against it.

        In a two-player game the other seat wins at once. In an N-player game
        the seat drops out of the rotation and play goes on among the rest;
        the last one left wins. Scores follow the game's scoring rule applied
        to the position at that moment.
        """

    def adjudicate(self, state: S, players: int) -> Outcome:
        """How a game stopped at its configured bound (``runner.domain.game_bound``) is scored,
        from the position then. ``reason`` says how, in one line ("a draw", "X has more ...").

        The default is a draw, scoring nothing: right for games whose rules know draws
        (m,n,k, connect four). A game whose rules have no draw overrides it (pousse, boxing).
        """
        return Outcome((), tuple(0 for _ in range(players)), "a draw")

    # -- text -----------------------------------------------------------
    @abstractmethod
    def render(self, state: S) -> str:
        """A human-readable picture of the position (terminal and replays)."""

    @abstractmethod
    def parse_move(self, text: str) -> M:
        """The move written as ``text`` (the form ``format_move`` gives); raises ``BadMoveText``."""

    @abstractmethod
    def format_move(self, move: M) -> str:
        """The canonical one-line text of a move, used in transcripts."""

    def position_text(self, state: S, seat: int) -> str:
        """What an entry of the generic ``text`` and ``json`` protocols reads on its turn.

        ``render`` unless a game wants entries to see something else (a view
        from ``seat``'s side, hidden information left out, a denser format).
        """
        return self.render(state)

    def seat_mark(self, state: S, seat: int) -> str:
        """The mark (one character) that ``seat`` plays with."""
        return "XO"[seat] if seat < 2 else chr(ord("A") + seat)
