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

from runner.contracts import Limits, Verdict
from runner.games.base import Game
from workers.sandbox.base import EntryHost


@dataclass(frozen=True)
class MoveReply:
    """Either a move (in the game's own move type) or a verdict against the entry."""

    move: Any | None
    verdict: Verdict | None
    wall_ms: float
    cpu_ms: float = 0.0


@dataclass(frozen=True)
class Seat:
    """Who the entry is in this game."""

    player: str  # entry name (charged in verdicts)
    index: int  # seat index, 0 moves first
    mark: str  # the character it plays with


class EntryProtocol(ABC):
    """One entry in one game. Create with ``protocol_for(name)(...)``."""

    name: ClassVar[str]
    games: ClassVar[frozenset[str]]  # game names this protocol can carry

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

    def end(self) -> None:
        """Called once when the game is over (persistent protocols say END)."""
        return None
