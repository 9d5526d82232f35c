"""Process primitives of ``sandbox: none`` (docs/architecture.md, row 14): start an
entry program in a process group of its own under rlimits, reap it, kill its group, and
run one move to completion (``run_process``).

Every program runs in its own process group (not its own session: see
``start_process``), under rlimits (CPU, address space, file size, open files, no core
dumps; see ``start_process`` for when they are set), with a wall-clock deadline, an
output cap, and the whole group killed when it is done.

Measurements come from ``wait4`` (CPU time and peak RSS of the program and
the descendants it waited for), which costs nothing extra per move.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import selectors
import shutil
import signal
import subprocess
import time
from pathlib import Path

import psutil

from runner.domain.match_values import Limits
from workers.sandbox.base import HostError, RunOutcome
from workers.sandbox.classify import Measurement, judged
from workers.sandbox.exiting import leftovers_after_grace
from workers.sandbox.launcher import built_helper
from workers.sandbox.limits import STDERR_TAIL, cpu_rlimit_s
from workers.sandbox.plain_user import entry_uid

#: the helper that starts a program as the entry user
ENTRY_USER_SOURCE = Path(__file__).with_name("entry_user.c")

# exec errors that come from the entry's own files or ``run`` line
_ENTRY_START_ERRORS = {errno.ENOENT, errno.EACCES, errno.ENOEXEC, errno.ENOTDIR, errno.EPERM, errno.ELOOP}


def _rlimit_value(wanted: int, resource_id: int) -> int:
    """``wanted`` clamped to the current hard limit (an unprivileged process cannot raise it)."""
    _, hard = resource.getrlimit(resource_id)
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


def entry_rlimits(limits: Limits, *, cpu_s: float | None) -> list[tuple[int, tuple[int, int]]]:
    """The rlimits for a program under ``limits`` (``cpu_s`` None: no CPU limit)."""
    settings: list[tuple[int, tuple[int, int]]] = []
    if cpu_s is not None:
        # the same backstop as the sandbox's: SIGXCPU at the soft limit, SIGKILL at the hard one
        soft, hard = cpu_rlimit_s(cpu_s)
        rlimit_cpu = (_rlimit_value(soft, resource.RLIMIT_CPU), _rlimit_value(hard, resource.RLIMIT_CPU))
        settings.append((resource.RLIMIT_CPU, rlimit_cpu))
    mem = _rlimit_value(limits.memory_mb * 1024 * 1024, resource.RLIMIT_AS)
    settings.append((resource.RLIMIT_AS, (mem, mem)))
    fsize = _rlimit_value(limits.file_size_mb * 1024 * 1024, resource.RLIMIT_FSIZE)
    settings.append((resource.RLIMIT_FSIZE, (fsize, fsize)))
    nofile = _rlimit_value(limits.open_files, resource.RLIMIT_NOFILE)
    settings.append((resource.RLIMIT_NOFILE, (nofile, nofile)))
    settings.append((resource.RLIMIT_CORE, (0, 0)))
    return settings


def entry_env(home: Path, tmpdir: Path) -> dict[str, str]:
    """The environment an entry sees: a PATH, a home and a private TMPDIR; nothing of ours."""
    return {
        "PATH": os.environ.get("PATH", "/usr/local/bin:/usr/bin:/bin"),
        "HOME": str(home),
        "TMPDIR": str(tmpdir),
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


#: how long to wait for a killed process group to be gone
GROUP_DEATH_S = 2.0


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def kill_group_and_wait(pgid: int) -> None:
    """SIGKILL the group and wait (bounded) until none of it runs any more.

    SIGKILL is delivered asynchronously: a killed orphan may run on for a
    moment on a loaded machine, and we cannot wait4 a process that is not our
    child. The cheap ``killpg(pgid, 0)`` fails at once when the group is
    empty, which is the usual case; only stragglers cost a /proc scan.
    """
    kill_group(pgid)
    deadline = time.monotonic() + GROUP_DEATH_S
    while time.monotonic() < deadline and _live_members(pgid):
        kill_group(pgid)  # again: a member may have forked before it died
        time.sleep(0.002)


def _live_members(pgid: int) -> list[int]:
    """Pids still running (not zombies) in process group ``pgid``."""
    try:
        os.killpg(pgid, 0)  # cheap check first: is there anyone at all?
    except (ProcessLookupError, PermissionError):
        return []
    alive: list[int] = []
    for p in psutil.process_iter():
        try:
            if os.getpgid(p.pid) == pgid and p.status() != psutil.STATUS_ZOMBIE:
                alive.append(p.pid)
        except (psutil.Error, ProcessLookupError, PermissionError):
            continue
    return alive


def _as_entry_user(uid: int, rlimits: list[tuple[int, tuple[int, int]]]) -> list[str]:
    """``workers/sandbox/entry_user.c`` setting ``rlimits`` and becoming ``uid``, then
    exec'ing the program: a process of another uid takes rlimits from us only with
    CAP_SYS_RESOURCE, which a container's root often lacks, and Popen(user=...) gives up
    Python's vfork (that and prlimit(1) cost 6-8 ms a move; this helper about one exec)."""

    def value(v: int) -> str:
        return "unlimited" if v == resource.RLIM_INFINITY else str(v)

    helper = built_helper(ENTRY_USER_SOURCE, "entry_user")
    return [
        str(helper),
        str(uid),
        str(uid),
        *(f"{rid}={value(s)}:{value(h)}" for rid, (s, h) in rlimits),
        "--",
    ]


