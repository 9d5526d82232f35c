"""What a run starts and stops: ``LocalCluster``.

The embedded Redis, this machine's worker (and the sandbox binds it sees), its sandbox health
check and the dispatcher, started in one order
(docs/architecture.md, hop 4) and stopped exactly once: on leaving the ``with`` block, at exit,
and so also on SIGTERM/SIGHUP, which ``terminate_on_signals`` makes unwind like Ctrl-C.

``tourney run`` (``runner.commands.run``) opens the cluster around the whole run but starts
it inside the progress display (its start says what it does there) and lets it stop while
the report is written (``stopping_meanwhile``): nothing the report reads is in the cluster.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import FrameType

from runner.config import TournamentConfig
from runner.domain.fleet import Fleet, RegistryView, organiser_key
from runner.domain.redaction import register_broker_url
from runner.domain.registry import SANDBOX_BINDS_ENV, UNSANDBOXED_WARNING, merged_binds
from runner.domain.timing import WORKER_CPUS_ENV, capped_concurrency, cpu_list, split_cores
from runner.errors import InfrastructureFailure, RunHalted, UsageError
from runner.orchestration import procs
from runner.orchestration.celery_dispatcher import CeleryDispatcher
from runner.orchestration.dispatcher import BrokerDown, Dispatcher, Timing
from runner.orchestration.inline_dispatcher import InlineDispatcher
from runner.orchestration.local_workers import LocalWorkers, RestartBudget
from runner.orchestration.redis_server import EmbeddedRedis, RedisServerError
from runner.orchestration.workers_gate import check_local_sandbox, probe_sandbox
from runner.storage.run_dir import RunDir
from runner.storage.store import RunStore

# the run's own log (coordinator.log names each line's logger): the cluster's lines keep the name
# they had when this lived in the run command
log = logging.getLogger("tourney.coordinator")

#: how long stopping a run waits for its health check (a C build and a move, normally
#: well under a second) to end and remove its sandbox
HEALTH_CHECK_STOP_WAIT_S = 30.0

#: what the cluster says while it starts (the run's progress display)
Say = Callable[[str], None]


@dataclass(frozen=True)
class ClusterRequest:
    """What the command line asks of the cluster (``tourney run`` options, README.md)."""

    inline: bool = False
    broker: str | None = None
    workers: int | None = None
    no_local_workers: bool = False
    #: among the organiser's runs on one broker, higher first (``runner.domain.fair_share``)
    priority: int = 0


def planned_local_slots(config: TournamentConfig, request: ClusterRequest) -> int | None:
    """The matches this run's own workers will play at once (``LocalCluster``: the inline
    dispatcher one; the local worker one per usable core, or ``--workers``), known before
    anything starts; None where no local worker plays (``--no-local-workers``). The CPUs
    are those ``timing.reserved_cores`` leaves to matches."""
    if request.inline:
        return 1
    if request.no_local_workers:
        return None
    usable = os.sched_getaffinity(0)
    timing = config.timing
    if timing.exclusive_cores and timing.reserved_cores:
        usable = set(split_cores(usable, timing.reserved_cores)[1])  # ValueError: checked before
    return capped_concurrency(request.workers, usable, exclusive=timing.exclusive_cores)


class Terminated(RunHalted):
    """SIGTERM or SIGHUP arrived (``terminate_on_signals``)."""


@contextlib.contextmanager
def terminate_on_signals() -> Iterator[None]:
    """SIGTERM/SIGHUP unwind like Ctrl-C, so ``finally`` blocks stop what the run started."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise Terminated(signal.Signals(signum).name)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


class Background:
    """A call made in a thread while the caller goes on; ``result`` waits for it and returns
    what it returned, or raises what it raised, in the caller's thread."""

    def __init__(self, call: Callable[[], str], name: str) -> None:
        self._value = ""
        self._failed: BaseException | None = None

        def run() -> None:
            try:
                self._value = call()
            except BaseException as e:  # re-raised by result() in the caller's thread
                self._failed = e

        self._thread: threading.Thread | None = threading.Thread(target=run, name=name, daemon=True)
        self._thread.start()

    @classmethod
    def done(cls, value: str) -> Background:
        """One that already has its value (nothing to overlap)."""
        made = cls.__new__(cls)
        made._value, made._failed, made._thread = value, None, None
        return made

    def wait(self, timeout_s: float) -> None:
        """Let the call end (up to ``timeout_s``) without taking its result."""
        if self._thread is not None:
            self._thread.join(timeout_s)

    def result(self) -> str:
        if self._thread is not None:
            self._thread.join()
        if self._failed is not None:
            raise self._failed
        return self._value


