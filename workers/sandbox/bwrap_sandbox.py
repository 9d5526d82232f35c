"""One bubblewrap sandbox's life (docs/architecture.md, row 14): start, put the
entry in, run moves, spawn a persistent process, reset for the next game, close.

``Sandbox`` starts ``bwrap`` once for an entry's game, with ``launcher.c`` as
the sandbox's PID 1, and copies the entry into it. Every move is then one
request to the launcher, which forks and execs the program with its rlimits,
enforces the wall-clock deadline and the output cap, and answers with the exit
status, the ``wait4`` accounting and whether any descendant outlived the
program. Namespace setup (several milliseconds) is paid once per game, not per
move.

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
and it vanishes with the sandbox); ``workdir`` reaches it through
``/proc/<game init>/root``, readable by root or the sandbox's owner while the
sandbox is open.

Close the sandbox from the thread that opened it: ``--die-with-parent`` ties
it to that thread, which is also what guarantees that no entry process
survives a worker that dies.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import select
import socket
import struct
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path

from runner.domain.match_values import Limits
from workers.sandbox.base import HostError, RunOutcome
from workers.sandbox.bwrap_process import BwrapProcess
from workers.sandbox.bwrap_view import ENTRY_DIR, SANDBOX_ENV, Layout, bwrap_argv
from workers.sandbox.cgroups import SandboxCgroup
from workers.sandbox.checks import as_sandbox_user
from workers.sandbox.classify import Measurement, judged
from workers.sandbox.launcher import (
    ABORT_CPU,
    ABORT_MEMORY,
    F_EXITED,
    OP_ABORT,
    OP_PUT,
    OP_QUIT,
    OP_RESET,
    OP_RUN,
    OP_SPAWN,
    OP_SYNC,
    REPLY_OK,
    REPLY_RESULT,
    REPLY_SPAWNED,
    START_TIMEOUT_S,
    Channel,
    ChannelClosed,
    LauncherResult,
    RunRequest,
    measure,
    put_messages,
)
from workers.sandbox.limits import STDERR_TAIL, cpu_rlimit_s
from workers.sandbox.sampler import FIRST_SAMPLE_S, StopReason, TreeUsage, TreeWatch, child_pids

#: the launcher's processes count against the sandbox's RLIMIT_NPROC: its manager, the
#: game's init, the next game's made ahead, and the last game's while it is torn down
#: (launcher.c manage_games)
LAUNCHER_PROCS = 4
#: past a move's own deadline, how long the launcher has to answer before the
#: host gives up on it (a broken sandbox, not the entry's fault)
HOST_SLACK_S = 5.0


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

    def __init__(
        self,
        bwrap: str,
        launcher: Path,
        layout: Layout,
        tree: Path,
        *,
        binds: tuple[str, ...] = (),
        cgroup: SandboxCgroup | None = None,
    ):
        self._closed = False
        self._lock = threading.Lock()
        self.active: BwrapProcess | None = None  # a persistent process holds the launcher
        self._spawned = False  # whether one ever ran (its cgroup may have been frozen)
        #: the sandbox's own cgroup (owned: destroyed on close), None: rlimits only
        self.cgroup = cgroup
        self._oom_kills_seen = 0
        try:
            cgroup_fd = cgroup.entry_procs_fd() if cgroup is not None else -1
        except OSError as e:
            if cgroup is not None:
                cgroup.destroy()
            raise HostError(f"cannot open the sandbox's cgroup: {e}") from e
        host_sock, sandbox_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        info_r, info_w = os.pipe()
        launcher_fd = os.open(launcher, os.O_RDONLY | os.O_CLOEXEC)
        bwrap_fd = os.open(bwrap, os.O_RDONLY | os.O_CLOEXEC)
        fds = (sandbox_sock.fileno(), info_w, launcher_fd, bwrap_fd, *([cgroup_fd] if cgroup_fd >= 0 else []))
        argv = bwrap_argv(
            bwrap, layout, launcher_fd=launcher_fd, ctl_fd=fds[0], info_fd=info_w, binds=binds,
            cgroup_fd=cgroup_fd,
        )  # fmt: skip
        try:
            self._proc = subprocess.Popen(
                argv,
                # through the fd: the sandbox user may not be able to reach bwrap's path
                executable=f"/proc/self/fd/{bwrap_fd}",
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                pass_fds=fds,
                start_new_session=True,  # terminal signals are for the worker, not the entries
                **as_sandbox_user(SANDBOX_ENV),  # type: ignore[call-overload]
            )
        except (OSError, subprocess.SubprocessError) as e:
            host_sock.close()
            if cgroup is not None:
                cgroup.destroy()
            raise HostError(f"cannot start bubblewrap: {e}") from e
        finally:
            sandbox_sock.close()
            for fd in (info_w, launcher_fd, bwrap_fd, cgroup_fd):
                if fd >= 0:
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
            if cgroup is not None:
                # before the entry's files are written (they are charged to it) and
                # before anything of the entry runs; its children inherit the cgroup
                cgroup.attach(self.pid)
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

    def launcher_alive(self) -> bool:
        """Whether the launcher still runs: a reset's answer may have been waiting in the
        socket before the launcher died, so a good answer alone does not prove it."""
        if self._closed or self._proc.poll() is not None:
            return False
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as f:
                state = f.read().rpartition(b")")[2].split()[0]
        except (OSError, IndexError):
            return False
        return state not in (b"Z", b"X")  # a zombie waits for bwrap to reap it

    @property
    def workdir(self) -> Path:
        """The working copy as the host sees it (readable while the game lives): in the
        mount namespace of the current game's init, which mounts a fresh /entry for its game."""
        return Path(f"/proc/{self.game_pid()}/root{ENTRY_DIR}")

    def game_pid(self) -> int:
        """The host pid of the current game's init (launcher.c ``game_init``): of the
        launcher's children, the one whose /entry is not the launcher's own (a spare shows
        the launcher's until its game starts); the latest such, should the last game's
        init still be on its way out."""
        try:
            own = os.stat(f"/proc/{self.pid}/root{ENTRY_DIR}").st_dev
            children = child_pids(self.pid)
        except OSError as e:
            raise HostError(f"sandbox launcher is gone ({e})") from e
        games: list[tuple[int, int]] = []
        for pid in children:
            try:
                if os.stat(f"/proc/{pid}/root{ENTRY_DIR}").st_dev == own:
                    continue
                with open(f"/proc/{pid}/stat", "rb") as f:
                    started = int(f.read().rpartition(b")")[2].split()[19])
            except (OSError, ValueError, IndexError):
                continue  # gone, or on its way out
            games.append((started, pid))
        if not games:
            raise HostError("the sandbox has no game running")
        return max(games)[1]

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
            killed = self.oom_outcome(limits, time.monotonic() - sent)
            if killed is not None:
                self.close()  # the kernel's OOM killer took the launcher too
                return killed
            raise HostError(f"{e}: {self._stderr_text()}") from e
        op, body = msg
        if op != REPLY_RESULT:
            raise HostError(f"sandbox launcher answered a move with message {op}")
        result = LauncherResult.unpack(body)
        if not result.has(F_EXITED) or result.exit_code != 0:
            self.charge_cgroup(usage)  # only an abnormal end can be the kernel's doing
        return judged(measure(result, usage, stopped_for), result.stdout, limits, cpu_limit_s=limits.cpu_s)

    def charge_cgroup(self, usage: TreeUsage) -> None:
        """Add what the cgroup counted since the last look to ``usage``: OOM kills
        (the entry's ``memory_limit``) and the peak of every byte it pinned."""
        if self.cgroup is None:
            return
        counted = self.cgroup.usage()
        usage.oom_kills += counted.oom_kills - self._oom_kills_seen
        self._oom_kills_seen = counted.oom_kills
        usage.peak_rss_kb = max(usage.peak_rss_kb, counted.peak_memory_bytes // 1024)

    def oom_outcome(self, limits: Limits, wall_s: float) -> RunOutcome | None:
        """The ``memory_limit`` outcome of a move whose sandbox died of the cgroup's
        OOM killer (None: it died of something else, the runner's problem)."""
        usage = TreeUsage()
        self.charge_cgroup(usage)
        if not usage.oom_kills:
            return None
        killed = Measurement(
            exit_code=None, signal=9, wall_ms=wall_s * 1000.0, tree_rss_kb=usage.peak_rss_kb,
            oom_kills=usage.oom_kills,
        )  # fmt: skip
        return judged(killed, b"", limits, cpu_limit_s=None)

    def _watch(
        self, limits: Limits, deadline: float
    ) -> tuple[tuple[int, bytes], TreeUsage, StopReason | None]:
        """Sample the tree until the launcher answers.

        No sample starts when it could still be running at the move's
        deadline: the launcher kills the move then, and its answer must not
        wait for a sample (under load one takes several milliseconds).
        """
        watch = TreeWatch(
            self.pid, cpu_limit_ms=limits.cpu_s * 1000.0, memory_limit_kb=limits.memory_mb * 1024,
            skip_children=True,
        )  # fmt: skip
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
        self._spawned = True
        return self.active

    # -- reuse (workers/sandbox/pool.py) ------------------------------------------

    def begin_reset(self, tree_payloads: Iterable[bytes]) -> None:
        """Start making this sandbox fresh for the entry's next game, without waiting:
        the game's init kills every process (launcher.c
        ``do_reset``) and leaves with its namespaces and tmpfs; the next game's init,
        in fresh ones, takes a new working copy (``tree_payloads``: ``put_messages`` of
        the entry). ``end_reset`` waits
        for the answer; ``HostError`` if the launcher is gone."""
        if self._closed:
            raise HostError("sandbox already closed")
        if self.active is not None:
            self.active.release()
        self.channel.send(OP_RESET)
        for payload in tree_payloads:
            self.channel.send(OP_PUT, payload)
        self.channel.send(OP_SYNC)

    def end_reset(self) -> None:
        """Wait for ``begin_reset``'s answer; then the cgroup forgets the last game
        (peak memory, OOM kills already seen). ``HostError`` if anything of it failed:
        such a sandbox must be closed, never used again."""
        op, body = self._expect(START_TIMEOUT_S)
        (err,) = struct.unpack_from("=I", body) if len(body) >= 4 else (1,)
        if op != REPLY_OK or err:
            raise HostError(f"cannot reset the sandbox: {body[4:].decode(errors='replace')}")
        if self.cgroup is not None:
            try:
                if self._spawned:  # only a persistent process is ever frozen
                    self.cgroup.thaw()
                self.cgroup.reset_peak()
                self._oom_kills_seen = self.cgroup.oom_kills()
            except OSError as e:
                raise HostError(f"cannot reset the sandbox's cgroup: {e}") from e

    # -- the end ------------------------------------------------------------------

    def close(self) -> None:
        with self._lock:
            if self._closed:
                return
            self._closed = True
        if self.cgroup is not None:
            with contextlib.suppress(OSError):
                self.cgroup.thaw()  # a frozen process cannot die
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
        if self.cgroup is not None:
            self.cgroup.destroy()
