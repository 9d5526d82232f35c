"""``tourney run CONFIG``: start or resume a run, play it to its end, write the report.

The run's pieces are started here (the embedded Redis, local workers, a
dispatcher: ``_Cluster``) and stopped exactly once, also on SIGTERM/SIGHUP;
the loop itself is ``runner.orchestration.coordinator.Coordinator``.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import importlib
import logging
import os
import secrets
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from runner.config import TournamentConfig, load_config
from runner.domain.entries import pack_entry
from runner.domain.fleet import Fleet, RegistryView, organiser_key
from runner.domain.private_files import read_private_text
from runner.domain.registry import SANDBOX_BINDS_ENV, merged_binds
from runner.domain.timing import WORKER_CPUS_ENV, capped_concurrency, cpu_list, split_cores
from runner.errors import CommandError, RunHalted, UsageError
from runner.orchestration.dispatch import (
    BrokerDown,
    CeleryDispatcher,
    Dispatcher,
    InlineDispatcher,
    LocalWorkers,
    NoWorkerCanServe,
    Timing,
    check_broker_url,
    check_local_sandbox,
    kill_stale,
    probe_sandbox,
)
from runner.orchestration.local_workers import LocalWorkersFailing
from runner.orchestration.prebuild import LocalPrebuild, start_local_prebuild
from runner.orchestration.redis_server import EmbeddedRedis, RedisServerError
from runner.report.progress import PLAIN_INTERVAL_S, PROGRESS_EVERY_ENV, RunProgress, default_mode
from runner.report.replay_memo import ReplayMemo, ReplayWarmer
from runner.storage.run_dir import (
    RunDir,
    coordinator_lock,
    create_run,
    default_run_dir,
    open_for_resume,
)
from runner.storage.store import RunStore

if TYPE_CHECKING:  # imported where used: the local workers start before these load
    from runner.domain.contracts import GameRecord, MatchSpec
    from runner.domain.stages.base import TournamentState
    from runner.orchestration.coordinator import Coordinator, SessionOutcome
    from runner.report.model import ReportData

log = logging.getLogger("tourney.coordinator")

#: the longest the report waits for the replays still being computed ahead (then it computes
#: what is missing itself)
REPLAY_WAIT_S = 10.0


#: how long stopping a run waits for its health check (a C build and a move, normally
#: well under a second) to end and remove its sandbox
HEALTH_CHECK_STOP_WAIT_S = 30.0


class _Cluster:
    """What a run started (embedded Redis, local workers, dispatcher); stopped exactly once."""

    def __init__(self) -> None:
        self.redis: EmbeddedRedis | None = None
        self.workers: LocalWorkers | None = None
        self.dispatcher: Dispatcher | None = None
        self.prebuild: LocalPrebuild | None = None
        #: the local health check, in a thread until the first dispatch (``_play``)
        self.health_check: _Background | None = None

    def stop(self) -> None:
        check, self.health_check = self.health_check, None
        if check is not None:
            # a run stopped (SIGTERM, an error) while its check builds and moves: the check's
            # sandbox and cgroups go with it, not with this process's exit
            check.wait(HEALTH_CHECK_STOP_WAIT_S)
        prebuild, self.prebuild = self.prebuild, None
        if prebuild is not None:
            prebuild.stop()  # first: a build under way ends whole before its workers go
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
def _stopping_meanwhile(cluster: _Cluster) -> Iterator[None]:
    """Stop ``cluster`` in a thread while the block runs (its stop is mostly waiting on
    processes); on leaving, wait for that stop and raise what it raised."""
    failed: list[BaseException] = []

    def stop() -> None:
        try:
            cluster.stop()
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


class _Terminated(RunHalted):
    pass


@contextlib.contextmanager
def _terminate_on_signals() -> Iterator[None]:
    """SIGTERM/SIGHUP unwind like Ctrl-C, so ``finally`` blocks stop what the run started."""

    def handler(signum: int, frame: FrameType | None) -> None:
        raise _Terminated(signal.Signals(signum).name)

    old = {s: signal.signal(s, handler) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def pack_artifacts(config: TournamentConfig, rd: RunDir) -> dict[str, Path]:
    """Pack every entry (and seed opponent) once per digest into ``artifacts/``."""
    rd.artifacts.mkdir(parents=True, exist_ok=True)
    out: dict[str, Path] = {}
    for spec in [*config.entry_specs().values(), *config.seed_opponent_specs().values()]:
        if spec.digest in out:
            continue
        path = rd.artifacts / f"{spec.digest}.tar.gz"
        if not path.exists():
            tmp = path.with_suffix(".tmp")
            tmp.write_bytes(pack_entry(spec.path))
            tmp.replace(path)
        out[spec.digest] = path
    return out


def _setup_logging(rd: RunDir) -> logging.Handler:
    rd.logs.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(rd.logs / "coordinator.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("tourney")
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return handler


def print_standings(run_dir: Path, state: TournamentState, data: ReportData | None = None) -> None:
    """The end-of-run summary from the run's report data; without it (the run could not be
    read back), a plain table of the coordinator's own final state."""
    if data is not None:
        from runner.report.terminal import make_console, print_summary

        print_summary(data, make_console())
        return
    from rich.console import Console
    from rich.table import Table

    console = Console()
    for st in state.stages:
        if not st.standings:
            continue
        t = Table(title=f"{st.name} ({st.planner})")
        for col in ("#", "entry", "games", "W", "T", "L", "points", "score", "status"):
            t.add_column(col)
        for r in st.standings:
            t.add_row(
                str(r.rank),
                r.entry,
                str(r.games),
                str(r.wins),
                str(r.ties),
                str(r.losses),
                f"{r.points:g}",
                str(r.score),
                r.status,
            )
        console.print(t)
    if state.final_ranking:
        console.print(
            "final ranking: " + ", ".join(f"{i}. {n}" for i, n in enumerate(state.final_ranking, 1))
        )