def start_process(
    argv: list[str], cwd: Path, env: dict[str, str], rlimits: list[tuple[int, tuple[int, int]]]
) -> subprocess.Popen[bytes] | str:
    """The started process, or why it could not start (the entry's fault: a bad ``run``).

    The rlimits are applied with ``prlimit`` right after the exec rather than
    in a ``preexec_fn``: that keeps Python's vfork fast path (a ``preexec_fn``
    forces a full fork, doubling the cost of a short move) and is safe in a
    process with threads (the Celery worker has a heartbeat thread). The
    cost is a window of microseconds, inside the dynamic loader, before the
    limits hold; CPU time is counted from the exec anyway. Acceptable for
    trusted entries; the bwrap host has no such window.

    The program leads a process group of its own (``process_group=0``: killed and
    checked for leftovers as one group), but stays in the worker's session. A session
    of its own (``setsid``) would also put it in a scheduler autogroup of its own
    (``/proc/sys/kernel/sched_autogroup_enabled``), made and torn down for every move:
    measured on a loaded 2-core machine, 0.2-1 ms of wall time per move more than a
    bare ``subprocess.run`` (issue 13), for nothing this host promises. A group that
    is not the terminal's foreground group gets no terminal signals either way.
    """
    uid = entry_uid()
    # as root, as the entry user: the organiser's secrets out of its reach (plain_user); the
    # limits are set by the helper before the program's exec
    if uid is not None:
        program = argv[0] if "/" in argv[0] else shutil.which(argv[0], path=env.get("PATH"))
        if program is None or not (cwd / program).exists():  # as Popen says it
            return f"cannot start {argv[0]!r}: No such file or directory"
        argv, rlimits = _as_entry_user(uid, rlimits) + argv, []
    try:
        proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            process_group=0,
            close_fds=True,
        )
    except OSError as e:
        if e.errno in _ENTRY_START_ERRORS:
            return f"cannot start {argv[0]!r}: {e.strerror or e}"
        raise HostError(f"cannot start {argv[0]}: {e}") from e
    except subprocess.SubprocessError as e:
        raise HostError(f"cannot start {argv[0]}: {e}") from e
    for rid, values in rlimits:
        try:
            resource.prlimit(proc.pid, rid, values)
        except ProcessLookupError:
            break  # already gone: nothing left to limit
        except (PermissionError, ValueError, OSError) as e:
            # e.g. a set-uid program: a limit we cannot set is a runner fault
            kill_group(proc.pid)
            proc.communicate()
            raise HostError(f"cannot set resource limits on {argv[0]}: {e}") from e
    return proc


