"""The generic ``text`` protocol (docs/games.md): any game, one process per move.

The entry is started with its ``run`` argv (``{mark}`` substituted), reads
on stdin the game's ``position_text(state, seat)`` (``render`` unless the
game says otherwise) and prints its move on the first non-blank line of
stdout, in the form the game's ``parse_move`` reads. Limits, sandbox and
verdicts are those of every per-move protocol (``PerMoveProtocol``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from workers.protocols.common import PerMoveProtocol


class TextProtocol(PerMoveProtocol):
    name: ClassVar[str] = "text"

    def stdin_for(self, state: Any, history: list[Any]) -> bytes:
        text = self.game.position_text(state, self.seat.index)
        return (text if text.endswith("\n") else text + "\n").encode()