def cmd_run(args: argparse.Namespace) -> int:
    config_path = Path(args.config)
    config = load_config(config_path)  # ConfigError: every problem with its location, exit 2
    if getattr(args, "broker_file", None):
        # a password on the coordinator's own command line would be visible to every local user
        args.broker = read_private_text(Path(args.broker_file), "--broker-file", UsageError)
    if args.inline and args.broker:
        raise UsageError("--inline and --broker exclude each other")
    if args.no_local_workers and not args.broker:
        raise UsageError("--no-local-workers needs --broker (someone must play the matches)")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.broker:
        check_broker_url(args.broker)
    if config.timing.exclusive_cores and not args.inline:
        try:  # before the run directory exists: nothing to resume from a config that cannot run
            split_cores(os.sched_getaffinity(0), config.timing.reserved_cores)
        except ValueError as e:
            raise UsageError(str(e)) from e
    rd = RunDir((Path(args.run_dir) if args.run_dir else default_run_dir(config)).resolve())
    with coordinator_lock(rd):  # ResumeRefused: another coordinator has it, exit 2
        return _run(args, config, config_path, rd)


def _run(args: argparse.Namespace, config: TournamentConfig, config_path: Path, rd: RunDir) -> int:
    resumed = rd.exists()
    if resumed:
        store = open_for_resume(rd, config_path, config)
    else:
        store = create_run(rd, config_path, config, secrets.token_hex(8))
    handler = _setup_logging(rd)
    cluster = _Cluster()
    atexit.register(cluster.stop)
    progress_mode = default_mode(bool(args.no_progress))
    # how often the plain (non-terminal) progress prints a line; CI logs and tests may want it faster
    plain_every_s = float(os.environ.get(PROGRESS_EVERY_ENV) or PLAIN_INTERVAL_S)
    # the report's replays, computed while the matches play rather than after the last one
    # (runner.report.replay_memo)
    warmer = ReplayWarmer(ReplayMemo())
    try:
        with _terminate_on_signals():
            with RunProgress(config.name, progress_mode, plain_interval_s=plain_every_s) as progress:
                code, outcome = _play(args, config, rd, store, cluster, progress, resumed, warmer)
            if outcome is not None:
                # nothing the report reads is in the cluster: Redis and the workers stop meanwhile
                with _stopping_meanwhile(cluster):
                    _finish_outputs(rd, outcome, code == 0, warmer)
            return code
    except (BrokerDown, LocalWorkersFailing, NoWorkerCanServe) as e:
        raise CommandError(f"{e}; run the same command again to resume", exit_code=1) from e
    except _Terminated as e:
        raise CommandError(f"stopped by {e}; run the same command again to resume", exit_code=143) from e
    finally:
        warmer.finish()
        cluster.stop()
        atexit.unregister(cluster.stop)
        store.close()
        logging.getLogger("tourney").removeHandler(handler)
        handler.close()


