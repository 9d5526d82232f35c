"""``sandbox: none``: entries as plain subprocesses. For trusted entries only.

Every program runs in its own process group (not its own session: see ``_start``), under
rlimits (CPU, address space, file size, open files, no core dumps; see
``_start`` for when they are set), with a wall-clock deadline, an output cap, and the
whole group killed when it is done. Each game gets a private temporary copy
of the entry directory (its cwd, so ICFP'98 ``support/`` state stays inside
one game) and a private ``TMPDIR``.

What this host does *not* do, and why it is for trusted entries only:

* no namespaces: an entry sees the real file system and network;
* a descendant that calls ``setsid()`` (or ``setpgid()`` into another group of
  the worker's session) leaves the process group and escapes both the leftover
  check and the final kill;
* ``/tmp/arena.<MARK>`` (POTM, seed 002) is a literal path, so it is the
  machine's real ``/tmp`` file. The host deletes it when a game opens and when
  it closes, which keeps state from leaking from one game to the next, and
  never lets two games with the same mark run at once on one machine: a game
  holds an exclusive lock on ``/tmp/arena.<MARK>.tourney-lock`` (``flock``:
  across threads and worker processes, released by the kernel if the worker
  dies), so a second such game waits for the first to end instead of wiping
  its state (the opponent of the same game can still read the file: trusted
  entries only);
* no process-count limit: ``RLIMIT_NPROC`` counts every process of the user,
  not of the entry, so it would break unrelated work (and root ignores it);
* if the referee itself is killed (SIGKILL), the move in flight runs on until
  it exits by itself (a persistent brain sees EOF on stdin), and the game's
  temporary directory stays behind until ``sweep_stale_dirs`` removes it.

Measurements come from ``wait4`` (CPU time and peak RSS of the program and
the descendants it waited for), which costs nothing extra per move.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import fcntl
import logging
import os
import re
import resource
import selectors
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import psutil

from runner.domain.contracts import Limits
from workers.sandbox.base import EntryHost, HostError, HostFactory, InteractiveProcess, RunOutcome, take_line
from workers.sandbox.build_output import (
    BUILD_OUTPUT_BYTES,
    BuildOutputError,
    apparent_bytes,
    build_output_failure,
    check_output_size,
)
from workers.sandbox.classify import Measurement, judged
from workers.sandbox.exiting import leftovers_after_grace
from workers.sandbox.limits import BUILD_LOG_TAIL, STDERR_TAIL, cpu_rlimit_s

log = logging.getLogger(__name__)

#: temporary directories: per game (working copy + TMPDIR) and per build, named with our pid
GAME_DIR_PREFIX = "tourney-game-"
BUILD_DIR_PREFIX = "tourney-build-"
#: a directory of a dead process this old is debris (see ``sweep_stale_dirs``)
STALE_DIR_S = 600.0

# exec errors that come from the entry's own files or ``run`` line
_ENTRY_START_ERRORS = {errno.ENOENT, errno.EACCES, errno.ENOEXEC, errno.ENOTDIR, errno.EPERM, errno.ELOOP}


def _rlimit_value(wanted: int, resource_id: int) -> int:
    """``wanted`` clamped to the current hard limit (an unprivileged process cannot raise it)."""
    _, hard = resource.getrlimit(resource_id)
    return wanted if hard == resource.RLIM_INFINITY else min(wanted, hard)


def _rlimits(limits: Limits, *, cpu_s: float | None) -> list[tuple[int, tuple[int, int]]]:
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


def _kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def _kill_group_and_wait(pgid: int) -> None:
    """SIGKILL the group and wait (bounded) until none of it runs any more.

    SIGKILL is delivered asynchronously: a killed orphan may run on for a
    moment on a loaded machine, and we cannot wait4 a process that is not our
    child. The cheap ``killpg(pgid, 0)`` fails at once when the group is
    empty, which is the usual case; only stragglers cost a /proc scan.
    """
    _kill_group(pgid)
    deadline = time.monotonic() + GROUP_DEATH_S
    while time.monotonic() < deadline and _live_members(pgid):
        _kill_group(pgid)  # again: a member may have forked before it died
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


def _start(
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
            _kill_group(proc.pid)
            proc.communicate()
            raise HostError(f"cannot set resource limits on {argv[0]}: {e}") from e
    return proc


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None  # old kernel: fall back to polling wait4


class _Reaper:
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
    proc = _start(argv, cwd, env, _rlimits(limits, cpu_s=cpu_limit_s))
    if isinstance(proc, str):
        return judged(Measurement(exit_code=None, start_error=proc), b"", limits, cpu_limit_s=cpu_limit_s)
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    pgid = proc.pid  # process_group=0: the child leads its own group
    reaper = _Reaper(proc)
    cap = limits.output_kb * 1024
    out = bytearray()
    err = bytearray()
    over_cap = timed_out = False
    pidfd = _pidfd(proc.pid)
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
                    if _read_into(fd, out if fd == out_fd else err, sel) and fd == out_fd and len(out) > cap:
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
                    while len(buf) <= most and _read_into(fd, buf, sel):
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
        _kill_group(pgid)
        reaper.wait()
        _kill_group_and_wait(pgid)
    finally:
        sel.close()
        if pidfd is not None:
            os.close(pidfd)
        for f in (proc.stdin, proc.stdout, proc.stderr):
            with contextlib.suppress(OSError):
                f.close()
        if reaper.status is None:
            _kill_group(pgid)
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


def _read_into(fd: int, buf: bytearray, sel: selectors.BaseSelector) -> bool:
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


class PlainProcess(InteractiveProcess):
    """A persistent entry process (gomocup) spoken to line by line."""

    def __init__(self, argv: list[str], cwd: Path, env: dict[str, str], limits: Limits):
        self.limits = limits
        # a persistent process has one CPU budget for the game, if any
        self._cpu_limit_s = limits.game_wall_s
        proc = _start(argv, cwd, env, _rlimits(limits, cpu_s=self._cpu_limit_s))
        self._start_error = proc if isinstance(proc, str) else None
        self._proc = None if isinstance(proc, str) else proc
        self._reaper = None if isinstance(proc, str) else _Reaper(proc)
        self._buf = bytearray()
        self._err = bytearray()
        self._dead: RunOutcome | None = None
        self._closed = False
        self._pidfd: int | None = None
        self._last_cpu_ms = 0.0
        self._started = time.monotonic()
        if self._proc is not None:
            assert self._proc.stdout is not None and self._proc.stderr is not None
            assert self._proc.stdin is not None
            for f in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
                os.set_blocking(f.fileno(), False)
            self._pidfd = _pidfd(self._proc.pid)
        else:
            why = self._start_error or "could not start"
            not_started = Measurement(exit_code=None, start_error=why)
            self._dead = judged(not_started, b"", limits, cpu_limit_s=self._cpu_limit_s)

    @property
    def pid(self) -> int | None:
        return self._proc.pid if self._proc is not None else None

    def send(self, text: str) -> None:
        """Write ``text``; a process that stops reading its input for a whole move
        time is killed (the next ``read_line`` reports it), so we never block."""
        if self._dead is not None or self._proc is None or self._proc.stdin is None:
            return  # the next read_line reports why
        fd = self._proc.stdin.fileno()
        data = memoryview(text.encode())
        deadline = time.monotonic() + self.limits.move_wall_s
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_WRITE)
            while data:
                try:
                    n = os.write(fd, data)
                    data = data[n:]
                    continue
                except BlockingIOError:
                    pass
                except OSError:
                    return  # it died or closed stdin; read_line will see the exit
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    self._die(timed_out=True)  # it did not read its input for a whole move time
                    return
                sel.select(remaining)

    def read_line(self, timeout_s: float, *, pause: bool = True) -> str | RunOutcome:
        # plain processes are never paused: ``pause`` changes nothing here
        if self._dead is not None:
            return self._dead
        proc, reaper = self._proc, self._reaper
        assert proc is not None and reaper is not None
        assert proc.stdout is not None and proc.stderr is not None
        out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
        cap = self.limits.output_kb * 1024
        deadline = time.monotonic() + max(0.0, timeout_s)
        sel = selectors.DefaultSelector()
        try:
            sel.register(out_fd, selectors.EVENT_READ)
            sel.register(err_fd, selectors.EVENT_READ)
            if self._pidfd is not None:
                sel.register(self._pidfd, selectors.EVENT_READ)
            exited = False
            while True:
                line = self._take_line()
                if line is not None:
                    return line
                if len(self._buf) > cap:
                    return self._die(output_over=True)  # a line longer than the output cap
                if exited:
                    return self._die_exited()
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return self._die(timed_out=True, wall_limit_s=timeout_s)
                tick = remaining if self._pidfd is not None else min(remaining, 0.005)
                for key, _ in sel.select(tick):
                    if key.fd == out_fd:
                        _read_into(out_fd, self._buf, sel)
                    elif key.fd == err_fd:
                        _read_into(err_fd, self._err, sel)
                        del self._err[:-STDERR_TAIL]
                    else:
                        exited = True
                if self._pidfd is None and not exited:
                    exited = reaper.poll()
                if exited:
                    # drain what it wrote before dying; a final answer still counts
                    while _read_into(out_fd, self._buf, sel):
                        pass
        finally:
            sel.close()

    def _take_line(self) -> str | None:
        return take_line(self._buf)

    def _die_exited(self) -> RunOutcome:
        return self._die()

    def _die(
        self, *, timed_out: bool = False, output_over: bool = False, wall_limit_s: float | None = None
    ) -> RunOutcome:
        """Kill what is left of the process and judge what was measured (``classify`` names the
        verdict): it exited, or the host stopped it for the flag it is given."""
        reaper = self._reaper
        assert reaper is not None
        self._kill()
        measured = reaper.measurement(
            wall_ms=(time.monotonic() - self._started) * 1000.0,
            timed_out=timed_out,
            output_over=output_over,
            stderr_tail=bytes(self._err[-STDERR_TAIL:]),
        )
        ended = judged(
            measured, bytes(self._buf), self.limits, cpu_limit_s=self._cpu_limit_s, wall_limit_s=wall_limit_s
        )
        if ended.failure is None:
            # exited cleanly in the middle of a game: the protocol decides (no_output)
            ended = dataclasses.replace(ended, detail="exited with code 0 before answering")
        self._dead = ended
        return self._dead

    @property
    def cpu_ms(self) -> float:
        if self._reaper is not None and self._reaper.rusage is not None:
            return self._reaper.cpu_ms
        if self._proc is None:
            return 0.0
        try:
            t = psutil.Process(self._proc.pid).cpu_times()
            self._last_cpu_ms = (t.user + t.system + t.children_user + t.children_system) * 1000.0
        except psutil.Error:
            pass
        return self._last_cpu_ms

    def _kill(self) -> None:
        if self._proc is None or self._reaper is None:
            return
        _kill_group(self._proc.pid)
        self._reaper.wait()
        _kill_group_and_wait(self._proc.pid)  # descendants that outlived the leader

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._kill()
        if self._proc is not None:
            for f in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
                if f is not None:
                    with contextlib.suppress(OSError):
                        f.close()
        if self._pidfd is not None:
            os.close(self._pidfd)
            self._pidfd = None


def arena_file(mark: str) -> Path | None:
    """POTM's ``/tmp/arena.<MARK>``, for a mark that is a harmless file-name character."""
    if len(mark) == 1 and (mark.isalnum() or mark in "_-+="):
        return Path(f"/tmp/arena.{mark}")
    return None


