"""This machine's ``tourney worker`` for a run without ``--broker`` (or with local workers).

One process, ``tourney worker --concurrency N``, as a separate machine runs it
(``make worker``): Celery's main process starts once, not N times, and its N pool
processes play the matches. It is its own session (stopped as a whole), dies with the
coordinator (PDEATHSIG), logs to ``logs/worker-<k>.log`` and keeps its artifact and
build cache in ``workers/1``.

With one process its death would stall the run, so the coordinator supervises it
(``supervise``, called from its loop): a worker that exited while the run plays is
replaced by a new one under a new name (``local-<k>-<pid>@host``, ``logs/worker-<k>.log``;
the same cache, so nothing is built twice); what the dead one was playing comes back
through the lease machinery (docs/scale-out.md). A worker that keeps dying is a broken machine,
not bad luck: past ``RestartBudget`` the run stops (``LocalWorkersFailing``, resumable).

A quarantined local worker shuts itself down and is replaced like any other: the
replacement has a new name, which the quarantine does not cover; if this machine keeps
failing, the restart budget ends the run instead of the matches' attempts.

The first worker may come from the standby process ``runner.cli`` started before the
coordinator's own imports (``runner.orchestration.standby``): it gets the command line
and environment a fresh one would have, and is then the same process.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from runner.domain.registry import BROKER_ENV
from runner.errors import RunHalted
from runner.orchestration import procs as procs_mod
from runner.orchestration import standby
from runner.orchestration.redis_server import parent_death_signal
from runner.orchestration.workers_gate import CACHE_DIR_ENV, sweep_sandbox_cgroups, user_cache

log = logging.getLogger("tourney.workers")

#: the worker directory (cache, pid file) every local worker of a run uses, one after the other
WORK_SUBDIR = "1"


class LocalWorkersFailing(RunHalted, RuntimeError):
    """The local worker kept dying: restarting it again would not help (exit 1, resumable)."""


@dataclass
class RestartBudget:
    """At most ``restarts`` restarts within any ``window_s`` seconds (pure: the caller gives the clock)."""

    restarts: int = 3
    window_s: float = 60.0
    _times: collections.deque[float] = field(default_factory=collections.deque)

    def allow(self, now: float) -> bool:
        """Whether one more restart at ``now`` stays within the budget (and if so, count it)."""
        while self._times and now - self._times[0] >= self.window_s:
            self._times.popleft()
        if len(self._times) >= self.restarts:
            return False
        self._times.append(now)
        return True


@dataclass(frozen=True)
class Restarted:
    """A local worker that exited while the run played, and the one that replaced it."""

    dead: str
    exit_code: int
    started: str

    def describe(self) -> str:
        return f"local worker {self.dead} exited ({_exit_text(self.exit_code)}); started {self.started}"


def _exit_text(code: int) -> str:
    if code < 0:
        with contextlib.suppress(ValueError):
            return f"killed by {signal.Signals(-code).name}"
        return f"killed by signal {-code}"
    return f"exit code {code}"


class LocalWorkers:
    """One ``tourney worker --concurrency count`` process on this machine, restarted if it dies."""

    def __init__(
        self,
        broker_url: str,
        run_dir: Path,
        count: int,
        *,
        key_file: Path | None = None,
        allow_unsandboxed: bool = False,
        skip_health_check: bool = False,
        budget: RestartBudget | None = None,
    ) -> None:
        self.broker_url = broker_url
        #: the caller made their health check on this machine (``check_local_sandbox``)
        self.skip_health_check = skip_health_check
        self.run_dir = run_dir
        #: matches played at once: the worker's concurrency
        self.count = count
        self.key_file = key_file
        #: the organiser's own config said ``sandbox: none``: these workers are theirs to allow it
        self.allow_unsandboxed = allow_unsandboxed
        self.budget = budget or RestartBudget()
        self.procs: list[subprocess.Popen[bytes]] = []
        self._started = 0  # workers started so far: the next one's number is this + 1
        self._current: tuple[subprocess.Popen[bytes], str] | None = None
        self.from_standby = False  # whether the first worker was the standby process

    @property
    def work_dir(self) -> Path:
        return self.run_dir / "workers" / WORK_SUBDIR

    @property
    def pid_file(self) -> Path:
        return self.work_dir / "worker.pid"

    def start(self) -> LocalWorkers:
        self.work_dir.mkdir(parents=True, exist_ok=True)
        (self.run_dir / "logs").mkdir(parents=True, exist_ok=True)
        self._spawn(use_standby=True)
        return self

    def _spawn(self, *, use_standby: bool) -> str:
        self._started += 1
        number = self._started
        name = f"local-{number}-{os.getpid()}@{socket.gethostname()}"
        argv = [
            "worker",
            "--concurrency",
            str(self.count),
            "--name",
            name,
            "--work-dir",
            str(self.work_dir),
            *(["--key-file", str(self.key_file)] if self.key_file else []),
            *(["--allow-unsandboxed"] if self.allow_unsandboxed else []),
            *(["--skip-health-check"] if self.skip_health_check else []),
        ]
        log_path = self.run_dir / "logs" / f"worker-{number}.log"
        # never on the command line: any local user reads that with ps
        env = {**os.environ, BROKER_ENV: self.broker_url}
        # the sandbox's helpers compiled once per machine (the user's cache, where this run's
        # own health check put them), not once per run directory (``workers.cache_paths``)
        env.setdefault(CACHE_DIR_ENV, str(user_cache()))
        proc = standby.hand_off(argv, env, log_path) if use_standby else None
        if use_standby:
            self.from_standby = proc is not None
        if proc is None:
            with open(log_path, "ab") as out:
                proc = subprocess.Popen(
                    [sys.executable, "-m", "runner.cli", *argv],
                    stdin=subprocess.DEVNULL,
                    stdout=out,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                    preexec_fn=parent_death_signal(signal.SIGKILL),
                    env=env,
                )
        self.procs.append(proc)
        self._current = (proc, name)
        procs_mod.record(self.pid_file, proc.pid, f"tourney worker {number} of {self.run_dir}")
        return name

    def alive(self) -> int:
        return sum(1 for p in self.procs if p.poll() is None)

    def supervise(self) -> Restarted | None:
        """Called while the run plays: if the worker has exited, start another (None: it lives).
        ``LocalWorkersFailing`` once it died more often than ``budget`` allows."""
        if self._current is None:
            return None
        proc, name = self._current
        # not reaped yet: its group id cannot name anyone else's processes while we kill them
        if proc.returncode is None and not procs_mod.wait_unreaped(proc.pid, 0):
            return None
        self._stop_one(proc, 0.0)  # its pool processes, should any have outlived it, then reap it
        code = proc.returncode if proc.returncode is not None else -1
        self.procs.remove(proc)
        if not self.budget.allow(time.monotonic()):
            self._current = None
            raise LocalWorkersFailing(
                f"the local worker keeps dying: {name} exited ({_exit_text(code)}) after "
                f"{self.budget.restarts} restart(s) within {self.budget.window_s:.0f}s "
                f"(see {self.run_dir / 'logs'}/worker-*.log)"
            )
        started = self._spawn(use_standby=False)
        restarted = Restarted(name, code, started)
        log.warning("%s", restarted.describe())
        return restarted

    def begin_stop(self) -> None:
        """Ask the worker to stop (Celery's cold shutdown: the run needs nothing it is doing)."""
        self._current = None  # an exit from now on is expected
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    p.send_signal(signal.SIGQUIT)

    def stop(self, grace_s: float = 10.0) -> None:
        """``begin_stop``, wait up to ``grace_s`` for the worker to exit or at least for its
        pool processes to (they close their sandboxes), then SIGKILL its process group: the
        rest of a cold shutdown is Celery joining its own threads, which nothing needs."""
        self.begin_stop()
        procs, self.procs = self.procs, []
        deadline = time.monotonic() + grace_s
        for p in procs:
            self._stop_one(p, max(0.1, deadline - time.monotonic()))
        if self._started:  # every worker started was recorded in the one pid file, each over the last
            procs_mod.forget(self.pid_file)
        sweep_sandbox_cgroups()

    @staticmethod
    def _stop_one(p: subprocess.Popen[bytes], wait_s: float) -> None:
        # unreaped, its pid is still its group's id: the group kill reaches only our processes
        if p.returncode is None:
            procs_mod.wait_unreaped_or_childless(p.pid, wait_s)
            procs_mod.kill_own_group(p.pid)  # what is left of it, pool processes that outlived it
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(5.0)