def _play(
    args: argparse.Namespace,
    config: TournamentConfig,
    rd: RunDir,
    store: RunStore,
    cluster: _Cluster,
    progress: RunProgress,
    resumed: bool,
    warmer: ReplayWarmer | None = None,
) -> tuple[int, SessionOutcome | None]:
    meta = store.meta()
    run_id = str(meta["run_id"])
    if resumed:
        requeued = store.requeue_in_flight("coordinator restarted")
        retried = store.retry_failed()
        progress.log(
            f"resuming {rd.path}: {len(requeued)} match(es) in flight re-dispatched"
            + (f", {len(retried)} failed match(es) retried" if retried else "")
        )
    else:
        progress.log(f"new run {rd.path} ({config.name})")
    if config.sandbox_binds:
        # this run's own workers (inline, or local ones, which inherit the environment)
        os.environ[SANDBOX_BINDS_ENV] = merged_binds(
            os.environ.get(SANDBOX_BINDS_ENV, ""), config.sandbox_binds
        )
        progress.log(f"sandbox binds (read-only): {', '.join(config.sandbox_binds)}")
    # before Redis and the local workers start: they run on the CPUs it leaves them
    match_cpus = _reserve_cores(config, progress, inline=bool(args.inline))
    if not args.inline and args.broker is None:
        # Redis and the local worker first: its start (Celery's, about 0.2 s) overlaps
        # everything below instead of following it
        _start_local_cluster(args, config, rd, cluster, progress, match_cpus)
        # then the local worker's health check (a sandboxed C build and move), made once for
        # it here (it is told to skip its own), in a thread from here to the first dispatch,
        # which waits for it. Not before the worker is handed its work: the thread's imports
        # share this process's GIL, and the worker's start waits on this thread until then
        health_check = _Background(lambda: check_local_sandbox(config.sandbox), "tourney-health-check")
        cluster.health_check = health_check
    elif config.sandbox != "none" and (args.inline or not args.no_local_workers):
        health_check = _Background.done(probe_sandbox(config.sandbox))  # SandboxUnavailable: exit 2
    else:
        health_check = _Background.done("")
    if config.sandbox == "none":
        progress.log("sandbox: none — entries run unisolated; only for trusted entries")
    blobs = pack_artifacts(config, rd)
    if cluster.workers is not None:
        # their first match finds its entries built: built here while they start
        cluster.prebuild = start_local_prebuild(config, blobs, cluster.workers)
    timing = Timing.from_env()
    republish: Callable[[], None] | None = None
    if args.inline:
        dispatcher: Dispatcher = InlineDispatcher(rd.artifacts, rd.workers / "inline" / "artifacts")
        mode = "inline"
    else:
        url = args.broker if cluster.redis is None else cluster.redis.url()
        # the organiser's key signs the tasks; the fleet registry names who may answer (docs/fleet.md)
        celery = CeleryDispatcher(url, run_id, timing, organiser_key(), RegistryView())
        cluster.dispatcher = celery
        try:
            celery.ping()
        except BrokerDown as e:  # the broker asked for is not there: nothing was started
            raise CommandError(str(e), exit_code=2) from e
        celery.publish_artifacts(blobs)
        celery.mark_alive()
        republish = lambda: celery.publish_artifacts(blobs)  # noqa: E731
        dispatcher = celery
        count = cluster.workers.count if cluster.workers is not None else 0
        if not args.no_local_workers and args.broker:
            count = _start_local_workers(args, config, rd, cluster, url, progress, match_cpus)
            if cluster.workers is not None:  # as above: built while they start
                cluster.prebuild = start_local_prebuild(config, blobs, cluster.workers)
        # one local worker process plays ``count`` matches at once (``LocalWorkers``)
        local = f"1 local worker ({count} match(es) at once)" if count else "no local worker"
        mode = local + (", remote workers welcome" if args.broker else "")
    cluster.dispatcher = dispatcher
    progress.log(f"playing with {mode}")
    _record_timing(store, config, progress)
    if args.no_local_workers:
        progress.log(
            f"waiting for workers: tourney worker --broker '{_masked(args.broker)}' (or make worker)"
        )
    from runner.orchestration.coordinator import Coordinator

    coordinator = Coordinator(
        config,
        store,
        dispatcher,
        progress,
        timing=timing,
        check_resume=resumed,
        republish=republish,
        on_accepted=_on_first_result(_preload_report_modules, warmer),
        on_tick=_supervisor(cluster.workers, store, progress) if cluster.workers is not None else None,
    )
    memory = health_check.result()  # SandboxUnavailable: exit 2, before any match is dispatched
    if config.sandbox != "none" and memory:
        progress.log(f"sandbox {config.sandbox}: {memory}")
        # the report's header shows it ("memory: rlimit only" where no cgroup can be made)
        store.set_meta(sandbox_memory=memory if memory.startswith("memory:") else "memory: rlimit only")
    store.set_meta(sandbox=config.sandbox)
    # what the start imported and built lives as long as the run: out of the collector's
    # sight, the full collections while the matches play no longer walk it (about 30 ms each)
    gc.freeze()
    try:
        outcome = coordinator.run()
    finally:
        if warmer is not None:
            warmer.finish()  # it replays what is left meanwhile; the report waits for it
    _record_trust(store, coordinator, progress)
    if outcome.finished and isinstance(dispatcher, CeleryDispatcher):
        dispatcher.forget_run()
    if cluster.workers is not None:
        cluster.workers.begin_stop()  # they wind down while the report is written
    rate = outcome.moves / outcome.elapsed_s if outcome.elapsed_s > 0 else 0.0
    summary = (
        f"played {outcome.matches} match(es), {outcome.games} game(s), {outcome.moves} move(s) "
        f"in {outcome.elapsed_s:.1f}s ({rate:.0f} moves/s)"
    )
    progress.log(summary)
    store.set_meta(
        last_session={
            "mode": "inline" if args.inline else "celery",
            "matches": outcome.matches,
            "games": outcome.games,
            "moves": outcome.moves,
            "elapsed_s": outcome.elapsed_s,
            "ended": time.time(),
        }
    )
    if not outcome.finished:
        for mid in outcome.failed:
            row = store.match_record(mid)
            err = row.result.system_error if row and row.result else None
            outcome.failed_details[mid] = err.detail if err else "?"
        return 1, outcome
    store.set_meta(finished=time.time(), final_ranking=list(outcome.state.final_ranking))
    return 0, outcome


