"""Finding a game's referee class: built-in names, installed plugins, import paths.

A game reference (a config's ``game:``, ``tourney play --game``, an entry's
``game:``) is one of

- a built-in name (``boxing``, ``pousse``, ``mnk``, ``gomoku``),
- a name an installed distribution registers under the entry-point group
  ``tourney.games`` (``connect4 = "connect4.game:Connect4"`` in its
  ``pyproject.toml``),
- an import path ``package.module:ClassName``.

All three resolve the same way: to an import path, imported and checked to
be a concrete subclass of ``runner.domain.games.base.Game``. The built-in games are
nothing but a table of import paths (``BUILTIN_GAMES``) read before the
entry points, so they cannot be shadowed by a plugin.

Game parameters (``game_params``) are the keyword parameters of the class's
constructor, validated against its annotations with pydantic before the
constructor runs, so a wrong parameter is reported at its own place
(``game_params.rows``) rather than as a ``TypeError`` from deep inside.

Errors (all ``ValueError``, the registry's old contract):
``GameLoadError`` for a reference that names no usable class (its message
names the import path and the import error), ``GameParamsError`` for
parameters the constructor does not accept (one located message per fault).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from runner.domain.games.base import Game
from runner.domain.registry import Registry
from runner.errors import UsageError

if TYPE_CHECKING:  # imported where used: a worker building a game without parameters skips pydantic
    from pydantic import BaseModel

#: the entry-point group installed packages register their games under
ENTRY_POINT_GROUP = "tourney.games"

#: the seed games: registered exactly as a plugin is, by import path
BUILTIN_GAMES: Mapping[str, str] = MappingProxyType(
    {
        "boxing": "runner.domain.games.boxing:Boxing",
        "chess": "runner.domain.games.chess:Chess",
        "gomoku": "runner.domain.games.mnk:Gomoku",
        "mnk": "runner.domain.games.mnk:Mnk",
        "pousse": "runner.domain.games.pousse:Pousse",
    }
)

_IMPORT_PATH = re.compile(r"[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*:[A-Za-z_][\w]*(\.[A-Za-z_][\w]*)*")

Loc = tuple[str | int, ...]


class GameLoadError(UsageError, ValueError):
    """A game reference that names no usable ``Game`` class."""


@dataclass(frozen=True)
class ParamFault:
    """One thing wrong with ``game_params``: where (below ``game_params``) and what."""

    loc: Loc
    message: str


class GameParamsError(UsageError, ValueError):
    """``game_params`` the game's constructor does not accept; ``faults`` are located."""

    def __init__(self, game: str, faults: list[ParamFault]):
        self.game = game
        self.faults = faults
        parts = [f"{'.'.join(map(str, f.loc))}: {f.message}" if f.loc else f.message for f in faults]
        super().__init__(f"game_params for {game}: " + "; ".join(parts))


def is_import_path(reference: str) -> bool:
    """Whether ``reference`` has the form ``package.module:ClassName``."""
    return _IMPORT_PATH.fullmatch(reference) is not None


@functools.lru_cache(maxsize=1)
def plugin_games() -> Mapping[str, str]:
    """Names installed distributions register under ``tourney.games``, with their import paths.

    Read once per process: plugins are installed before a run, not during one.
    """
    # local: importlib.metadata (and the scan of every installed distribution) only where a
    # name that is no built-in game is looked up
    from importlib.metadata import entry_points

    found: dict[str, str] = {}
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name not in BUILTIN_GAMES:  # a plugin cannot replace a seed game
            found.setdefault(ep.name, ep.value)
    return MappingProxyType(found)


def game_registry() -> Registry[str]:
    """Every registered game, name -> import path: the built-in ones and the installed
    plugins', sorted by name."""
    return _games_with(tuple(plugin_games().items()))


@functools.lru_cache(maxsize=1)
def _games_with(plugins: tuple[tuple[str, str], ...]) -> Registry[str]:
    # keyed by the plugins found, so a fresh read of them (plugin_games.cache_clear) gives a fresh registry
    return Registry(
        "game",
        sorted({**dict(plugins), **BUILTIN_GAMES}.items()),
        error=GameLoadError,
        hint="(or an import path package.module:ClassName)",
    )


def game_names() -> tuple[str, ...]:
    """Every registered game name: the built-in ones and the installed plugins', sorted."""
    return game_registry().names()


def is_game_reference(reference: str) -> bool:
    """Whether ``reference`` could name a game (a registered name or an import path), without importing."""
    return reference in BUILTIN_GAMES or reference in game_registry() or is_import_path(reference)


