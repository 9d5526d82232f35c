"""Kill only what we started (docs/scale-out.md).

A pid alone names a process only while that process lives: pids are reused,
within minutes on a busy machine. So a process we may have to stop later,
from another coordinator, is recorded with its *identity*: pid, kernel start
time (``psutil.Process.create_time``, from ``/proc/<pid>/stat``), the pid of
its parent at spawn time and a tag. ``kill_recorded`` signals it only if a
live process still has that pid *and* that start time; a reused pid has a
later start time and is left alone. Nothing here matches command lines.

The identity is kept in ``<name>.identity`` (JSON) beside the plain
``<name>.pid`` file that humans and older tools read.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import psutil

log = logging.getLogger("tourney.procs")

#: start times from /proc count clock ticks (1/100 s), which psutil turns into floats from
#: the same boot time, so one process always reads the same value: the tolerance only
#: absorbs float rounding. Less than a tick: a process started one tick apart (a bystander
#: started 10 ms before the one recorded, as ``tourney run`` now starts its local worker at
#: once) is never taken for the recorded one (it was 50 ms, 5 ticks)
_START_TIME_TOLERANCE_S = 0.001


@dataclass(frozen=True)
class ProcessIdentity:
    pid: int
    create_time: float
    parent_pid: int
    tag: str

    @classmethod
    def of(cls, pid: int, tag: str) -> ProcessIdentity:
        proc = psutil.Process(pid)
        return cls(pid, proc.create_time(), proc.ppid(), tag)

    def matches(self, proc: psutil.Process) -> bool:
        return proc.pid == self.pid and abs(proc.create_time() - self.create_time) < _START_TIME_TOLERANCE_S

    def alive(self) -> bool:
        try:
            proc = psutil.Process(self.pid)
            return self.matches(proc) and proc.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False


def identity_path(pid_file: Path) -> Path:
    return pid_file.with_suffix(".identity")


def record(pid_file: Path, pid: int, tag: str) -> ProcessIdentity | None:
    """Write ``pid_file`` (the pid) and its identity file; None if the process already died."""
    try:
        ident = ProcessIdentity.of(pid, tag)
    except psutil.Error:
        return None
    pid_file.write_text(str(pid))
    tmp = identity_path(pid_file).with_suffix(".identity.tmp")
    tmp.write_text(json.dumps(asdict(ident)))
    tmp.replace(identity_path(pid_file))
    return ident


def forget(pid_file: Path) -> None:
    for f in (pid_file, identity_path(pid_file)):
        with contextlib.suppress(OSError):
            f.unlink()


def read_identity(pid_file: Path) -> ProcessIdentity | None:
    try:
        d = json.loads(identity_path(pid_file).read_text())
        return ProcessIdentity(int(d["pid"]), float(d["create_time"]), int(d["parent_pid"]), str(d["tag"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def kill_recorded(pid_file: Path, *, wait_s: float = 5.0) -> bool:
    """SIGKILL the process recorded in ``pid_file`` (and its descendants) if it is still the
    very process recorded; the files are removed either way. True if something was killed."""
    ident = read_identity(pid_file)
    try:
        if ident is None:
            if pid_file.exists():
                log.warning(
                    "%s has no identity record; not killing pid %s", pid_file, pid_file.read_text()[:20]
                )
            return False
        try:
            proc = psutil.Process(ident.pid)
            if not ident.matches(proc):
                log.info("pid %d of %s is another process now; left alone", ident.pid, ident.tag)
                return False
            # descendants are identified through the live, verified parent, not by pid
            for child in proc.children(recursive=True):
                with contextlib.suppress(psutil.Error):
                    child.kill()
            proc.kill()
            with contextlib.suppress(psutil.Error):
                proc.wait(wait_s)
            log.warning("killed stale %s (pid %d)", ident.tag, ident.pid)
            return True
        except psutil.Error:
            return False
    finally:
        forget(pid_file)


def wait_unreaped(pid: int, timeout_s: float) -> bool:
    """Wait up to ``timeout_s`` for our child ``pid`` to exit *without reaping it*: while it
    is a zombie its pid (and process group id) cannot be reused, so signalling its group
    afterwards reaches only processes we started. True if it has exited."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
        except ChildProcessError:
            return True  # already reaped by someone else: nothing of ours to wait for
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.05)


def wait_unreaped_or_childless(pid: int, timeout_s: float) -> None:
    """Wait up to ``timeout_s`` until our unreaped child ``pid`` has exited or has no live
    child of its own (a Celery worker whose pool processes are done: what is left of its
    cold shutdown is joining its own threads, which takes it a second or two)."""
    deadline = time.monotonic() + timeout_s
    try:
        parent = psutil.Process(pid)  # unreaped, so this pid is still our child
    except psutil.Error:
        return
    while time.monotonic() < deadline:
        if wait_unreaped(pid, 0):
            return
        try:
            live = [c for c in parent.children() if c.status() != psutil.STATUS_ZOMBIE]
        except psutil.Error:
            return
        if not live:
            return
        time.sleep(0.02)


def kill_own_group(pid: int) -> None:
    """SIGKILL the process group led by our child ``pid`` (call while it is unreaped)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)
