"""``tourney run``'s local workers find their entries built: the coordinator builds them
in a thread while the workers start (``workers.prebuild`` says how, and why it is the
worker's own build).

Two cores, two jobs: the worker's start (imports, Celery) is CPU in its process, a
build is mostly the compiler's; the coordinator's own set-up and first dispatch go on
in its main thread meanwhile (the thread mostly waits on the build's sandbox).

``TOURNEY_PREBUILD=0`` leaves every build to the workers, as before (``runner.orchestration.warm``).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from runner.domain.match_values import EntryRef
from runner.orchestration import warm
from runner.orchestration.workers_gate import plan_local_prebuild, run_local_prebuild

if TYPE_CHECKING:
    from runner.config import TournamentConfig
    from runner.orchestration.local_workers import LocalWorkers
    from runner.orchestration.workers_gate import PrebuildPlan, PrebuildReport

log = logging.getLogger("tourney.coordinator")

#: how long the end of a run waits for a build under way (a normal one takes a second or so;
#: one still running is left to die with this process, its half-made copy to the next build)
STOP_GRACE_S = 10.0


class LocalPrebuild:
    """A thread building ``plan`` into the local workers' caches; ``stop`` ends it."""

    def __init__(self, plan: PrebuildPlan, blobs: Mapping[str, Path]) -> None:
        self.plan = plan
        self._blobs = dict(blobs)
        self._stop = threading.Event()
        self.report: PrebuildReport | None = None
        self._thread = threading.Thread(target=self._run, name="tourney-prebuild", daemon=True)

    def _fetch(self, digest: str) -> bytes:
        """The packed entry, as the worker would fetch it from the broker (the same bytes)."""
        return self._blobs[digest].read_bytes()

    def _run(self) -> None:
        started, cpu = time.monotonic(), time.thread_time()
        try:
            self.report = run_local_prebuild(self.plan, self._fetch, self._stop)
        except Exception:  # never the run's failure: the workers build what is not built
            log.exception("building ahead of the workers failed")
            return
        # this thread's own CPU: what it took from the coordinator (the builds ran in sandboxes)
        log.info(
            "built ahead of the workers: %d build(s), %d left to them, in %.2fs "
            "(%.3fs of the coordinator's CPU)%s",
            self.report.built,
            self.report.skipped,
            time.monotonic() - started,
            time.thread_time() - cpu,
            f" ({self.report.error})" if self.report.error else "",
        )

    def start(self) -> LocalPrebuild:
        self._thread.start()
        return self

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """No further build starts; wait (up to ``grace_s``) for the one under way."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(grace_s)
        if self._thread.is_alive():
            log.warning("a build ahead of the workers was still running when the run ended")


def start_local_prebuild(
    config: TournamentConfig, blobs: Mapping[str, Path], workers: LocalWorkers
) -> LocalPrebuild | None:
    """Start building the run's entries into ``workers``' caches as those workers would;
    None when there is nothing to build ahead (``workers.prebuild.plan_prebuild``)."""
    if not warm.switches().prebuild:
        return None
    refs = _in_likely_order(
        [s.ref() for s in config.entry_specs().values()],
        [s.ref() for s in config.seed_opponent_specs().values()],
    )
    plan = plan_local_prebuild(
        refs,
        workers.work_dirs,
        requested_sandbox=config.sandbox,
        limits=config.limits_obj,
        allow_unsandboxed=workers.allow_unsandboxed,
        exclusive_cores=config.timing.exclusive_cores,
    )
    if plan is None:
        return None
    return LocalPrebuild(plan, blobs).start()


def _in_likely_order(entries: list[EntryRef], opponents: list[EntryRef]) -> list[EntryRef]:
    """Entrants and seed opponents alternately: the first matches pair early entrants with
    each other (a round robin) or with the first seed opponents (seeding)."""
    out: list[EntryRef] = []
    for i in range(max(len(entries), len(opponents))):
        out += entries[i : i + 1] + opponents[i : i + 1]
    return out