def open_pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None  # old kernel: fall back to polling wait4


class Reaper:
    """Collects a child's exit status and rusage exactly once."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        self.proc = proc
        self.status: int | None = None
        self.rusage: resource.struct_rusage | None = None

    def poll(self) -> bool:
        if self.status is not None:
            return True
        try:
            pid, status, ru = os.wait4(self.proc.pid, os.WNOHANG)
        except ChildProcessError:
            self.status = 0
            return True
        if pid == 0:
            return False
        self._record(status, ru)
        return True

    def wait(self) -> None:
        if self.status is not None:
            return
        try:
            _, status, ru = os.wait4(self.proc.pid, 0)
        except ChildProcessError:
            self.status = 0
            return
        self._record(status, ru)

    def _record(self, status: int, ru: resource.struct_rusage) -> None:
        self.status = status
        self.rusage = ru
        # keep Popen from trying to reap it again
        self.proc.returncode = os.waitstatus_to_exitcode(status)

    @property
    def exit_code(self) -> int | None:
        if self.status is None or not os.WIFEXITED(self.status):
            return None
        return os.WEXITSTATUS(self.status)

    @property
    def signal(self) -> int | None:
        if self.status is None or not os.WIFSIGNALED(self.status):
            return None
        return os.WTERMSIG(self.status)

    @property
    def cpu_ms(self) -> float:
        if self.rusage is None:
            return 0.0
        return (self.rusage.ru_utime + self.rusage.ru_stime) * 1000.0

    @property
    def peak_rss_kb(self) -> int:
        return int(self.rusage.ru_maxrss) if self.rusage is not None else 0

    def measurement(
        self,
        *,
        wall_ms: float,
        timed_out: bool = False,
        output_over: bool = False,
        left_count: int = 0,
        left_comm: str = "",
        stderr_tail: bytes = b"",
    ) -> Measurement:
        """What ``wait4`` and the host saw of this run (``classify`` judges it)."""
        return Measurement(
            exit_code=self.exit_code,
            signal=self.signal,
            wall_ms=wall_ms,
            cpu_ms=self.cpu_ms,
            peak_rss_kb=self.peak_rss_kb,
            timed_out=timed_out,
            output_over=output_over,
            left_count=left_count,
            left_comm=left_comm,
            stderr_tail=stderr_tail,
        )


def _comm(pids: list[int]) -> str:
    """The name of the first of ``pids`` that can still be read (killed ones become zombies)."""
    for pid in pids:
        try:
            return psutil.Process(pid).name()
        except psutil.Error:
            continue
    return ""


def run_process(
    argv: list[str],
    stdin: bytes,
    *,
    cwd: Path,
    env: dict[str, str],
    limits: Limits,
    stderr_keep: int = STDERR_TAIL,
) -> RunOutcome:
    """Run ``argv`` to completion under ``limits``; every process of it is dead on return."""
    cpu_limit_s = limits.cpu_s
    started = time.monotonic()
    proc = start_process(argv, cwd, env, entry_rlimits(limits, cpu_s=cpu_limit_s))
    if isinstance(proc, str):
        return judged(Measurement(exit_code=None, start_error=proc), b"", limits, cpu_limit_s=cpu_limit_s)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    pgid = proc.pid  # process_group=0: the child leads its own group
    reaper = Reaper(proc)
    cap = limits.output_kb * 1024
    out = bytearray()
    err = bytearray()
    over_cap = timed_out = False
    pidfd = open_pidfd(proc.pid)
    sel = selectors.DefaultSelector()
    try:
        pending = memoryview(stdin)
        in_fd, out_fd, err_fd = proc.stdin.fileno(), proc.stdout.fileno(), proc.stderr.fileno()
        for fd in (in_fd, out_fd, err_fd):
            os.set_blocking(fd, False)
        if pending:
            sel.register(in_fd, selectors.EVENT_WRITE)
        else:
            proc.stdin.close()
        sel.register(out_fd, selectors.EVENT_READ)
        sel.register(err_fd, selectors.EVENT_READ)
        if pidfd is not None:
            sel.register(pidfd, selectors.EVENT_READ)
        deadline = started + limits.move_wall_s
        exited = False
        while not exited and not over_cap:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                exited = reaper.poll()
                timed_out = not exited
                break
            tick = remaining if pidfd is not None else min(remaining, 0.005)
            for key, _ in sel.select(tick):
                fd = key.fd
                if fd == in_fd:
                    try:
                        n = os.write(in_fd, pending[:65536])
                        pending = pending[n:]
                    except (BrokenPipeError, BlockingIOError) as e:
                        if isinstance(e, BlockingIOError):
                            continue
                        pending = pending[:0]  # it stopped reading: its choice
                    if not pending:
                        sel.unregister(in_fd)
                        proc.stdin.close()
                elif fd in (out_fd, err_fd):
                    if read_into(fd, out if fd == out_fd else err, sel) and fd == out_fd and len(out) > cap:
                        over_cap = True
                    if fd == err_fd and len(err) > 2 * stderr_keep:
                        del err[:-stderr_keep]
                elif fd == pidfd:
                    exited = True
            if pidfd is None and not exited:
                exited = reaper.poll()
        if exited:
            reaper.poll()
            # what the program wrote before exiting is all in the pipes now; a
            # leftover descendant may still be writing, so read a bounded amount
            for fd, buf, most in ((out_fd, out, cap), (err_fd, err, 2 * stderr_keep)):
                with contextlib.suppress(KeyError, ValueError):
                    sel.get_key(fd)
                    while len(buf) <= most and read_into(fd, buf, sel):
                        pass
            over_cap = over_cap or len(out) > cap
        killed_by_us = not reaper.poll()
        # leftovers get the grace to go, on the move's clock and never past its deadline
        # (workers.sandbox.exiting): still running then is left_processes, or a timeout
        grace_s = min(limits.exit_grace_ms / 1000.0, max(0.0, deadline - time.monotonic()))
        left = [] if killed_by_us else leftovers_after_grace(lambda: _live_members(pgid), grace_s)
        if left and time.monotonic() >= deadline:
            timed_out, left = True, []
        left_comm = _comm(left)  # before the kill: a killed process may be gone by the time we look
        kill_group(pgid)
        reaper.wait()
        kill_group_and_wait(pgid)
    finally:
        sel.close()
        if pidfd is not None:
            os.close(pidfd)
        for f in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                f.close()
        if reaper.status is None:
            kill_group(pgid)
            reaper.wait()
    wall_ms = (time.monotonic() - started) * 1000.0
    stderr_tail = bytes(err[-stderr_keep:])
    measured = reaper.measurement(
        wall_ms=wall_ms,
        timed_out=timed_out,
        output_over=over_cap,
        left_count=len(left),
        left_comm=left_comm,
        stderr_tail=stderr_tail,
    )
    return judged(measured, bytes(out[:cap]), limits, cpu_limit_s=cpu_limit_s)


def read_into(fd: int, buf: bytearray, sel: selectors.BaseSelector) -> bool:
    """Read what is there; unregister ``fd`` at EOF. False when nothing more is to be had now."""
    try:
        data = os.read(fd, 65536)
    except BlockingIOError:
        return False
    except OSError:
        data = b""
    if not data:
        with contextlib.suppress(KeyError, ValueError):
            sel.unregister(fd)
        return False
    buf += data
    return True