def _speaks_potm_arena(entry_dir: Path) -> bool:
    """Whether the entry keeps ``/tmp/arena.<MARK>`` (its entry.yaml names potm-arena)."""
    try:
        text = (entry_dir / "entry.yaml").read_text(errors="replace")
    except OSError:
        return True  # cannot tell: be safe
    return re.search(r"^protocol:\s*['\"]?potm-arena", text, re.MULTILINE) is not None


def _lock_arena(arena: Path) -> int:
    """Hold ``arena``'s game lock (an fd; closing it releases the lock), waiting for
    a game that has it: two games with one mark must not share ``/tmp/arena.<MARK>``."""
    path = arena.with_name(arena.name + ".tourney-lock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as e:
        raise HostError(f"cannot lock {path} for the game's arena file: {e}") from e
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning(
                "sandbox none: waiting for another game to end before using %s "
                "(without a sandbox every game shares the machine's /tmp)",
                arena,
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError as e:
        os.close(fd)
        raise HostError(f"cannot lock {path} for the game's arena file: {e}") from e
    return fd


def new_game_dir(entry_dir: Path) -> Path:
    """A fresh game directory: ``work/`` a copy of ``entry_dir``, ``tmp/`` empty."""
    root = Path(tempfile.mkdtemp(prefix=f"{GAME_DIR_PREFIX}{os.getpid()}-"))
    try:
        shutil.copytree(entry_dir, root / "work", symlinks=True)
        (root / "tmp").mkdir()
    except OSError as e:
        shutil.rmtree(root, ignore_errors=True)
        raise HostError(f"cannot make a working copy of {entry_dir}: {e}") from e
    return root


class PlainHost(EntryHost):
    """One entry for one game: a private copy of its directory and a private TMPDIR.

    ``root``: a game directory as ``new_game_dir`` makes it, handed over by the caller
    (``workers.sandbox.plain_reuse`` keeps untouched ones for the entry's next game)."""

    def __init__(self, entry_dir: Path, mark: str, root: Path | None = None):
        self._closed = False
        self._procs: list[PlainProcess] = []
        self._root = root if root is not None else new_game_dir(entry_dir)
        self.workdir = self._root / "work"
        self._tmp = self._root / "tmp"
        self._arena = arena_file(mark)
        self._arena_lock: int | None = None
        if self._arena is not None and _speaks_potm_arena(entry_dir):
            try:
                self._arena_lock = _lock_arena(self._arena)
            except HostError:
                shutil.rmtree(self._root, ignore_errors=True)
                raise
        self._remove_arena()

    def _env(self) -> dict[str, str]:
        return entry_env(self.workdir, self._tmp)

    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        if self._closed:
            raise HostError("host already closed")
        return run_process(argv, stdin, cwd=self.workdir, env=self._env(), limits=limits)

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        if self._closed:
            raise HostError("host already closed")
        proc = PlainProcess(argv, self.workdir, self._env(), limits)
        self._procs.append(proc)
        return proc

    def _remove_arena(self) -> None:
        # only under the arena's lock: an entry of another protocol with the same mark
        # must not delete the file of a potm-arena game playing beside it
        if self._arena is not None and self._arena_lock is not None:
            with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
                self._arena.unlink()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._end_game()
        shutil.rmtree(self._root, ignore_errors=True)

    def _end_game(self) -> None:
        """Everything of ``close`` but removing the game directory: its processes killed,
        the arena file removed and its lock released."""
        for p in self._procs:
            p.close()
        self._remove_arena()
        if self._arena_lock is not None:
            os.close(self._arena_lock)  # the next game with this mark may start
            self._arena_lock = None


def sweep_stale_dirs(older_than_s: float = STALE_DIR_S) -> int:
    """Remove game and build directories left by processes that died without closing
    their hosts (a worker killed mid-match). A directory goes only when the pid in its
    name is gone *and* it is old, so a live process in another PID namespace sharing
    this ``/tmp`` keeps its directories. Returns how many were removed."""
    removed = 0
    now = time.time()
    for prefix in (GAME_DIR_PREFIX, BUILD_DIR_PREFIX):
        for d in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
            pid_text = d.name[len(prefix) :].split("-", 1)[0]
            if not pid_text.isdigit() or int(pid_text) == os.getpid():
                continue
            try:
                os.kill(int(pid_text), 0)
                continue  # its owner lives
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
            try:
                if now - d.stat().st_mtime < older_than_s:
                    continue
            except FileNotFoundError:
                continue
            shutil.rmtree(d, ignore_errors=True)
            removed += 1
    return removed


class PlainHostFactory(HostFactory):
    name = "none"

    def __init__(self) -> None:
        sweep_stale_dirs()

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        return PlainHost(entry_dir, mark)

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        source = apparent_bytes(entry_dir)
        with tempfile.TemporaryDirectory(prefix=f"{BUILD_DIR_PREFIX}{os.getpid()}-") as tmp:
            outcome = run_process(
                ["sh", "-c", command],
                b"",
                cwd=entry_dir,
                env=entry_env(Path(tmp), Path(tmp)),
                limits=limits,
                stderr_keep=BUILD_LOG_TAIL,
            )
        if outcome.failure is not None or outcome.exit_code != 0:
            return outcome
        # built in place, so nothing is copied here; but every game copies the entry
        # (``_game_dir``), expanding sparse files: the bwrap host's cap (docs/config.md#builds)
        try:
            check_output_size(entry_dir, max_bytes=source + BUILD_OUTPUT_BYTES)
        except BuildOutputError as e:
            shutil.rmtree(entry_dir, ignore_errors=True)  # a failed build's output is never used
            entry_dir.mkdir()
            return build_output_failure(outcome, str(e))
        return outcome
