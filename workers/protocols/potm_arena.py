"""POTM arena protocol (seed 002; docs/architecture.md, row 13).

``a.out MARK`` reads the arena on stdin and writes the arena back with one
new square box of its mark. The referee compares the two arenas (the game's
``move_from_output``), so the entry's whole output is the move: a wrong size
or stray characters are ``bad_output``; a well-formed arena whose new box is
not a legal move is ``illegal_move``.

The entry keeps its state in ``/tmp/arena.<MARK>``: on a host that shares the
machine's ``/tmp`` the protocol holds that file for the game (``arena_lock``).
"""

from __future__ import annotations

from typing import Any, ClassVar, Protocol, runtime_checkable

from runner.domain.games.base import BadMoveText, IllegalMove
from runner.domain.match_values import VerdictKind
from workers.protocols.arena_lock import ArenaHold
from workers.protocols.base import MoveReply
from workers.protocols.common import TextBoardProtocol
from workers.sandbox.classify import verdict_of


@runtime_checkable
class ArenaGame(Protocol):
    """What a game must offer to be played through arena files (boxing does)."""

    def arena_text(self, state: Any) -> str: ...

    def move_from_output(self, state: Any, text: str | bytes) -> Any: ...


class PotmArenaProtocol(TextBoardProtocol):
    name: ClassVar[str] = "potm-arena"
    #: this game's hold on the machine's arena file (None: the host's /tmp is the game's own)
    _arena: ArenaHold | None = None

    def _arena_game(self) -> ArenaGame:
        game = self.game
        if not isinstance(game, ArenaGame):
            raise TypeError(f"game {game.name!r} has no arena text; it cannot use the potm-arena protocol")
        return game

    def begin(self, state: Any) -> None:
        self._arena_game()  # fail before the first move, not in the middle of a game
        if self.host.shares_machine_tmp:
            self._arena = ArenaHold.take(self.seat.mark)
        return None

    def close(self) -> None:
        if self._arena is not None:
            self._arena.release()
            self._arena = None

    def request_move(self, state: Any, history: list[Any]) -> MoveReply:
        game = self._arena_game()
        outcome = self.host.run(self.argv, game.arena_text(state).encode(), self.limits)
        verdict = verdict_of(outcome, self.seat.player)
        if verdict is not None:
            return MoveReply(None, verdict, outcome.wall_ms, outcome.cpu_ms)
        if not outcome.stdout.strip():
            return self.fail(VerdictKind.NO_OUTPUT, "printed no arena", outcome)
        try:
            # bytes: the seed counts the arena in bytes (528 for 32x16)
            move = game.move_from_output(state, outcome.stdout)
        except BadMoveText as e:
            return self.fail(VerdictKind.BAD_OUTPUT, str(e), outcome)
        except IllegalMove as e:
            return self.fail(VerdictKind.ILLEGAL_MOVE, str(e), outcome)
        return MoveReply(move, None, outcome.wall_ms, outcome.cpu_ms)
