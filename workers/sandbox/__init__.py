"""Process hosts: where entry programs run (docs/architecture.md, row 14).

``host_factory(kind)`` picks one by the config's ``sandbox`` value from ``SANDBOXES``
(a ``runner.domain.registry.Registry``):
``"none"`` is ``PlainHostFactory`` (plain subprocesses, trusted entries
only); ``"bwrap"`` is the bubblewrap sandbox, imported only when asked for.
"""

from __future__ import annotations

from collections.abc import Callable

from runner.domain.registry import SANDBOX_KINDS, Registry
from workers.sandbox.base import EntryHost, HostError, HostFactory, InteractiveProcess, RunOutcome
from workers.sandbox.plain import PlainHost, PlainHostFactory
from workers.sandbox.plain_reuse import shared_plain_factory


def _bwrap_factory() -> HostFactory:
    # local: sandbox: none never loads the bwrap host (its launcher, cgroups, checks)
    from workers.sandbox.bwrap import BwrapHostFactory

    return BwrapHostFactory()


#: each ``sandbox:`` value (``SANDBOX_KINDS``) with what makes its host factory
SANDBOXES: Registry[Callable[[], HostFactory]] = Registry(
    "sandbox",
    {"bwrap": _bwrap_factory, "none": PlainHostFactory},
    plural="sandboxes",
    error=HostError,
)


def host_factory(kind: str) -> HostFactory:
    """The host factory for ``sandbox: kind``; ``HostError`` with the reason if it cannot work here."""
    return SANDBOXES.get(kind)()


def game_host_factory(kind: str) -> HostFactory:
    """``host_factory(kind)`` for playing matches: with ``bwrap``, this process's one
    factory whose sandboxes are reset and reused across games (``workers.sandbox.pool``;
    ``TOURNEY_SANDBOX_REUSE=0``: a new sandbox per game); with ``none``, its one factory
    keeping untouched game directories for the entry's next game
    (``workers.sandbox.plain_reuse``)."""
    if kind == "bwrap":
        # local: the pool loads the bwrap host (see host_factory)
        from workers.sandbox.pool import reuse_enabled, shared_reusing_factory

        if reuse_enabled():
            return shared_reusing_factory()
    if kind == "none":
        # local: the pool loads the bwrap host (see host_factory)
        from workers.sandbox.pool import reuse_enabled

        if reuse_enabled():
            return shared_plain_factory()
    return host_factory(kind)


__all__ = [
    "SANDBOXES",
    "SANDBOX_KINDS",
    "EntryHost",
    "HostError",
    "HostFactory",
    "InteractiveProcess",
    "PlainHost",
    "PlainHostFactory",
    "RunOutcome",
    "game_host_factory",
    "host_factory",
]