class LocalCluster:
    """What a run started (embedded Redis, local workers, health check, dispatcher);
    stopped exactly once. ``start`` starts it; leaving the ``with`` block (or the process's
    exit) stops it."""

    def __init__(self, config: TournamentConfig, rd: RunDir, run_id: str, request: ClusterRequest) -> None:
        self.config = config
        self.rd = rd
        self.run_id = run_id
        self.request = request
        self.redis: EmbeddedRedis | None = None
        self.workers: LocalWorkers | None = None
        self.dispatcher: Dispatcher | None = None
        #: the local health check, in a thread until the first dispatch (``sandbox_memory``)
        self.health_check: Background | None = None
        self._checked: Background = Background.done("")
        self.timing = Timing()  # read from the environment by ``start``
        #: matches played at once by this run's own workers (``StageContext.slots``)
        self.slots = 1
        #: publish the run's entries again (a broker that lost them): Celery only
        self.republish: Callable[[], None] | None = None

    def __enter__(self) -> LocalCluster:
        atexit.register(self.stop)
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.stop()
        finally:
            atexit.unregister(self.stop)

    # -- starting --------------------------------------------------------------
    def start(self, say: Say, pack: Callable[[], dict[str, Path]]) -> Dispatcher:
        """Start what the request asks for, in the order that overlaps the slow parts, and
        return the dispatcher. ``pack`` packs the entries (called once, while the local
        worker starts); ``say`` is told what is started."""
        config, request = self.config, self.request
        if config.sandbox_binds:
            # this run's own workers (inline, or local ones, which inherit the environment)
            os.environ[SANDBOX_BINDS_ENV] = merged_binds(
                os.environ.get(SANDBOX_BINDS_ENV, ""), config.sandbox_binds
            )
            say(f"sandbox binds (read-only): {', '.join(config.sandbox_binds)}")
        # before Redis and the local workers start: they run on the CPUs it leaves them
        match_cpus = self._reserve_cores(say)
        if not request.inline and request.broker is None:
            # Redis and the local worker first: its start (Celery's, about 0.2 s) overlaps
            # everything below instead of following it
            self._start_redis_and_workers(say, match_cpus)
            # then the local worker's health check (a sandboxed C build and move), made once for
            # it here (it is told to skip its own), in a thread from here to the first dispatch,
            # which waits for it. Not before the worker is handed its work: the thread's imports
            # share this process's GIL, and the worker's start waits on this thread until then
            self.health_check = Background(
                lambda: check_local_sandbox(config.sandbox), "tourney-health-check"
            )
            self._checked = self.health_check
        elif config.sandbox != "none" and (request.inline or not request.no_local_workers):
            self._checked = Background.done(probe_sandbox(config.sandbox))  # SandboxUnavailable: exit 3
        if config.sandbox == "none":  # on stderr, whatever the progress mode
            print(f"tourney run: {UNSANDBOXED_WARNING}", file=sys.stderr, flush=True)
        blobs = pack()
        self.timing = Timing.from_env()
        if request.inline:
            dispatcher: Dispatcher = InlineDispatcher(
                self.rd.artifacts, self.rd.workers / "inline" / "artifacts"
            )
            mode = "inline"
        else:
            url = str(request.broker) if self.redis is None else self.redis.url()
            register_broker_url(url)
            # the organiser's key signs the tasks; the fleet registry names who may answer
            # (docs/deploy.md)
            celery = CeleryDispatcher(
                url, self.run_id, self.timing, organiser_key(), RegistryView(), priority=request.priority
            )
            self.dispatcher = celery
            try:
                celery.ping()
            except BrokerDown as e:  # the broker asked for is not there: nothing was started
                raise InfrastructureFailure(str(e)) from e
            celery.publish_artifacts(blobs)
            celery.mark_alive()
            self.republish = lambda: celery.publish_artifacts(blobs)
            dispatcher = celery
            count = self.workers.count if self.workers is not None else 0
            if not request.no_local_workers and request.broker:
                count = self._start_local_workers(say, url, match_cpus)
            self.slots = max(count, 1)
            # one local worker process plays ``count`` matches at once (``LocalWorkers``)
            local = f"1 local worker ({count} match(es) at once)" if count else "no local worker"
            mode = local + (", remote workers welcome" if request.broker else "")
        self.dispatcher = dispatcher
        say(f"playing with {mode}")
        return dispatcher

    def sandbox_memory(self) -> str:
        """The sandbox health check's word on memory limits, once it is done (it ran meanwhile);
        ``SandboxUnavailable`` (exit 3) if the sandbox cannot run: before any match is dispatched."""
        return self._checked.result()

    def _reserve_cores(self, say: Say) -> frozenset[int]:
        """The CPUs local workers play matches on. With ``timing.reserved_cores`` this thread (and
        so the embedded Redis, started after) is pinned to the reserved ones, and local workers,
        told through the environment, pin themselves to the rest."""
        timing = self.config.timing
        usable = os.sched_getaffinity(0)
        if self.request.inline or not timing.exclusive_cores or timing.reserved_cores == 0:
            return frozenset(usable)
        try:
            runner_cpus, match_cpus = split_cores(usable, timing.reserved_cores)
        except ValueError as e:
            raise UsageError(str(e)) from e
        os.sched_setaffinity(0, runner_cpus)
        os.environ[WORKER_CPUS_ENV] = cpu_list(match_cpus)  # local workers inherit the environment
        say(f"timing: CPUs {cpu_list(runner_cpus)} for the runner, {cpu_list(match_cpus)} for matches")
        return frozenset(match_cpus)

    def _start_redis_and_workers(self, say: Say, match_cpus: frozenset[int]) -> None:
        """The embedded Redis and this machine's workers (``tourney run`` without ``--broker``)."""
        rd = self.rd
        # one a previous, killed coordinator left behind (normally PDEATHSIG did): only the very
        # process recorded, never by name (``runner.orchestration.procs``)
        procs.kill_recorded(rd.redis / "redis.pid")
        shutil.rmtree(rd.redis, ignore_errors=True)  # broker state is disposable; the store is the truth
        try:
            self.redis = EmbeddedRedis(rd.redis).start()
        except RedisServerError as e:
            raise InfrastructureFailure(f"cannot start the embedded Redis: {e}") from e
        self._start_local_workers(say, self.redis.url(), match_cpus, health_checked_here=True)

    def _start_local_workers(
        self, say: Say, url: str, match_cpus: frozenset[int], *, health_checked_here: bool = False
    ) -> int:
        rd, config = self.rd, self.config
        for pid_file in rd.workers.glob("*/worker.pid"):
            procs.kill_recorded(pid_file)
        count = self._local_worker_count(say, match_cpus)
        self.workers = LocalWorkers(
            url,
            rd.path,
            count,
            # this machine's own enrolled worker key (made on first use; docs/deploy.md)
            key_file=Fleet().local_worker_key(),
            allow_unsandboxed=config.sandbox == "none",
            skip_health_check=health_checked_here,
        ).start()
        return count

    def _local_worker_count(self, say: Say, cpus: frozenset[int]) -> int:
        """Matches the local worker plays at once: one per usable core by default; with fair
        timing never more than that."""
        requested = self.request.workers
        count = capped_concurrency(requested, cpus, exclusive=self.config.timing.exclusive_cores)
        if requested is not None and count < requested:
            say(
                f"timing.exclusive_cores: the local worker plays {count} match(es) at once, "
                f"one per usable core, not {requested}"
            )
        return count

    # -- while it plays --------------------------------------------------------
    def supervisor(self, store: RunStore, say: Say) -> Callable[[], None] | None:
        """What the coordinator's loop calls on every pass (and while it waits for the broker):
        start the embedded Redis again if it exited (``RedisServerError`` once it keeps exiting),
        restart the local worker if it died (``LocalWorkersFailing`` once it keeps dying), each
        said in the progress, the log and the store."""
        if self.redis is None and self.workers is None:
            return None
        redis_budget = RestartBudget()

        def supervise() -> None:
            server = self.redis
            code = server.exit_code() if server is not None else None
            if server is not None and code is not None:
                if not redis_budget.allow(time.monotonic()):
                    raise RedisServerError(
                        f"the embedded Redis keeps exiting: exit code {code} after {redis_budget.restarts} "
                        f"restart(s) within {redis_budget.window_s:.0f}s (see {server.log_file})"
                    )
                server.restart()
                said = f"the embedded Redis exited (exit code {code}); started again on port {server.port}"
                log.warning("%s", said)
                say(said)
                store.log("redis_restarted", None, said)
            if self.workers is not None:
                restarted = self.workers.supervise()
                if restarted is not None:
                    say(restarted.describe())
                    store.log("worker_restarted", None, restarted.describe())

        return supervise

    def wind_down(self, *, finished: bool) -> None:
        """The session played: a finished run's broker state goes, and the local workers begin
        to stop (they wind down while the report is written)."""
        if finished and self.dispatcher is not None:
            self.dispatcher.forget_run()
        if self.workers is not None:
            self.workers.begin_stop()

    # -- stopping ----------------------------------------------------------------
    def stop(self) -> None:
        check, self.health_check = self.health_check, None
        if check is not None:
            # a run stopped (SIGTERM, an error) while its check builds and moves: the check's
            # sandbox and cgroups go with it, not with this process's exit
            check.wait(HEALTH_CHECK_STOP_WAIT_S)
        workers, self.workers = self.workers, None
        dispatcher, self.dispatcher = self.dispatcher, None
        server, self.redis = self.redis, None
        if workers is not None:
            workers.stop()
        if dispatcher is not None:
            with contextlib.suppress(Exception):
                dispatcher.close()
        if server is not None:
            server.stop()

    @contextlib.contextmanager
    def stopping_meanwhile(self) -> Iterator[None]:
        """Stop the cluster in a thread while the block runs (its stop is mostly waiting on
        processes); on leaving, wait for that stop and raise what it raised."""
        failed: list[BaseException] = []

        def stop() -> None:
            try:
                self.stop()
            except BaseException as e:  # re-raised in the caller's thread below
                failed.append(e)

        stopper = threading.Thread(target=stop, name="tourney-cluster-stop", daemon=True)
        stopper.start()
        try:
            yield
        finally:
            stopper.join()
        if failed:
            raise failed[0]
