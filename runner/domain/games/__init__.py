"""The game registry: referees looked up by name or import path (``runner.domain.games.plugins``).

``get_game("boxing", max_box=12)`` gives a ``Game``; the keyword arguments are
the game's parameters as a config writes them (``game_params``). Every
referee is pure (see ``runner.domain.games.base``), so one instance can serve any
number of concurrent games.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Any, TypeGuard

from runner.domain.games.base import BadMoveText, BoardError, Game, IllegalMove, Outcome, RulesError
from runner.domain.games.boxing import Boxing, BoxingState, BoxMove
from runner.domain.games.mnk import Gomoku, Mnk, MnkMove, MnkState
from runner.domain.games.plugins import (
    BUILTIN_GAMES,
    ENTRY_POINT_GROUP,
    GameLoadError,
    GameParamsError,
    ParamFault,
    game_names,
    game_param_names,
    is_game_reference,
    load_game_class,
    make_game,
    same_game,
)
from runner.domain.games.pousse import Pousse, PousseMove, PousseState

if TYPE_CHECKING:  # is_chess's answer only: the module loads python-chess
    from runner.domain.games.chess import Chess

__all__ = [
    "BUILTIN_GAMES",
    "ENTRY_POINT_GROUP",
    "GAME_NAMES",
    "BadMoveText",
    "BoardError",
    "BoxMove",
    "Boxing",
    "BoxingState",
    "Game",
    "GameLoadError",
    "GameParamsError",
    "Gomoku",
    "IllegalMove",
    "Mnk",
    "MnkMove",
    "MnkState",
    "Outcome",
    "ParamFault",
    "Pousse",
    "PousseMove",
    "PousseState",
    "RulesError",
    "game_names",
    "game_params",
    "get_game",
    "is_chess",
    "is_game_reference",
    "load_game_class",
    "same_game",
]

#: the built-in games; ``game_names()`` adds the installed plugins'
GAME_NAMES: tuple[str, ...] = tuple(sorted(BUILTIN_GAMES))


def game_params(name: str) -> frozenset[str]:
    """The parameter names ``get_game(name, ...)`` accepts; raises ``ValueError`` for an unknown game."""
    return game_param_names(load_game_class(name))


def get_game(name: str, /, **params: Any) -> Game[Any, Any]:
    """The referee for ``name`` (a registered name or ``package.module:Class``) with ``params``;
    ``ValueError`` names what is wrong (``GameLoadError``, ``GameParamsError``)."""
    return make_game(name, **params)


def is_chess(game: Game[Any, Any]) -> TypeGuard[Chess]:
    """Whether ``game`` is chess (or a plugin's kind of it), without importing python-chess
    (about 70 ms of CPU): a chess referee exists only once its module is loaded."""
    module = sys.modules.get("runner.domain.games.chess")
    return module is not None and isinstance(game, module.Chess)
