"""ICFP'98 ``runme`` protocol (seed 003, docs/games.md).

``./runme`` runs with the entry's private working copy as cwd (so its
``support/`` state lives for one game only); stdin is N on the first line,
then every move so far, one per line; stdout is one move line (``T1``) and
nothing else: a second non-blank line is ``bad_output`` (blank lines are ignored).
"""

from __future__ import annotations

from typing import Any, ClassVar

from workers.protocols.common import PerMoveProtocol, board_numbers


class Icfp98Protocol(PerMoveProtocol):
    name: ClassVar[str] = "icfp98"
    # a second non-blank line is refused, blank lines ignored (docs/config.md, seed 003 readings)
    single_line: ClassVar[str] = (
        'seed 003: "The program\'s sole output, on standard output, is a single line"'
    )

    def stdin_for(self, state: Any, history: list[Any]) -> bytes:
        size = board_numbers(self.board_text)[0]
        lines = [str(size), *(self.game.format_move(m) for m in history)]
        return ("\n".join(lines) + "\n").encode()
