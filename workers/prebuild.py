"""Build a run's entries into a local worker's cache before the worker asks (issue 13).

``tourney run`` starts its local workers, then spends half a second on its own
set-up while they import and start Celery; their first match would then build
its entries (``cc -O2``: a few tenths of a second on the run's critical path,
while every later match takes a few tens of milliseconds). The coordinator
builds them meanwhile, into the workers' own caches, so that the first match
plays at once.

The build is the worker's own, made in another process:

* the same cache (``workers.artifacts.ArtifactCache`` under the worker's
  ``workers.executor.artifacts_dir``), so the cache's flock makes it one build:
  a worker that asks for an entry while it is being built here waits for that
  build, and a build the worker made first is not made again here;
* the same sandbox kind and limits the worker's policy (``workers.policy``)
  makes of the run's config, and the same ``run_build`` (the worker's reusing
  host factories hand builds to the plain ``host_factory`` of their kind);
* a failed build is cached as the worker caches it (same ``build_failed``
  line, naming the same log path), so every match charges it the same way.

A build made here carries a ``prebuilt`` marker with its conditions (sandbox
kind, build limits, extra binds): a worker whose own conditions differ does
not take it and builds again, as it would have without this.

Left to the worker, as before: a build command with placeholders (its cache
key depends on each match's board), and everything when the config asks for
exclusive cores (a build here would share a core with a match being timed).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from runner.domain.match_values import EntryRef, Limits
from runner.domain.placeholders import has_placeholders
from workers.artifacts import ArtifactCache, cache_key
from workers.executor import artifacts_dir
from workers.policy import PolicyRefused, WorkerPolicy
from workers.sandbox import host_factory

log = logging.getLogger("tourney.prebuild")


@dataclass(frozen=True)
class PrebuildPlan:
    """What to build ahead of the workers, and how (as their policy would)."""

    #: one per cache key, in the order the first matches are likely to need them
    entries: tuple[EntryRef, ...]
    #: the workers' build caches (``artifacts_dir`` of each work directory)
    cache_roots: tuple[Path, ...]
    #: the sandbox kind the workers play (and build) this run's matches in
    sandbox: str
    #: the run's limits as the workers' policy caps them (the cache raises them for builds)
    limits: Limits


def plan_prebuild(
    refs: Iterable[EntryRef],
    work_dirs: Sequence[Path],
    *,
    requested_sandbox: str,
    limits: Limits,
    policy: WorkerPolicy,
    exclusive_cores: bool,
) -> PrebuildPlan | None:
    """What a worker started with ``policy`` would build for a run's entries ``refs``
    (the config's ``sandbox``, ``limits`` and ``timing.exclusive_cores``); None when
    there is nothing to build ahead (or it must be left to the workers)."""
    if exclusive_cores or not work_dirs:
        return None
    try:
        sandbox = policy.sandbox_for(requested_sandbox, "local")
        allowed = policy.limits_for(limits)
    except PolicyRefused:
        return None  # the workers refuse these matches: they build nothing either
    wanted: dict[str, EntryRef] = {}
    for ref in refs:
        if ref.build and not has_placeholders([ref.build]):
            wanted.setdefault(cache_key(ref), ref)  # variants share their entry's build
    if not wanted:
        return None
    return PrebuildPlan(
        tuple(wanted.values()),
        tuple(artifacts_dir(w) for w in work_dirs),
        sandbox,
        allowed,
    )


@dataclass
class PrebuildReport:
    """What one prebuild did (for the coordinator's log and tests)."""

    built: int = 0  # builds run here (not found already built)
    skipped: int = 0  # left to the workers: stopped before, or an error here
    error: str = ""  # the first failure of this machine (the worker meets it again, and reports it)


def prebuild(
    plan: PrebuildPlan, fetch: Callable[[str], bytes], stop: threading.Event | None = None
) -> PrebuildReport:
    """Build ``plan``'s entries into each of its caches; ``fetch(digest)`` gives a packed entry.

    Checks ``stop`` before each build (a build under way runs to its end: it is
    published whole or not at all). Never raises for this machine's failures
    (a sandbox that cannot start, an artifact that does not match): the worker
    then builds the entry itself and reports what it meets."""
    report = PrebuildReport()
    jobs = [(ref, root) for ref in plan.entries for root in plan.cache_roots]
    try:
        hosts = host_factory(plan.sandbox)
    except Exception as e:
        report.skipped, report.error = len(jobs), f"{type(e).__name__}: {e}"
        log.warning("no builds ahead of the workers: %s", report.error)
        return report
    for i, (ref, root) in enumerate(jobs):
        if stop is not None and stop.is_set():
            report.skipped += len(jobs) - i
            break
        cache = ArtifactCache(root, hosts, plan.limits, prebuilt=True)
        try:
            cache.ensure(ref, fetch)
        except Exception as e:
            report.skipped += 1
            report.error = report.error or f"{ref.name}: {type(e).__name__}: {e}"
            log.warning("build of %s ahead of the workers failed (they build it): %s", ref.name, e)
            continue
        report.built += cache.builds
    return report
