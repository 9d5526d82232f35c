"""Entry protocols (docs/architecture.md): how the referee talks to an entry.

``PROTOCOLS`` (a ``runner.domain.registry.Registry``) holds them by ``entry.yaml`` protocol name
(made at its first use: it loads the engine protocols, and with them python-chess);
``protocol_class(name)`` gives the class for one;
``make_protocol`` builds one for a seat of a game. Every protocol here also
takes the board text by keyword (the header some protocols send).
"""

from __future__ import annotations

import functools
import importlib
from collections.abc import Sequence
from typing import Any

from runner.domain.games.base import Game
from runner.domain.match_values import Limits
from runner.domain.registry import PROTOCOL_NAMES, Registry, protocol_carries
from workers.protocols.base import EntryProtocol, MoveReply, Seat
from workers.protocols.common import TextBoardProtocol
from workers.protocols.engine import EngineProtocol
from workers.protocols.gomocup import GomocupProtocol
from workers.protocols.icfp98 import Icfp98Protocol
from workers.protocols.json_lines import JsonProtocol
from workers.protocols.mnk import MnkProtocol
from workers.protocols.potm_arena import PotmArenaProtocol
from workers.protocols.text import TextProtocol
from workers.sandbox.base import EntryHost

#: the protocols whose modules load with this package
_PLAIN: dict[str, type[TextBoardProtocol]] = {
    cls.name: cls
    for cls in (PotmArenaProtocol, Icfp98Protocol, MnkProtocol, GomocupProtocol, TextProtocol, JsonProtocol)
}
#: the engine protocols speak chess: their modules load python-chess (its attack tables, about
#: 50 ms of CPU), which a worker or a ``tourney play`` of any other game never needs. So they
#: load at their first use, each as ``(module, class)``.
_ENGINES = {
    "uci": ("workers.protocols.uci", "UciProtocol"),
    "xboard": ("workers.protocols.xboard", "XboardProtocol"),
}


def _engine_protocol(name: str) -> type[TextBoardProtocol]:
    module, cls = _ENGINES[name]
    found: type[TextBoardProtocol] = getattr(importlib.import_module(module), cls)
    return found


@functools.cache
def _registry() -> Registry[type[TextBoardProtocol]]:
    """Every protocol by name, in ``runner.domain.registry``'s order (the engine ones loaded)."""
    return Registry(
        "protocol",
        ((name, _PLAIN[name] if name in _PLAIN else _engine_protocol(name)) for name in PROTOCOL_NAMES),
    )


def protocol_class(name: str) -> type[TextBoardProtocol]:
    """The protocol class named ``name`` in ``entry.yaml``; ``KeyError`` says which exist."""
    if name in _PLAIN:
        return _PLAIN[name]
    if name in _ENGINES:
        return _engine_protocol(name)
    return _registry().get(name)  # unknown: the registry's error names every protocol


def __getattr__(name: str) -> Any:
    """``PROTOCOLS`` (the whole registry) and the engine protocols' classes, loaded when asked."""
    if name == "PROTOCOLS":
        return _registry()
    for protocol, (_, cls) in _ENGINES.items():
        if name == cls:
            return _engine_protocol(protocol)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


#: the name the protocol base class's docstring uses
protocol_for = protocol_class


def make_protocol(
    name: str,
    game: Game[Any, Any],
    host: EntryHost,
    argv: list[str],
    seat: Seat,
    limits: Limits,
    board_text: str,
    engines: Sequence[dict[str, Any]] = (),
) -> EntryProtocol:
    """A protocol instance for one seat of one game, after checking it can carry the game.
    ``engines`` are every seat's engine settings (``EntryRef.engine``), for engine protocols."""
    cls = protocol_class(name)
    if not protocol_carries(name, game.name):
        plays = ", ".join(sorted(cls.games))
        raise ValueError(f"protocol {name!r} cannot play {game.name!r} (it plays {plays})")
    if issubclass(cls, EngineProtocol):
        return cls(game, host, argv, seat, limits, board_text=board_text, engines=engines)
    return cls(game, host, argv, seat, limits, board_text=board_text)


__all__ = [
    "PROTOCOLS",
    "EngineProtocol",
    "EntryProtocol",
    "GomocupProtocol",
    "Icfp98Protocol",
    "JsonProtocol",
    "MnkProtocol",
    "MoveReply",
    "PotmArenaProtocol",
    "Seat",
    "TextProtocol",
    "UciProtocol",
    "XboardProtocol",
    "make_protocol",
    "protocol_class",
    "protocol_for",
]
