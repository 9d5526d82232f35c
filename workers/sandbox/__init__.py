"""Process hosts: where entry programs run (DESIGN §7).

``host_factory(kind)`` picks one by the config's ``sandbox`` value:
``"none"`` is ``PlainHostFactory`` (plain subprocesses, trusted entries
only); ``"bwrap"`` is the bubblewrap sandbox, imported only when asked for.
"""

from __future__ import annotations

import importlib

from runner.domain.registry import SANDBOX_KINDS
from workers.sandbox.base import EntryHost, HostError, HostFactory, InteractiveProcess, RunOutcome
from workers.sandbox.plain import PlainHost, PlainHostFactory


def host_factory(kind: str) -> HostFactory:
    """The host factory for ``sandbox: kind``; ``HostError`` with the reason if it cannot work here."""
    if kind == "none":
        return PlainHostFactory()
    if kind == "bwrap":
        try:
            # imported by name: the sandbox module is optional at this layer
            module = importlib.import_module("workers.sandbox.bwrap")
        except ModuleNotFoundError as e:
            if e.name != "workers.sandbox.bwrap":
                raise
            raise HostError(
                "the bwrap sandbox is not available in this installation; "
                "use 'sandbox: none' (--sandbox none) for trusted entries only"
            ) from e
        factory: HostFactory = module.BwrapHostFactory()
        return factory
    raise HostError(f"unknown sandbox {kind!r}; expected one of {', '.join(SANDBOX_KINDS)}")


__all__ = [
    "SANDBOX_KINDS",
    "EntryHost",
    "HostError",
    "HostFactory",
    "InteractiveProcess",
    "PlainHost",
    "PlainHostFactory",
    "RunOutcome",
    "host_factory",
]
