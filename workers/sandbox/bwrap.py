"""The bubblewrap sandbox (DESIGN §7): one sandbox per entry per game.

``BwrapHostFactory.open`` starts ``bwrap`` once for an entry's game, with
``launcher.c`` as the sandbox's PID 1, and copies the entry into it. Every
move is then one request to the launcher, which forks and execs the program
with its rlimits, enforces the wall-clock deadline and the output cap, and
answers with the exit status, the ``wait4`` accounting and whether any
descendant outlived the program. Namespace setup (several milliseconds) is
paid once per game, not per move.

What an entry sees inside:

* the host's file system read-only (each top-level directory bound, so
  nothing of the host is writable);
* ``/entry``: its private working copy (cwd), on a size-capped tmpfs;
* ``/tmp`` and ``/dev/shm``: private size-capped tmpfs, kept for the whole
  game (POTM's ``/tmp/arena.<MARK>`` persists across the entry's own moves
  and is gone with the sandbox); ``/run`` empty;
* its own PID, network (loopback only, with nothing listening: no Redis),
  IPC, UTS and user namespaces, and no way to make more user namespaces;
* a clean environment.

Processes run as ``nobody`` on the host when the worker is root, because
``RLIMIT_NPROC`` does not apply to root's processes; otherwise as the
worker's own user (the kernel counts processes per user namespace, so the
cap counts only this sandbox's processes).

psutil samples the tree only while a move runs longer than
``sampler.FIRST_SAMPLE_S``: CPU summed over every process, resident memory,
process count; a sample over a limit stops the move. Each move runs in a
session of its own (its own scheduler autogroup), so a fork bomb gets one
group's share of the machine and cannot delay the launcher's deadline.

The working copy exists only inside the sandbox (no host disk is written,
and it vanishes with the sandbox); ``EntryHost.workdir`` reaches it through
``/proc/<launcher>/root``, readable by root or the sandbox's owner while the
host is open. ``run_build`` builds in such a sandbox and copies the built
tree back into the entry directory, never following a link it finds there.

Close the host from the thread that opened it: ``--die-with-parent`` ties
the sandbox to that thread, which is also what guarantees that no entry
process survives a worker that dies.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import select
import socket
import stat
import struct
import subprocess
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from runner.contracts import Limits
from workers.sandbox.base import EntryHost, HostError, HostFactory, InteractiveProcess, RunOutcome, take_line
from workers.sandbox.checks import as_sandbox_user, find_bwrap, sandbox_problem, sandbox_user
from workers.sandbox.classify import Measurement, judged
from workers.sandbox.launcher import (
    ABORT_CPU,
    ABORT_MEMORY,
    F_EXITED,
    F_LEFT,
    F_SIGNALED,
    F_STDOUT_OVER,
    F_TIMEOUT,
    OP_ABORT,
    OP_KILL,
    OP_PUT,
    OP_QUIT,
    OP_RUN,
    OP_SPAWN,
    OP_SYNC,
    REPLY_OK,
    REPLY_RESULT,
    REPLY_SPAWNED,
    Channel,
    ChannelClosed,
    LauncherResult,
    RunRequest,
    launcher_binary,
    put_messages,
    tree_size,
)
from workers.sandbox.limits import BUILD_LOG_TAIL, STDERR_TAIL, cpu_rlimit_s
from workers.sandbox.sampler import FIRST_SAMPLE_S, StopReason, TreeUsage, TreeWatch

#: the working copy and the launcher, as paths inside the sandbox
ENTRY_DIR = "/entry"
LAUNCHER_PATH = "/.tourney/launcher"
#: host top-level directories the sandbox replaces with its own
REPLACED = frozenset({"tmp", "proc", "dev", "run"})
#: what every sandboxed program finds in its environment, and nothing else
SANDBOX_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": ENTRY_DIR,
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
}
#: the launcher itself counts against the sandbox's RLIMIT_NPROC
LAUNCHER_PROCS = 1
#: how long bwrap may take to set a sandbox up (it takes milliseconds)
START_TIMEOUT_S = 30.0
#: past a move's own deadline, how long the launcher has to answer before the
#: host gives up on it (a broken sandbox, not the entry's fault)
HOST_SLACK_S = 5.0
#: each private tmpfs (/tmp, /dev/shm, room to grow in /entry) holds this many
#: times the file-size limit
SCRATCH_FILES = 4
BUILD_SCRATCH_BYTES = 1 << 30


@dataclass(frozen=True)
class Layout:
    """Sizes of the sandbox's writable places, in bytes."""

    tmp: int
    entry: int
    shm: int

    @classmethod
    def for_game(cls, entry_bytes: int, limits: Limits) -> Layout:
        scratch = SCRATCH_FILES * (limits.file_size_mb << 20)
        return cls(tmp=scratch, entry=entry_bytes + scratch, shm=scratch)

    @classmethod
    def for_build(cls, entry_bytes: int) -> Layout:
        return cls(tmp=BUILD_SCRATCH_BYTES, entry=entry_bytes + BUILD_SCRATCH_BYTES, shm=64 << 20)


