"""Engines kept alive across the games of one match (``restart`` off; docs/engines.md).

Starting an engine is most of what a fast game costs: stockfish's process, its NNUE
network and its handshake take about 0.3 s here, as long as a whole game at 2,000 nodes a
move. fastchess keeps its engines alive between games by default (``-each restart=off``);
so does tourney, within one match (an opening's game pair): at the end of a game the match
loop hands a seat's host and engine protocol here instead of closing them, and the same
entry's seat in the match's next game takes them back and is told a new game starts
(``EngineProtocol.next_game``: UCI ``ucinewgame``, xboard ``new``).

The isolation rule: an engine keeps only its own state (its process, its private working
copy) between the games of its own match. The pool is keyed by entry name, lives inside one
``play_match`` call and closes whatever it still holds when that call ends (``quit``, then
the host: nothing of the match survives it), so nothing crosses between entries or matches.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

from workers.protocols.engine import EngineProtocol
from workers.sandbox.base import EntryHost


@dataclass(frozen=True)
class KeptEngine:
    """One engine between two games of its match: its host, its protocol, the argv it runs."""

    host: EntryHost
    protocol: EngineProtocol
    argv: list[str]


class KeptEngines:
    """The engines of one match waiting for their next game, by entry name."""

    def __init__(self) -> None:
        self._kept: dict[str, KeptEngine] = {}

    def keep(self, name: str, host: EntryHost, protocol: EngineProtocol) -> None:
        """Hold ``name``'s engine for the match's next game (one per entry: a second one,
        which no match plays, closes the first)."""
        old = self._kept.pop(name, None)
        if old is not None:
            _close(old)
        self._kept[name] = KeptEngine(host, protocol, list(protocol.argv))

    def take(self, name: str, protocol: str, argv: list[str]) -> KeptEngine | None:
        """``name``'s kept engine if it runs the same program the same way (a seat whose argv
        differs, e.g. by a ``{mark}`` placeholder, gets a fresh process), else None."""
        kept = self._kept.pop(name, None)
        if kept is None:
            return None
        if kept.protocol.name != protocol or kept.argv != argv:
            _close(kept)
            return None
        return kept

    def close(self) -> None:
        """Quit and close every engine still held (idempotent)."""
        while self._kept:
            _close(self._kept.popitem()[1])

    def __len__(self) -> int:
        return len(self._kept)


def _close(kept: KeptEngine) -> None:
    try:
        with contextlib.suppress(Exception):  # between games a failing quit changes no result
            kept.protocol.end()
        kept.host.close()  # no process of the engine is left after this
    finally:
        kept.protocol.close()
