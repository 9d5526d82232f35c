"""The referees of the seed games, looked up by name.

``get_game("boxing", max_box=12)`` gives a ``Game``; the keyword arguments are
the game's parameters as a config writes them (``game_params``). Every
referee is pure (see ``runner.domain.games.base``), so one instance can serve any
number of concurrent games.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from runner.domain.games.base import BadMoveText, BoardError, Game, IllegalMove, Outcome, RulesError
from runner.domain.games.boxing import Boxing, BoxingState, BoxMove
from runner.domain.games.mnk import Gomoku, Mnk, MnkMove, MnkState
from runner.domain.games.pousse import Pousse, PousseMove, PousseState

__all__ = [
    "GAME_NAMES",
    "BadMoveText",
    "BoardError",
    "BoxMove",
    "Boxing",
    "BoxingState",
    "Game",
    "Gomoku",
    "IllegalMove",
    "Mnk",
    "MnkMove",
    "MnkState",
    "Outcome",
    "Pousse",
    "PousseMove",
    "PousseState",
    "RulesError",
    "game_params",
    "get_game",
]

# name -> (factory, the parameters it accepts)
_GAMES: dict[str, tuple[Callable[..., Game[Any, Any]], frozenset[str]]] = {
    "boxing": (Boxing, frozenset({"max_box"})),
    "pousse": (Pousse, frozenset()),
    "mnk": (Mnk, frozenset()),
    "gomoku": (Gomoku, frozenset()),
}

GAME_NAMES: tuple[str, ...] = tuple(sorted(_GAMES))


def game_params(name: str) -> frozenset[str]:
    """The parameter names ``get_game(name, ...)`` accepts; raises ``ValueError`` for an unknown game."""
    return _lookup(name)[1]


def get_game(name: str, **params: Any) -> Game[Any, Any]:
    """The referee for ``name`` with ``params``; ``ValueError`` names what is wrong."""
    factory, allowed = _lookup(name)
    unknown = sorted(set(params) - allowed)
    if unknown:
        known = ", ".join(sorted(allowed)) or "none"
        raise ValueError(f"unknown parameter(s) for {name}: {', '.join(unknown)} (known: {known})")
    return factory(**params)


def _lookup(name: str) -> tuple[Callable[..., Game[Any, Any]], frozenset[str]]:
    try:
        return _GAMES[name]
    except KeyError:
        raise ValueError(f"unknown game {name!r}; known games: {', '.join(GAME_NAMES)}") from None
