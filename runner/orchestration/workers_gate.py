"""The one module of ``runner`` that imports ``workers`` (docs/architecture.md, "Layers").

What the coordinator side needs of the workers side goes through here: the names both sides
use in Redis and the task message (``CeleryDispatcher``), playing a match in this process
(``InlineDispatcher``), the sandbox's probe and health check, building entries as a worker
does (``tourney validate``), a worker's broker URL rules, and
tidying the sandboxes' cgroups after the local workers. The import-linter contract
"one-door-to-workers" (pyproject.toml) names this module and no other.

The broker's names, the task message and the mapper of the broker's errors (``wire_errors``)
are small and every Celery run needs them: imported at the top. The rest loads inside the
function that uses it: a command that imports this module (``tourney run`` does, while its
local worker starts) does not pay for the executor, the referees or the sandbox until it
plays, builds or checks something here.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from runner.domain.match_values import MatchResult, MatchSpec
from runner.errors import InfrastructureFailure
from workers.broker_keys import KEYS, QUARANTINE_TTL_S, queue_for
from workers.broker_wire import TaskWire, wire_errors
from workers.cache_paths import CACHE_DIR_ENV, user_cache
from workers.task_message import origin

if TYPE_CHECKING:
    from runner.domain.match_values import EntryRef, Limits
    from workers.live import LiveState as LiveState

__all__ = [
    "CACHE_DIR_ENV",
    "KEYS",
    "QUARANTINE_TTL_S",
    "LocalBuild",
    "SandboxUnavailable",
    "TaskWire",
    "build_here",
    "check_broker_url",
    "check_local_sandbox",
    "execute_here",
    "first_build_error",
    "live_state",
    "origin",
    "probe_sandbox",
    "queue_for",
    "sweep_sandbox_cgroups",
    "user_cache",
    "wire_errors",
]


# -- playing a match in this process (InlineDispatcher) ------------------------------
def live_state(spec: MatchSpec, attempt: int, worker: str, on_change: Callable[[], None] | None) -> LiveState:
    """What a match played here is doing now, as a worker reports it (``workers.live``)."""
    # local: the referee loop it observes loads only where a match is played in this process
    from workers.live import LiveState

    return LiveState(spec, attempt, worker, on_change=on_change)


def execute_here(
    spec: MatchSpec, fetch: Callable[[str], bytes], cache_dir: Path, *, worker: str, observer: LiveState
) -> MatchResult:
    """Play ``spec`` in this process, as a worker plays it (``workers.executor.execute_match``)."""
    # local: the executor (referees, protocols, sandbox: about 0.2 s) loads only for a match played here
    from workers.executor import execute_match

    return execute_match(spec, fetch, cache_dir, worker=worker, observer=observer)


# -- what the coordinator side asks of this machine's workers side ----------------------
class SandboxUnavailable(InfrastructureFailure):
    """Entries cannot be isolated here with the sandbox asked for (exit 3, as a worker whose
    sandbox fails its health check)."""


#: the run's start imports workers' modules in the health check's thread while its main thread
#: goes on: one thread at a time, since two threads importing modules of
#: ``workers.sandbox``, which import each other, can deadlock (Python's import then raises
#: ``_DeadlockError``: seen once in about a hundred runs at a load of 13)
_importing = threading.Lock()


def probe_sandbox(kind: str) -> str:
    """Fail early, with the sandbox's own message, if entries cannot be isolated here;
    else say how the sandboxes' memory is charged ("memory: cgroup v1", or why
    it is "memory: rlimit only" and how to fix that)."""
    with _importing:
        # local: the sandbox (about 0.1 s) loads only when a run or rerun probes it, after its start
        from workers.sandbox import HostError, host_factory
        from workers.sandbox.cgroups import sandbox_memory_note

    try:
        factory = host_factory(kind)  # the bwrap factory probes the machine; HostError says why not
    except HostError as e:
        raise SandboxUnavailable(f"sandbox {kind} unavailable: {e}") from e
    return sandbox_memory_note() if factory.name == "bwrap" else ""


@dataclass(frozen=True)
class LocalBuild:
    """One entry built here as a worker builds it (``build_here``)."""

    built_dir: Path | None  # the built entry directory; None when its build failed
    failure: str = ""  # why not: the build's one line (how it ended, its first error lines)
    first_error: str = ""  # the compiler's first error-like line, if it printed one


def build_here(
    entries: Mapping[str, tuple[EntryRef, Path]], sandbox: str, limits: Limits, cache_root: Path
) -> dict[str, LocalBuild]:
    """Build each entry (name -> its ref and directory) into ``cache_root`` in ``sandbox``,
    the way a worker builds it before its first match (``workers.artifacts.ArtifactCache``);
    ``SandboxUnavailable`` if the sandbox cannot run here."""
    # local: the artifact cache and the sandbox (about 0.3 s) load only for `tourney validate --build`
    from workers.artifacts import ArtifactCache, BuildFailed, error_lines, local_fetch
    from workers.sandbox import HostError, host_factory

    try:
        hosts = host_factory(sandbox)
    except HostError as e:
        raise SandboxUnavailable(f"sandbox {sandbox} unavailable: {e}") from e
    cache = ArtifactCache(cache_root, hosts, limits)
    fetch = local_fetch({ref.digest: path for ref, path in entries.values()})
    out: dict[str, LocalBuild] = {}
    for name, (ref, _) in entries.items():
        got = cache.ensure(ref, fetch)
        if isinstance(got, BuildFailed):
            first = error_lines(got.log, 1)
            out[name] = LocalBuild(None, got.detail.split(" (full log:")[0], first[0] if first else "")
        else:
            out[name] = LocalBuild(got)
    return out


def first_build_error(build_log: str) -> str:
    """The compiler's first error-like line of a build log, as ``tourney validate --build`` quotes
    it ("" when none looks like one): the submission server shows it on a failed build."""
    # local: the artifact cache (sandbox, psutil) loads only where a build log is read
    from workers.artifacts import error_lines

    first = error_lines(build_log, 1)
    return first[0] if first else ""


def check_local_sandbox(kind: str) -> str:
    """The health check a worker makes at start (``workers.preflight``: a sandboxed C build
    and move), made once here for all the local workers of a run, which skip their own;
    ``SandboxUnavailable`` with its one line if it fails. Returns what ``probe_sandbox`` does."""
    with _importing:
        # local: the health check (about 0.1 s) loads in its own thread, after the local workers start
        from workers.preflight import PreflightFailed, check_sandbox

    try:
        check_sandbox(kind)
    except PreflightFailed as e:
        raise SandboxUnavailable(str(e)) from e
    return probe_sandbox(kind) if kind != "none" else ""


def check_broker_url(url: str) -> None:
    """The rules a worker applies to a broker URL (a password, a known scheme), applied
    before a run starts; ``BrokerURLError`` (a ``UsageError``) if it breaks them."""
    # local: the worker's command line (about 0.25 s) loads only for `tourney run --broker`
    from workers.worker_cli import check_broker_url as worker_check

    worker_check(url, allow_no_password=False, command="run")


def sweep_sandbox_cgroups() -> None:
    """Remove the sandbox cgroups of worker processes that are gone (a pool process killed
    with sandboxes kept for reuse leaves their cgroups; only a dead owner's are removed)."""
    # local: the cgroup code (about 0.1 s) loads only as the local workers stop
    from workers.sandbox.cgroups import shared_cgroups

    with contextlib.suppress(Exception):  # tidying up: never the reason a run fails
        shared_cgroups().sweep()


@dataclass(frozen=True)
class EngineEntry:
    """A chess engine entry as the run starts it (``workers.engine_probe.EngineToProbe``)."""

    name: str
    protocol: str
    path: Path
    run: list[str]
    engine: dict[str, object]


def engine_problems(
    engines: list[EngineEntry],
    game: str,
    game_params: Mapping[str, object],
    board_text: str,
    sandbox: str,
    limits: Limits,
) -> list[str]:
    """Start every engine once and greet it as a game would: one line for each that cannot
    start or cannot play the game as asked (docs/engines.md, "Before a run")."""
    # local: the probe (the protocols, about 0.1 s) loads only for a run with engines
    from workers.engine_probe import EngineToProbe
    from workers.engine_probe import engine_problems as probe

    to_probe = [EngineToProbe(e.name, e.protocol, e.path, list(e.run), dict(e.engine)) for e in engines]
    return probe(to_probe, game, dict(game_params), board_text, sandbox, limits)