class _Background:
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
    def done(cls, value: str) -> _Background:
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


def _supervisor(workers: LocalWorkers, store: RunStore, progress: RunProgress) -> Callable[[], None]:
    """What the coordinator's loop calls on every pass: restart the local worker if it died
    (``LocalWorkersFailing`` once it keeps dying), said in the progress, the log and the store."""

    def supervise() -> None:
        restarted = workers.supervise()
        if restarted is not None:
            progress.log(restarted.describe())
            store.log("worker_restarted", None, restarted.describe())

    return supervise


def _on_first_result(
    first: Callable[[], None], warmer: ReplayWarmer | None
) -> Callable[[MatchSpec, Sequence[GameRecord]], None]:
    """The coordinator's ``on_accepted``: hands each result to ``warmer``, and calls ``first``
    at the first one (once matches play, when the coordinator mostly waits on the broker;
    not during the start, which waits on this process)."""
    started = False

    def accepted(spec: MatchSpec, games: Sequence[GameRecord]) -> None:
        nonlocal started
        if not started:
            started = True
            first()
        if warmer is not None:
            warmer.add_result(spec, games)

    return accepted


def _preload_report_modules() -> None:
    """Import what the run's end needs (the report and the terminal summary: jinja2, rich;
    about 0.3 s) in a thread while the matches play, when the coordinator mostly waits on
    the broker, instead of after the last result, when everything waits on it (started at
    the first result: ``_on_first_result``)."""

    def load() -> None:
        with contextlib.suppress(Exception):  # the end imports them again, and reports what fails
            importlib.import_module("runner.report.model")
            importlib.import_module("runner.report.site")
            importlib.import_module("runner.report.terminal")

    threading.Thread(target=load, name="tourney-preload-report", daemon=True).start()


