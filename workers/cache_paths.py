"""Where a worker keeps what it builds (docs/deploy.md, "The worker as a service").

Everything a ``tourney worker`` writes goes under its work directory (``--work-dir``; under
systemd with ``CacheDirectory=tourney``, ``$CACHE_DIRECTORY``; else the user's XDG cache):
the artifacts and builds (``workers.executor``) and the sandbox's compiled helpers, the
launcher among them (``workers.sandbox.launcher``). A worker running as a system user with no
home directory then starts: nothing is looked for under ``~``. ``tourney run`` hands its local
workers ``$TOURNEY_CACHE_DIR`` (the user's cache), so the helpers are compiled once per machine,
not once per run directory. Kept apart (and free of imports) so the coordinator reads it
without loading the sandbox.
"""

from __future__ import annotations

import os
from pathlib import Path

#: the sandbox helpers' cache, when set (``tourney run`` sets it for its local workers)
CACHE_DIR_ENV = "TOURNEY_CACHE_DIR"
#: the worker's work directory (``tourney worker --work-dir``), set for its pool processes
WORK_DIR_ENV = "TOURNEY_WORK_DIR"
#: systemd's ``CacheDirectory=`` (the unit in docs/deploy.md)
SYSTEMD_CACHE_ENV = "CACHE_DIRECTORY"


def user_cache() -> Path:
    """The user's own cache for tourney: ``$XDG_CACHE_HOME/tourney``, else ``~/.cache/tourney``."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tourney"


def default_work_dir() -> Path:
    """A worker's work directory when ``--work-dir`` is not given: systemd's cache directory
    (``CacheDirectory=``; the first one named), else the user's cache."""
    systemd = os.environ.get(SYSTEMD_CACHE_ENV, "").split(":")[0]
    return Path(systemd) if systemd else user_cache()


def helpers_dir() -> Path:
    """Where the sandbox's helpers are compiled: ``$TOURNEY_CACHE_DIR``, else the worker's work
    directory, else the user's cache."""
    explicit = os.environ.get(CACHE_DIR_ENV) or os.environ.get(WORK_DIR_ENV)
    return Path(explicit) if explicit else user_cache()
