"""The m,n,k text protocol (docs/games.md, in the spirit of seed 003).

Run once per move: stdin line 1 is ``W H K``, then every move so far as
``x y`` (1-based column, row; X moved first); stdout is one ``x y`` line.
"""

from __future__ import annotations

from typing import Any, ClassVar

from workers.protocols.common import PerMoveProtocol, mnk_dimensions


class MnkProtocol(PerMoveProtocol):
    name: ClassVar[str] = "mnk"

    def stdin_for(self, state: Any, history: list[Any]) -> bytes:
        w, h, k = mnk_dimensions(self.board_text)
        lines = [f"{w} {h} {k}", *(self.game.format_move(m) for m in history)]
        return ("\n".join(lines) + "\n").encode()