def _start_local_cluster(
    args: argparse.Namespace,
    config: TournamentConfig,
    rd: RunDir,
    cluster: _Cluster,
    progress: RunProgress,
    match_cpus: frozenset[int],
) -> None:
    """The embedded Redis and this machine's workers (``tourney run`` without ``--broker``)."""
    kill_stale(rd.redis / "redis.pid", "redis-server")
    shutil.rmtree(rd.redis, ignore_errors=True)  # broker state is disposable; the store is the truth
    try:
        cluster.redis = EmbeddedRedis(rd.redis).start()
    except RedisServerError as e:
        raise CommandError(f"cannot start the embedded Redis: {e}", exit_code=1) from e
    _start_local_workers(
        args, config, rd, cluster, cluster.redis.url(), progress, match_cpus, health_checked_here=True
    )


def _start_local_workers(
    args: argparse.Namespace,
    config: TournamentConfig,
    rd: RunDir,
    cluster: _Cluster,
    url: str,
    progress: RunProgress,
    match_cpus: frozenset[int],
    *,
    health_checked_here: bool = False,
) -> int:
    for pid_file in rd.workers.glob("*/worker.pid"):
        kill_stale(pid_file, "runner.cli worker")
    count = _local_worker_count(args.workers, config, progress, match_cpus)
    cluster.workers = LocalWorkers(
        url,
        rd.path,
        count,
        # this machine's own enrolled worker key (made on first use; docs/fleet.md)
        key_file=Fleet().local_worker_key(),
        allow_unsandboxed=config.sandbox == "none",
        skip_health_check=health_checked_here,
    ).start()
    return count


def _reserve_cores(config: TournamentConfig, progress: RunProgress, *, inline: bool) -> frozenset[int]:
    """The CPUs local workers play matches on. With ``timing.reserved_cores`` this thread (and
    so the embedded Redis, started after) is pinned to the reserved ones, and local workers,
    told through the environment, pin themselves to the rest."""
    usable = os.sched_getaffinity(0)
    if inline or not config.timing.exclusive_cores or config.timing.reserved_cores == 0:
        return frozenset(usable)
    try:
        runner_cpus, match_cpus = split_cores(usable, config.timing.reserved_cores)
    except ValueError as e:
        raise UsageError(str(e)) from e
    os.sched_setaffinity(0, runner_cpus)
    os.environ[WORKER_CPUS_ENV] = cpu_list(match_cpus)  # local workers inherit the environment
    progress.log(f"timing: CPUs {cpu_list(runner_cpus)} for the runner, {cpu_list(match_cpus)} for matches")
    return frozenset(match_cpus)