def import_path_of(reference: str) -> str:
    """The import path a game reference stands for; ``GameLoadError`` for an unknown name."""
    if reference in BUILTIN_GAMES:  # a plugin cannot replace one: no need to read the plugins
        return BUILTIN_GAMES[reference]
    games = game_registry()
    if reference not in games and is_import_path(reference):
        return reference
    return games.get(reference)


def same_game(a: str, b: str) -> bool:
    """Whether two game references name the same game (``connect4`` and ``connect4.game:Connect4``)."""
    if a == b:
        return True
    try:
        return import_path_of(a) == import_path_of(b)
    except GameLoadError:
        return False


@functools.lru_cache(maxsize=64)
def load_game_class(reference: str) -> type[Game[Any, Any]]:
    """The ``Game`` subclass ``reference`` names, imported; ``GameLoadError`` says what went wrong."""
    path = import_path_of(reference)
    module_name, _, qualname = path.partition(":")
    named = f"game {reference!r}" if reference == path else f"game {reference!r} ({path})"
    try:
        module = importlib.import_module(module_name)
    except Exception as e:  # any import failure is the plugin's, reported with its cause
        raise GameLoadError(f"{named}: cannot import {module_name}: {type(e).__name__}: {e}") from e
    obj: Any = module
    for part in qualname.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise GameLoadError(f"{named}: module {module_name} has no {qualname}") from None
    if not (isinstance(obj, type) and issubclass(obj, Game)):
        raise GameLoadError(f"{named}: {path} is not a subclass of runner.domain.games.base.Game")
    if inspect.isabstract(obj):
        missing = ", ".join(sorted(getattr(obj, "__abstractmethods__", ())))
        raise GameLoadError(f"{named}: {path} does not define {missing}")
    if not isinstance(getattr(obj, "name", None), str):
        raise GameLoadError(f"{named}: {path} has no class attribute 'name' (a str)")
    return obj


@functools.lru_cache(maxsize=64)
def params_model(cls: type[Game[Any, Any]]) -> type[BaseModel]:
    """A pydantic model of ``cls``'s constructor keywords (annotations and defaults as written)."""
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:  # unresolvable annotations: accept any value rather than refuse the game
        hints = {}
    fields: dict[str, Any] = {}
    for p in inspect.signature(cls).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY):
            continue
        default = ... if p.default is p.empty else p.default
        fields[p.name] = (hints.get(p.name, Any), default)
    from pydantic import ConfigDict, create_model

    config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)
    model: type[BaseModel] = create_model(f"{cls.__name__}Params", __config__=config, **fields)
    return model


@functools.lru_cache(maxsize=64)
def _required_params(cls: type[Game[Any, Any]]) -> tuple[str, ...]:
    """The constructor keywords ``params_model`` would require (no default)."""
    return tuple(
        p.name
        for p in inspect.signature(cls).parameters.values()
        if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD, p.POSITIONAL_ONLY) and p.default is p.empty
    )


def game_param_names(cls: type[Game[Any, Any]]) -> frozenset[str]:
    return frozenset(params_model(cls).model_fields)


def validated_params(reference: str, cls: type[Game[Any, Any]], params: Mapping[str, Any]) -> dict[str, Any]:
    """``params`` checked against ``cls``'s constructor: those given, converted to the annotated types."""
    if not params and not _required_params(cls):
        return {}  # what the model would say (nothing given, nothing missing), without building it
    from pydantic import ValidationError

    model = params_model(cls)
    try:
        checked = model.model_validate(dict(params))
    except ValidationError as e:
        known = ", ".join(sorted(model.model_fields)) or "none"
        faults = []
        for err in e.errors():
            if err["type"] == "extra_forbidden":
                msg = f"unknown parameter {err['loc'][0]!s} for {reference} (known: {known})"
            else:
                msg = err["msg"]
            faults.append(ParamFault(tuple(err["loc"]), msg))
        raise GameParamsError(reference, faults) from None
    return {name: getattr(checked, name) for name in checked.model_fields_set}


def make_game(reference: str, /, **params: Any) -> Game[Any, Any]:
    """The referee ``reference`` names, built with ``params``; every error is a ``ValueError``.

    A constructor's own ``ValueError``/``TypeError`` (a value its annotation allows but the
    game refuses, e.g. ``max_box=0``) becomes a ``GameParamsError`` too.
    """
    cls = load_game_class(reference)
    kwargs = validated_params(reference, cls, params)
    try:
        return cls(**kwargs)
    except GameParamsError:
        raise
    except (ValueError, TypeError) as e:
        raise GameParamsError(reference, [ParamFault((), str(e))]) from e
