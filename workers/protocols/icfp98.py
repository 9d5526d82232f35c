"""ICFP'98 ``runme`` protocol (seed 003, DESIGN §4.2).

``./runme`` runs with the entry's private working copy as cwd (so its
``support/`` state lives for one game only); stdin is N on the first line,
then every move so far, one per line; stdout is one move line (``T1``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from workers.protocols.common import PerMoveProtocol, board_numbers


class Icfp98Protocol(PerMoveProtocol):
    name: ClassVar[str] = "icfp98"

    def stdin_for(self, state: Any, history: list[Any]) -> bytes:
        size = board_numbers(self.board_text)[0]
        lines = [str(size), *(self.game.format_move(m) for m in history)]
        return ("\n".join(lines) + "\n").encode()