def _local_worker_count(
    requested: int | None, config: TournamentConfig, progress: RunProgress, cpus: frozenset[int]
) -> int:
    """Matches the local worker plays at once: one per usable core by default; with fair
    timing never more than that."""
    exclusive = config.timing.exclusive_cores
    count = capped_concurrency(requested, cpus, exclusive=exclusive)
    if requested is not None and count < requested:
        progress.log(
            f"timing.exclusive_cores: the local worker plays {count} match(es) at once, "
            f"one per usable core, not {requested}"
        )
    return count


def _record_timing(store: RunStore, config: TournamentConfig, progress: RunProgress) -> None:
    """What the config asked for, in the run's metadata and the log (the report adds
    what each worker's results say)."""
    exclusive = config.timing.exclusive_cores
    store.set_meta(
        timing={
            "exclusive_cores": exclusive,
            "reserved_cores": config.timing.reserved_cores if exclusive else 0,
        }
    )
    progress.log(
        "timing: exclusive cores (one CPU per match; a machine plays at most one match per usable core)"
        if exclusive
        else "timing: shared cores (matches share the machine; timing.exclusive_cores gives each its own)"
    )


def _record_trust(store: RunStore, coordinator: Coordinator, progress: RunProgress) -> None:
    """Per-worker counts and what re-judging results cost, kept in the run's metadata."""
    share = coordinator.verify_cpu_s / coordinator.cpu_s if coordinator.cpu_s > 0 else 0.0
    store.set_meta(
        workers=coordinator.health.summary(),
        rejected_notes=dict(coordinator.rejected_notes),
        verification={
            "cpu_s": round(coordinator.verify_cpu_s, 4),
            "coordinator_cpu_s": round(coordinator.cpu_s, 4),
            "share": round(share, 5),
        },
    )
    quarantined = coordinator.health.quarantined()
    if quarantined:
        progress.log("quarantined worker(s): " + ", ".join(f"{r.name} ({r.reason})" for r in quarantined))
    log.info(
        "referee replay of results: %.3fs CPU of the coordinator's %.3fs (%.2f%%)",
        coordinator.verify_cpu_s,
        coordinator.cpu_s,
        100 * share,
    )


def _masked(url: str) -> str:
    """The broker URL with its password hidden (it is printed)."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = f":***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return parts._replace(netloc=netloc).geturl()


def _finish_outputs(
    rd: RunDir, outcome: SessionOutcome, finished: bool, warmer: ReplayWarmer | None = None
) -> None:
    """After the progress display is gone: the report, then the standings, from one
    reading of the run (with the replays ``warmer`` computed while it played)."""
    from runner.orchestration.coordinator import ATTEMPT_CAP
    from runner.report.model import load_report_data
    from runner.report.site import write_html_report

    data: ReportData | None = None
    try:
        data = load_report_data(rd.path)
        ahead = warmer.close(REPLAY_WAIT_S) if warmer is not None else None
        write_html_report(data, rd.report, ahead=ahead)
        if ahead is not None:
            log.info("report: %d replay(s) computed ahead, %d after the run", ahead.hits, ahead.misses)
    except Exception as e:  # a broken report must not hide the standings
        log.exception("report failed")
        print(f"tourney run: could not write the report: {e}", file=sys.stderr)
    print_standings(rd.path, outcome.state, data)
    if not finished:
        print(
            f"tourney run: not finished: {len(outcome.failed)} match(es) FAILED after {ATTEMPT_CAP} attempts "
            "and the stages that need them cannot finish:",
            file=sys.stderr,
        )
        for mid, why in outcome.failed_details.items():
            print(f"  {mid}: {why}", file=sys.stderr)
        print("Fix the cause, then run the same command again: failed matches are retried.", file=sys.stderr)
