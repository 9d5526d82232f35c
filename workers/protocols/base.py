"""The entry protocol interface: how the referee talks to one entry.

A protocol turns positions into what the entry reads and the entry's output
into a move, through an ``EntryHost`` that it does not control (plain
subprocess or sandbox). Every entry failure comes back as a ``Verdict`` in a
``MoveReply``; only runner faults raise (``HostError``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from runner.domain.games.base import Game
from runner.domain.match_values import Limits, SearchInfo, Verdict
from runner.domain.registry import PROTOCOL_GAMES
from workers.sandbox.base import EntryHost


@dataclass(frozen=True)
class MoveReply:
    """Either a move (in the game's own move type) or a verdict against the entry."""

    move: Any | None
    verdict: Verdict | None
    wall_ms: float
    cpu_ms: float = 0.0
    #: an engine's last reported search for this move (score, depth), kept in the transcript
    search: SearchInfo | None = None


@dataclass(frozen=True)
class Seat:
    """Who the entry is in this game."""

    player: str  # entry name (charged in verdicts)
    index: int  # seat index, 0 moves first
    mark: str  # the character it plays with
    players: int = 2  # seats in this game (the json protocol's start message says it)


class EntryProtocol(ABC):
    """One entry in one game. Create with ``protocol_for(name)(...)``."""

    name: ClassVar[str]  # a name from runner.domain.registry.PROTOCOL_GAMES: the adapter registers against it
    games: ClassVar[frozenset[str]]  # game names this protocol can carry: looked up by name, never restated

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "name" in cls.__dict__:  # a concrete protocol, not an intermediate base class
            if cls.name not in PROTOCOL_GAMES:
                raise TypeError(f"{cls.__name__}: protocol {cls.name!r} is not in runner.domain.registry")
            cls.games = PROTOCOL_GAMES[cls.name]

    def __init__(self, game: Game[Any, Any], host: EntryHost, argv: list[str], seat: Seat, limits: Limits):
        self.game = game
        self.host = host
        self.argv = argv  # "{mark}" already substituted
        self.seat = seat
        self.limits = limits

    def begin(self, state: Any) -> Verdict | None:
        """Called once before the first move (persistent protocols start here)."""
        return None

    @abstractmethod
    def request_move(self, state: Any, history: list[Any]) -> MoveReply:
        """Ask the entry for its move in ``state``; ``history`` is every move so far."""

    def moved(self, seat: int, wall_ms: float) -> None:
        """Told after every move of the game (its seat, the wall time it took): engines on a
        clock keep both sides' clocks from it."""
        return None

    def end(self) -> None:
        """Called once when the game is over (persistent protocols say END)."""
        return None

    def close(self) -> None:
        """Called once after the seat's host closed, however the game ended: release what
        the protocol holds for the game (potm-arena: its arena file's lock)."""
        return None
