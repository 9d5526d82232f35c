"""Names the coordinator and the workers agree on, each defined here once, and the one
shape every registry has (``Registry``).

They live on the runner side because imports run one way (workers may import
runner, never the reverse): the config checks read them, and
``workers.protocols`` / ``workers.sandbox`` register their implementations
against them (``tests/core/test_registry.py`` checks both sides match).

The registries themselves have their own homes, each a ``Registry`` (name ->
implementation): games in ``runner.domain.games.plugins.game_registry`` (import
paths), planners in ``runner.domain.stages.PLANNERS`` (named by the stage models
of ``runner.domain.stage_models``), protocols in ``workers.protocols.PROTOCOLS``,
sandboxes in ``workers.sandbox.SANDBOXES``. Rank keys are a literal in
``runner.domain.scoring``.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable, ItemsView, Iterable, Iterator, Mapping
from types import MappingProxyType
from typing import Generic, Literal, TypeVar, get_args

T = TypeVar("T")


class Registry(Generic[T]):
    """Names mapped to their implementations: games, protocols, sandboxes and planners all
    have this one shape (docs/architecture.md, "Where to change what").

    ``get(name)`` is the one lookup; an unknown name raises ``error`` (each registry
    keeps the exception type its callers catch) with one message that names what
    was asked for and lists the known names, so a config check or a command can
    print it after its ``file:line:`` as it is. ``names()`` are the names in
    registration order, for docs and config checks.
    """

    def __init__(
        self,
        noun: str,
        members: Mapping[str, T] | Iterable[tuple[str, T]],
        *,
        plural: str = "",
        error: Callable[[str], Exception] = KeyError,
        hint: str = "",
    ) -> None:
        self.noun = noun
        self.plural = plural or f"{noun}s"
        self.error = error
        self.hint = hint  # what else a name may be, e.g. a game's import path
        self._members: Mapping[str, T] = MappingProxyType(dict(members))

    def get(self, name: str) -> T:
        """The implementation registered as ``name``; ``error`` (see ``unknown``) if none is."""
        try:
            return self._members[name]
        except KeyError:
            raise self.error(self.unknown(name)) from None

    def unknown(self, name: str) -> str:
        """The message for a name nothing is registered under."""
        hint = f" {self.hint}" if self.hint else ""
        return f"unknown {self.noun} {name!r}; known {self.plural}: {', '.join(sorted(self._members))}{hint}"

    def names(self) -> tuple[str, ...]:
        return tuple(self._members)

    def items(self) -> ItemsView[str, T]:
        return self._members.items()

    def __contains__(self, name: object) -> bool:
        return name in self._members

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def __repr__(self) -> str:
        return f"Registry({self.noun!r}, {list(self._members)!r})"


#: entry protocols (``entry.yaml``'s ``protocol``) and the games each can carry, in documentation order
PROTOCOL_GAMES: Mapping[str, frozenset[str]] = MappingProxyType(
    {
        "potm-arena": frozenset({"boxing"}),
        "icfp98": frozenset({"pousse"}),
        "mnk": frozenset({"mnk", "gomoku"}),
        "gomocup": frozenset({"mnk", "gomoku"}),
        # the generic protocols carry every game, plugins included: see GENERIC_PROTOCOLS
        "text": frozenset(),
        "json": frozenset(),
        # chess engines (docs/engines.md): persistent, on the engine protocol base
        "uci": frozenset({"chess"}),
        "xboard": frozenset({"chess"}),
    }
)
PROTOCOL_NAMES: tuple[str, ...] = tuple(PROTOCOL_GAMES)
#: chess engine protocols: their entries carry ``EngineSettings`` (clock, options; docs/engines.md)
ENGINE_PROTOCOLS: frozenset[str] = frozenset({"uci", "xboard"})
#: protocols that speak through the game's own texts (``position_text``, ``parse_move``), so any game fits
GENERIC_PROTOCOLS: frozenset[str] = frozenset({"text", "json"})


def protocol_carries(protocol: str, game: str) -> bool:
    """Whether entries of ``protocol`` can play ``game`` (a game's ``name``, or a config's reference)."""
    return protocol in GENERIC_PROTOCOLS or game in PROTOCOL_GAMES.get(protocol, frozenset())


#: where entries run: the bubblewrap sandbox, or plain processes (trusted entries only)
SandboxKind = Literal["bwrap", "none"]
SANDBOX_KINDS: tuple[str, ...] = get_args(SandboxKind)


def unsandboxed_warning(as_root: bool) -> str:
    """What ``sandbox: none`` does not protect, said once at start wherever its entries run
    (docs/sandbox.md): as root they run as the sandbox user, which cannot read the organiser's
    keys, the broker password or the run (workers/sandbox/plain_user.py); otherwise as us."""
    if as_root:
        return (
            "warning: sandbox: none: entries run as user nobody (uid 65534), unsandboxed: they cannot "
            "read the organiser's keys, the broker password or the run directory, but see the "
            "machine's files, network and processes, and each other's games; trusted entries only"
        )
    return (
        "warning: sandbox: none: entries run with the organiser's rights (they can read its files, "
        "key files and broker password: run as root to have them run as another user, or use "
        "sandbox: bwrap); trusted entries only"
    )


#: said once at start wherever ``sandbox: none`` entries are run (docs/config.md)
UNSANDBOXED_WARNING = unsandboxed_warning(os.geteuid() == 0)

#: the environment variable that carries the broker URL to workers (never their command line)
BROKER_ENV = "TOURNEY_BROKER_URL"
#: read-only host paths a worker adds to every sandbox (colon-separated absolute paths, e.g.
#: a language runtime under /opt): the worker's own policy, set where it starts
#: (``tourney worker --sandbox-bind``, or ``tourney run`` from the config's
#: ``sandbox_binds`` for its local and inline workers), never taken from a task
SANDBOX_BINDS_ENV = "TOURNEY_SANDBOX_BINDS"
#: what a bind may never show: homes, run and service data, kernel and device trees
SANDBOX_BIND_REFUSED: tuple[str, ...] = (
    "/home",
    "/root",
    "/var",
    "/srv",
    "/mnt",
    "/run",
    "/tmp",
    "/proc",
    "/sys",
    "/dev",
    "/media",
    "/boot",
)


def bind_path(path: str) -> str:
    """``path`` as the kernel resolves its spelling: repeated slashes (``//root``: POSIX lets
    ``normpath`` keep two leading ones), ``.`` and a trailing slash gone."""
    norm = posixpath.normpath(path)
    return "/" + norm.lstrip("/") if norm.startswith("/") else norm


def sandbox_bind_problem(path: str, *, resolve: bool = True) -> str | None:
    """Why ``path`` cannot be shown read-only to entries (None: it can). Compared once spelled
    as the kernel reads it (``bind_path``: ``//root``, ``/./root``, ``/root/`` are ``/root``),
    and, with ``resolve``, once more where its links lead on this machine (``/opt/x`` linking to
    ``/root`` is ``/root``); ``..`` is refused outright."""
    if not path.startswith("/") or ".." in path.split("/"):
        return f"{path!r} is not an absolute path without '..'"
    norm = bind_path(path)
    real = bind_path(os.path.realpath(norm)) if resolve else norm
    for shown, where in ((norm, ""), (real, f" (where {norm} leads)")):
        if shown == "/":
            return f"{shown}{where} would show the whole machine"
        for refused in SANDBOX_BIND_REFUSED:
            if shown == refused or shown.startswith(refused + "/"):
                return f"{shown}{where} is under {refused}, which entries must never see"
    return None


def merged_binds(current: str, extra: list[str]) -> str:
    """``SANDBOX_BINDS_ENV``'s value with ``extra`` added (each path once, order kept)."""
    parts = [p for p in current.split(":") if p]
    return ":".join(dict.fromkeys([*parts, *extra]))