@functools.cache
def system_view() -> tuple[str, ...]:
    """bwrap arguments that show the host's file system read-only.

    Each top-level directory is bound on its own (not ``/`` as a whole) so the
    sandbox's root stays bwrap's own tmpfs, where ``/entry`` can be made even
    though the host has no such directory.
    """
    args: list[str] = []
    for name in sorted(os.listdir("/")):
        if name in REPLACED:
            continue
        path = "/" + name
        if os.path.islink(path):
            args += ["--symlink", os.readlink(path), path]
        else:
            args += ["--ro-bind", path, path]
    return tuple(args)


def bwrap_argv(bwrap: str, layout: Layout, *, launcher_fd: int, ctl_fd: int, info_fd: int) -> list[str]:
    """The bwrap command line for one sandbox (order matters: later mounts go on top)."""
    return [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--as-pid-1",
        "--new-session",
        "--hostname",
        "sandbox",
        *system_view(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(layout.shm),
        "--tmpfs",
        "/dev/shm",
        "--size",
        str(layout.tmp),
        "--tmpfs",
        "/tmp",
        "--dir",
        "/run",
        "--size",
        str(layout.entry),
        "--tmpfs",
        ENTRY_DIR,
        "--perms",
        "0555",
        "--file",
        str(launcher_fd),
        LAUNCHER_PATH,
        # nothing writable but the three tmpfs: not bwrap's root, not /dev
        "--remount-ro",
        "/dev",
        "--remount-ro",
        "/",
        "--chdir",
        ENTRY_DIR,
        "--info-fd",
        str(info_fd),
        "--",
        LAUNCHER_PATH,
        str(ctl_fd),
        ENTRY_DIR,
    ]


def _read_until_eof(fd: int, timeout_s: float) -> bytes:
    data = bytearray()
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError
        ready, _, _ = select.select([fd], [], [], left)
        if not ready:
            continue
        chunk = os.read(fd, 4096)
        if not chunk:
            return bytes(data)
        data += chunk


class Sandbox:
    """One running bwrap sandbox and the launcher inside it."""

    def __init__(self, bwrap: str, launcher: Path, layout: Layout, tree: Path):
        self._closed = False
        self._lock = threading.Lock()
        self.active: BwrapProcess | None = None  # a persistent process holds the launcher
        host_sock, sandbox_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        info_r, info_w = os.pipe()
        launcher_fd = os.open(launcher, os.O_RDONLY | os.O_CLOEXEC)
        bwrap_fd = os.open(bwrap, os.O_RDONLY | os.O_CLOEXEC)
        fds = (sandbox_sock.fileno(), info_w, launcher_fd, bwrap_fd)
        argv = bwrap_argv(bwrap, layout, launcher_fd=launcher_fd, ctl_fd=fds[0], info_fd=info_w)
        try:
            self._proc = subprocess.Popen(
                argv,
                # through the fd: the sandbox user may not be able to reach bwrap's path
                executable=f"/proc/self/fd/{bwrap_fd}",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=fds,
                env=SANDBOX_ENV,
                start_new_session=True,  # terminal signals are for the worker, not the entries
                **as_sandbox_user(),  # type: ignore[call-overload]
            )
        except (OSError, subprocess.SubprocessError) as e:
            host_sock.close()
            raise HostError(f"cannot start bubblewrap: {e}") from e
        finally:
            sandbox_sock.close()
            for fd in (info_w, launcher_fd, bwrap_fd):
                os.close(fd)
        self.channel = Channel(host_sock)
        try:
            try:
                info = _read_until_eof(info_r, START_TIMEOUT_S)
            finally:
                os.close(info_r)
            if not info:
                raise ChannelClosed("bwrap exited before starting the launcher")
            #: the launcher's pid on the host (psutil watches its descendants)
            self.pid = int(json.loads(info)["child-pid"])
            self._put_tree(tree)
        except (TimeoutError, ValueError, KeyError, OSError, HostError) as e:
            if isinstance(e, ChannelClosed):
                # bwrap reports a failed setup (a mount, the user namespace) on
                # stderr and exits: its reason is the useful part of the message
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._proc.wait(timeout=2)
            why = self._stderr_text()
            self.close()
            raise HostError(f"bubblewrap could not start the sandbox: {why or e}") from e

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def workdir(self) -> Path:
        """The working copy as the host sees it (readable while the sandbox lives)."""
        return Path(f"/proc/{self.pid}/root{ENTRY_DIR}")

    def _stderr_text(self) -> str:
        err = self._proc.stderr
        if err is None:
            return ""
        with contextlib.suppress(OSError):
            os.set_blocking(err.fileno(), False)
            data = err.read() or b""
            return " ".join(data.decode(errors="replace").split())
        return ""

    def _put_tree(self, tree: Path) -> None:
        for payload in put_messages(tree):
            self.channel.send(OP_PUT, payload)
        self.channel.send(OP_SYNC)
        op, body = self._expect(START_TIMEOUT_S)
        (err,) = struct.unpack_from("=I", body)
        if op != REPLY_OK or err:
            raise HostError(f"cannot copy the entry into its sandbox: {body[4:].decode(errors='replace')}")

    def _expect(self, timeout_s: float) -> tuple[int, bytes]:
        try:
            msg = self.channel.recv(timeout_s)
        except ChannelClosed as e:
            raise HostError(f"{e}: {self._stderr_text()}") from e
        if msg is None:
            raise HostError(f"sandbox launcher did not answer within {timeout_s:g} s")
        return msg

    # -- moves ------------------------------------------------------------------

    def run(
        self, argv: list[str], stdin: bytes, limits: Limits, *, stderr_keep: int = STDERR_TAIL
    ) -> RunOutcome:
        if self._closed:
            raise HostError("sandbox already closed")
        if self.active is not None:
            raise HostError("a persistent process is running in this sandbox")
        request = RunRequest.for_move(
            argv, stdin, limits, stderr_keep=stderr_keep, sandbox_procs=LAUNCHER_PROCS
        )
        sent = time.monotonic()
        try:
            self.channel.send(OP_RUN, request.pack())
            usage, stopped_for = TreeUsage(), None
            msg = self.channel.recv(FIRST_SAMPLE_S)
            if msg is None:  # a long move: watch its tree until it ends
                msg, usage, stopped_for = self._watch(limits, sent + limits.move_wall_s)
        except ChannelClosed as e:
            raise HostError(f"{e}: {self._stderr_text()}") from e
        op, body = msg
        if op != REPLY_RESULT:
            raise HostError(f"sandbox launcher answered a move with message {op}")
        result = LauncherResult.unpack(body)
        return judged(measure(result, usage, stopped_for), result.stdout, limits, cpu_limit_s=limits.cpu_s)

    def _watch(
        self, limits: Limits, deadline: float
    ) -> tuple[tuple[int, bytes], TreeUsage, StopReason | None]:
        """Sample the tree until the launcher answers.

        No sample starts when it could still be running at the move's
        deadline: the launcher kills the move then, and its answer must not
        wait for a sample (under load one takes several milliseconds).
        """
        watch = TreeWatch(
            self.pid, cpu_limit_ms=limits.cpu_s * 1000.0, memory_limit_kb=limits.memory_mb * 1024
        )
        give_up = deadline + HOST_SLACK_S
        stopped_for: StopReason | None = None
        cost = 0.0  # the slowest sample so far
        while True:
            began = time.monotonic()
            if stopped_for is None and began + 2 * cost < deadline:
                stopped_for = watch.sample()
                if stopped_for is not None:
                    reason = ABORT_CPU if stopped_for == "cpu" else ABORT_MEMORY
                    self.channel.send(OP_ABORT, struct.pack("=I", reason))
                cost = max(cost, time.monotonic() - began)
            now = time.monotonic()
            if now >= give_up:
                self.close()
                raise HostError(f"sandbox launcher did not end a {limits.move_wall_s:g} s move in time")
            if stopped_for is None and now + 2 * cost < deadline:
                wait = min(watch.next_interval(cost), deadline - 2 * cost - now)
            else:  # no more samples: the launcher answers at the deadline at the latest
                wait = give_up - now
            msg = self.channel.recv(wait)
            if msg is not None:
                return msg, watch.usage, stopped_for

    def spawn(self, argv: list[str], limits: Limits) -> BwrapProcess:
        if self._closed:
            raise HostError("sandbox already closed")
        if self.active is not None:
            raise HostError("a persistent process is already running in this sandbox")
        # a persistent process has one CPU budget for the whole game, if any
        cpu_limit_s = limits.game_wall_s
        soft, hard = cpu_rlimit_s(cpu_limit_s) if cpu_limit_s is not None else (0, 0)
        move = RunRequest.for_move(argv, b"", limits, stderr_keep=STDERR_TAIL, sandbox_procs=LAUNCHER_PROCS)
        # no deadline in the launcher: the protocol times each answer (read_line)
        request = dataclasses.replace(move, wall_ms=0, cpu_soft_s=soft, cpu_hard_s=hard)
        in_r, in_w = os.pipe()
        out_r, out_w = os.pipe()
        try:
            self.channel.send(OP_SPAWN, request.pack(), fds=(in_r, out_w))
        except HostError:
            for fd in (in_w, out_r):
                os.close(fd)
            raise
        finally:
            os.close(in_r)
            os.close(out_w)
        op, _ = self._expect(START_TIMEOUT_S)
        if op != REPLY_SPAWNED:
            raise HostError(f"sandbox launcher answered a spawn with message {op}")
        self.active = BwrapProcess(self, limits, in_w, out_r, cpu_limit_s)
        return self.active

    # -- the end ------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self.active is not None:
            self.active.release()
        with contextlib.suppress(HostError):
            self.channel.send(OP_QUIT)
        try:
            self._proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            # the launcher dies with bwrap (--die-with-parent), and the
            # sandbox's PID namespace with the launcher
            self._proc.kill()
            self._proc.wait()
        self.channel.close()
        if self._proc.stderr is not None:
            self._proc.stderr.close()


def measure(result: LauncherResult, usage: TreeUsage, stopped_for: StopReason | None = None) -> Measurement:
    """What the launcher's report and the samples say about one run (``classify`` judges it)."""
    return Measurement(
        exit_code=result.exit_code if result.has(F_EXITED) else None,
        signal=result.signal if result.has(F_SIGNALED) else None,
        wall_ms=result.wall_us / 1000.0,
        cpu_ms=max(result.cpu_us / 1000.0, usage.cpu_ms),
        peak_rss_kb=result.maxrss_kb,
        tree_rss_kb=usage.peak_rss_kb,
        peak_processes=usage.peak_processes,
        timed_out=result.has(F_TIMEOUT),
        output_over=result.has(F_STDOUT_OVER),
        left_count=(result.left_count or 1) if result.has(F_LEFT) else 0,
        left_comm=result.left_comm,
        stderr_tail=result.stderr,
        stopped_for=stopped_for,
    )


class BwrapProcess(InteractiveProcess):
    """A persistent entry process (gomocup): its stdin and stdout are ours directly;
    the launcher keeps its stderr tail and reports its end."""

    def __init__(
        self, sandbox: Sandbox, limits: Limits, stdin_fd: int, stdout_fd: int, cpu_limit_s: float | None
    ):
        self._sandbox = sandbox
        self.limits = limits
        self._cpu_limit_s = cpu_limit_s
        self._in: int | None = stdin_fd
        self._out: int | None = stdout_fd
        os.set_blocking(stdin_fd, False)
        os.set_blocking(stdout_fd, False)
        self._pending = bytearray()
        self._buf = bytearray()
        self._result: LauncherResult | None = None  # the launcher's report of its end
        self._ended: RunOutcome | None = None
        self._usage = TreeUsage()
        self._started = time.monotonic()
        self._released = False

    # -- InteractiveProcess --------------------------------------------------------

    def send(self, text: str) -> None:
        if self._ended is not None or self._in is None:
            return  # the next read_line reports why
        self._pending += text.encode()
        self._flush()

    def read_line(self, timeout_s: float) -> str | RunOutcome:
        if self._ended is not None:
            return self._ended
        if self._released:
            raise HostError("read from a persistent process after it was closed")
        deadline = time.monotonic() + max(0.0, timeout_s)
        next_sample = time.monotonic() + FIRST_SAMPLE_S
        watch = self._watch()
        cap = self.limits.output_kb * 1024
        chan = self._sandbox.channel
        while True:
            line = self._take_line()
            if line is not None:
                return line
            if len(self._buf) > cap:
                return self._stop(output_over=True)  # a line longer than the output cap
            if self._result is not None:
                return self._finish_exited()
            now = time.monotonic()
            if now >= deadline:
                return self._stop(timed_out=True, wall_limit_s=timeout_s)
            if now >= next_sample:
                began = now
                over = watch.sample()
                self._usage = watch.usage
                if (over == "cpu" and self._cpu_limit_s is not None) or over == "memory":
                    return self._stop(stopped_for=over)
                now = time.monotonic()
                next_sample = now + watch.next_interval(now - began)
            if chan.has_message():
                self._on_message(chan.recv(0))
                continue
            poller = select.poll()
            if self._out is not None:
                poller.register(self._out, select.POLLIN)
            if self._in is not None and self._pending:
                poller.register(self._in, select.POLLOUT)
            poller.register(chan.fileno(), select.POLLIN)
            wait_s = min(deadline, next_sample) - now
            for fd, _ in poller.poll(max(1, int(wait_s * 1000) + 1)):
                if fd == self._out:
                    self._read_stdout()
                elif fd == self._in:
                    self._flush()
                else:
                    try:
                        self._on_message(chan.recv(0))
                    except ChannelClosed as e:
                        raise HostError(str(e)) from e

    @property
    def cpu_ms(self) -> float:
        if self._result is not None:
            return max(self._result.cpu_us / 1000.0, self._usage.cpu_ms)
        if self._ended is not None or self._released:
            return self._usage.cpu_ms
        self._watch().sample()
        return self._usage.cpu_ms

    def close(self) -> None:
        self.release()

    # -- inside ----------------------------------------------------------------------

    def _watch(self) -> TreeWatch:
        watch = TreeWatch(
            self._sandbox.pid,
            cpu_limit_ms=self._cpu_limit_s * 1000.0 if self._cpu_limit_s is not None else None,
            memory_limit_kb=self.limits.memory_mb * 1024,
        )
        watch.usage = self._usage
        return watch

    def _flush(self) -> None:
        while self._pending and self._in is not None:
            try:
                n = os.write(self._in, self._pending)
            except BlockingIOError:
                return
            except OSError:
                self._pending.clear()  # it closed its stdin or died: read_line will see
                return
            del self._pending[:n]

    def _read_stdout(self) -> None:
        if self._out is None:
            return
        try:
            data = os.read(self._out, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if data:
            self._buf += data
        else:  # closed its stdout; it may still be running (then: timeout)
            os.close(self._out)
            self._out = None

    def _on_message(self, msg: tuple[int, bytes] | None) -> None:
        if msg is None:
            return
        op, body = msg
        if op == REPLY_RESULT:
            self._result = LauncherResult.unpack(body)
            # a final answer written just before exiting still counts
            for _ in range(64):
                before = len(self._buf)
                self._read_stdout()
                if len(self._buf) == before:
                    break

    def _take_line(self) -> str | None:
        return take_line(self._buf)

    def _finish_exited(self) -> RunOutcome:
        result = self._result
        assert result is not None
        ended = judged(
            measure(result, self._usage), result.stdout, self.limits, cpu_limit_s=self._cpu_limit_s
        )
        if ended.failure is None and not ended.detail:
            # exited cleanly in the middle of a game: the protocol decides (no_output)
            ended = dataclasses.replace(ended, detail="exited with code 0 before answering")
        self._ended = ended
        self.release()
        return self._ended

    def _stop(
        self,
        *,
        timed_out: bool = False,
        output_over: bool = False,
        stopped_for: StopReason | None = None,
        wall_limit_s: float | None = None,
    ) -> RunOutcome:
        """Kill the process for what the host saw it do mid-turn; ``classify`` names the verdict."""
        self._kill()
        result = self._result
        if result is None:  # the launcher's report of the end did not come
            usage = self._usage
            wall_ms = (time.monotonic() - self._started) * 1000.0
            measured = Measurement(
                exit_code=None, wall_ms=wall_ms, cpu_ms=usage.cpu_ms, tree_rss_kb=usage.peak_rss_kb,
                peak_processes=usage.peak_processes,
            )  # fmt: skip
            stdout = bytes(self._buf)
        else:
            measured, stdout = measure(result, self._usage), result.stdout
        measured = dataclasses.replace(
            measured, timed_out=timed_out, output_over=output_over, stopped_for=stopped_for
        )
        self._ended = judged(
            measured, stdout, self.limits, cpu_limit_s=self._cpu_limit_s, wall_limit_s=wall_limit_s
        )
        self.release()
        return self._ended

    def _kill(self) -> None:
        """Have the launcher kill the process tree; collect its final report."""
        if self._released or self._sandbox.closed:
            return
        chan = self._sandbox.channel
        try:
            chan.send(OP_KILL)
            while True:
                msg = chan.recv(START_TIMEOUT_S)
                if msg is None:
                    raise HostError("sandbox launcher did not confirm the kill")
                if msg[0] == REPLY_OK:
                    return
                self._on_message(msg)
        except HostError:
            self._sandbox.close()  # kills everything in it

    def release(self) -> None:
        """Kill the process (if it still runs) and give the launcher back to the host."""
        if self._released:
            return
        if self._result is None or self._ended is None:
            self._kill()
        self._released = True
        for fd in (self._in, self._out):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._in = self._out = None
        if self._sandbox.active is self:
            self._sandbox.active = None


class BwrapHost(EntryHost):
    """One entry for one game, in its own sandbox."""

    def __init__(self, sandbox: Sandbox):
        self._sandbox = sandbox
        self.workdir = sandbox.workdir

    @property
    def launcher_pid(self) -> int:
        """The sandbox's PID 1 as the host sees it (every entry process descends from it)."""
        return self._sandbox.pid

    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        return self._sandbox.run(argv, stdin, limits)

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        return self._sandbox.spawn(argv, limits)

    def close(self) -> None:
        self._sandbox.close()


def copy_out(src: Path, dest: Path) -> None:
    """Copy the tree at ``src`` (inside a sandbox, through /proc) over ``dest``.

    Symlinks are copied as links and never followed, and every step goes
    through directory fds with ``O_NOFOLLOW``: the tree was written by an
    untrusted build, and a link followed through ``/proc/<pid>/root`` would
    resolve against the host's root.
    """
    top = os.open(src, os.O_RDONLY | os.O_DIRECTORY)
    try:
        _copy_dir(top, dest)
    finally:
        os.close(top)


def _copy_dir(dir_fd: int, dest: Path) -> None:
    dest.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir(dir_fd):
        st = entry.stat(follow_symlinks=False)
        target = dest / entry.name
        if stat.S_ISLNK(st.st_mode):
            link = os.readlink(entry.name, dir_fd=dir_fd)
            with contextlib.suppress(FileNotFoundError):
                if target.is_symlink() or target.is_file():
                    target.unlink()
            os.symlink(link, target)
        elif stat.S_ISDIR(st.st_mode):
            sub = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            try:
                _copy_dir(sub, target)
            finally:
                os.close(sub)
        elif stat.S_ISREG(st.st_mode):
            fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW, dir_fd=dir_fd)
            with os.fdopen(fd, "rb") as f:
                if target.is_symlink():
                    target.unlink()
                with open(target, "wb") as out:
                    while chunk := f.read(1 << 20):
                        out.write(chunk)
            os.chmod(target, (st.st_mode & 0o777) | 0o600)


class BwrapHostFactory(HostFactory):
    """Hosts that run every entry program in a bubblewrap sandbox.

    Raises ``HostError`` with what is wrong and how to fix it when sandboxes
    cannot work on this machine (``checks.sandbox_problem``).
    """

    name = "bwrap"

    def __init__(self) -> None:
        problem = sandbox_problem()
        if problem is not None:
            raise HostError(problem)
        bwrap = find_bwrap()
        assert bwrap is not None  # sandbox_problem found it
        self.bwrap = bwrap
        self.launcher = launcher_binary()
        self.sandbox_uid = sandbox_user()

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        layout = Layout.for_game(tree_size(entry_dir), limits)
        return BwrapHost(Sandbox(self.bwrap, self.launcher, layout, entry_dir))

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        """Build in a sandbox like a game's, then copy the built tree back into ``entry_dir``."""
        sandbox = Sandbox(self.bwrap, self.launcher, Layout.for_build(tree_size(entry_dir)), entry_dir)
        try:
            # the build cache raised ``limits`` to ``limits.build_limits`` already
            outcome = sandbox.run(["sh", "-c", command], b"", limits, stderr_keep=BUILD_LOG_TAIL)
            try:
                copy_out(sandbox.workdir, entry_dir)
            except OSError as e:
                raise HostError(f"cannot copy the build of {entry_dir} out of its sandbox: {e}") from e
            return outcome
        finally:
            sandbox.close()
