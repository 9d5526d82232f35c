"""The bubblewrap sandbox (DESIGN §7): one sandbox per entry per game.

``BwrapHostFactory.open`` starts ``bwrap`` once for an entry's game, with
``launcher.c`` as the sandbox's PID 1, and copies the entry into it. Every
move is then one request to the launcher, which forks and execs the program
with its rlimits, enforces the wall-clock deadline and the output cap, and
answers with the exit status, the ``wait4`` accounting and whether any
descendant outlived the program. Namespace setup (several milliseconds) is
paid once per game, not per move.

What an entry sees inside:

* the system's runtime directories read-only, and nothing else of the host
  (an allow-list, ``system_view``: no checkout, run, cache or other entry);
* ``/entry``: its private working copy (cwd), on a size- and inode-capped tmpfs;
* ``/tmp`` and ``/dev/shm``: private size- and inode-capped tmpfs, kept for the
  whole game (POTM's ``/tmp/arena.<MARK>`` persists across the entry's own
  moves and is gone with the sandbox); ``/run`` empty;
* its own cgroup (``cgroups.py``): every byte it pins, its tasks and its CPU
  are charged by the kernel, and a persistent process is frozen between its
  turns;
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
import logging
import os
import select
import shutil
import socket
import stat
import struct
import subprocess
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from runner.domain.contracts import Limits
from runner.domain.registry import SANDBOX_BINDS_ENV, sandbox_bind_problem
from workers.sandbox.base import EntryHost, HostError, HostFactory, InteractiveProcess, RunOutcome, take_line
from workers.sandbox.build_output import BUILD_OUTPUT_BYTES, BuildOutputError, build_output_failure, copy_out
from workers.sandbox.cgroups import LAUNCHER_SLACK_BYTES, PIDS_SLACK, Cgroups, SandboxCgroup, shared_cgroups
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
    OP_RESET,
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
    tree_stats,
)
from workers.sandbox.limits import BUILD_LOG_TAIL, STDERR_TAIL, cpu_rlimit_s
from workers.sandbox.sampler import FIRST_SAMPLE_S, StopReason, TreeUsage, TreeWatch, child_pids

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
#: the launcher's processes count against the sandbox's RLIMIT_NPROC: its manager, the
#: game's init, the next game's made ahead, and the last game's while it is torn down
#: (launcher.c manage_games)
LAUNCHER_PROCS = 4
#: how long bwrap may take to set a sandbox up (it takes milliseconds)
START_TIMEOUT_S = 30.0
#: past a move's own deadline, how long the launcher has to answer before the
#: host gives up on it (a broken sandbox, not the entry's fault)
HOST_SLACK_S = 5.0
#: each private tmpfs (/tmp, /dev/shm, room to grow in /entry) holds this many
#: times the file-size limit
SCRATCH_FILES = 4
BUILD_SCRATCH_BYTES = 1 << 30

log = logging.getLogger(__name__)


#: inode caps of the private tmpfs (files, directories and links each take one):
#: a game's /tmp and /dev/shm, and the room a game or a build has beyond the
#: entry's own files in /entry (a build's output is capped by it: count and bytes)
GAME_SCRATCH_INODES = 4096
BUILD_SCRATCH_INODES = 20000


@dataclass(frozen=True)
class Layout:
    """Sizes of the sandbox's writable places in bytes, and their inode caps."""

    tmp: int
    entry: int
    shm: int
    tmp_inodes: int = GAME_SCRATCH_INODES
    entry_inodes: int = GAME_SCRATCH_INODES
    shm_inodes: int = GAME_SCRATCH_INODES

    @classmethod
    def for_game(cls, entry_bytes: int, limits: Limits, entry_inodes: int = 0) -> Layout:
        scratch = SCRATCH_FILES * (limits.file_size_mb << 20)
        return cls(
            tmp=scratch, entry=entry_bytes + scratch, shm=scratch,
            entry_inodes=entry_inodes + GAME_SCRATCH_INODES,
        )  # fmt: skip

    @classmethod
    def for_build(cls, entry_bytes: int, entry_inodes: int = 0) -> Layout:
        return cls(
            tmp=BUILD_SCRATCH_BYTES, entry=entry_bytes + BUILD_SCRATCH_BYTES, shm=64 << 20,
            tmp_inodes=BUILD_SCRATCH_INODES, entry_inodes=entry_inodes + BUILD_SCRATCH_INODES,
        )  # fmt: skip

    def mounts(self) -> str:
        """The launcher's mount spec: each private tmpfs with its size and inode cap
        (bwrap's own --tmpfs has no inode option; the launcher mounts over it)."""
        places = (("/tmp", self.tmp, self.tmp_inodes), ("/dev/shm", self.shm, self.shm_inodes),
                  (ENTRY_DIR, self.entry, self.entry_inodes))  # fmt: skip
        return ",".join(f"{path}:{size}:{inodes}" for path, size, inodes in places)


#: the system's runtime directories: all an entry (or its build) may see of the host
RUNTIME_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
#: secrets under /etc, hidden even where the sandbox's user could read them
#: (besides every top-level /etc entry that is not world-readable)
ETC_SECRETS = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
    "/etc/ssh", "/etc/ssl/private", "/etc/security/opasswd", "/etc/krb5.keytab", "/etc/pip.conf",
    "/etc/npmrc", "/etc/gitconfig", "/etc/machine-id", "/etc/.pwd.lock",
)  # fmt: skip


def _readable_by_sandbox(st: os.stat_result, uid: int) -> bool:
    """Whether the sandbox's user could read it (masking what it cannot read costs
    a mount per file for nothing: about 0.2 ms of set-up each)."""
    if st.st_mode & stat.S_IROTH:
        return True
    by_owner = st.st_uid == uid and bool(st.st_mode & stat.S_IRUSR)
    by_group = st.st_gid == uid and bool(st.st_mode & stat.S_IRGRP)
    return by_owner or by_group


def _etc_secrets() -> list[str]:
    uid = sandbox_user()
    uid = os.getuid() if uid is None else uid
    candidates = set(ETC_SECRETS)
    with contextlib.suppress(OSError):
        candidates.update(e.path for e in os.scandir("/etc"))
    found = []
    for path in candidates:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        named = path in ETC_SECRETS
        # a named secret the sandbox could read, or anything at the top of /etc that is
        # private to someone but readable by the sandbox's user (a worker not run as root)
        private = not st.st_mode & stat.S_IROTH
        if _readable_by_sandbox(st, uid) and (named or private):
            found.append(path)
    return sorted(found)


@functools.cache
def system_view(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """bwrap arguments that show the system's runtime directories read-only, and nothing else.

    An allow-list (DESIGN §7): ``RUNTIME_DIRS`` where they exist (top-level
    symlinks such as ``/bin -> usr/bin`` stay links), ``/etc`` with its
    secrets masked, and the read-only ``extra`` paths a worker adds for a
    language runtime (``SANDBOX_BINDS_ENV``). The organiser's checkout,
    run directories, caches, other entries, ``/home``, ``/root``, ``/var``,
    ``/opt``, ``/srv``, ``/mnt`` are simply not there. The sandbox's root
    stays bwrap's own tmpfs, where ``/entry`` can be made.
    """
    args: list[str] = []
    for path in (*RUNTIME_DIRS, *extra):
        if os.path.islink(path) and os.path.dirname(path) == "/":
            args += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            args += ["--ro-bind", path, path]
    for secret in _etc_secrets():
        if os.path.isdir(secret) and not os.path.islink(secret):
            args += ["--perms", "0555", "--tmpfs", secret, "--remount-ro", secret]
        else:
            args += ["--ro-bind", "/dev/null", secret]
    return tuple(args)


def extra_binds() -> tuple[str, ...]:
    """Read-only paths the worker adds to every sandbox (``SANDBOX_BINDS_ENV``,
    colon-separated absolute paths; e.g. a language runtime under ``/opt``).

    The worker's own policy: never taken from a match message.
    """
    paths = []
    for part in os.environ.get(SANDBOX_BINDS_ENV, "").split(":"):
        if not part:
            continue
        problem = sandbox_bind_problem(part)
        if problem is not None:
            raise HostError(f"{SANDBOX_BINDS_ENV}: {problem}")
        if not os.path.exists(part):
            raise HostError(f"{SANDBOX_BINDS_ENV}: {part} does not exist on this machine")
        paths.append(os.path.normpath(part))
    return tuple(paths)


def bwrap_argv(
    bwrap: str,
    layout: Layout,
    *,
    launcher_fd: int,
    ctl_fd: int,
    info_fd: int,
    binds: tuple[str, ...] = (),
    cgroup_fd: int = -1,
) -> list[str]:
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
        *system_view(binds),
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
        # for the launcher's inode-capped mounts and each game's fresh namespaces
        # (/proc, loopback up) only: the process that serves a game drops every
        # capability before it reads a request (launcher.c game_init)
        "--cap-add",
        "CAP_SYS_ADMIN",
        "--cap-add",
        "CAP_NET_ADMIN",
        "--",
        LAUNCHER_PATH,
        str(ctl_fd),
        ENTRY_DIR,
        str(cgroup_fd),
        layout.mounts(),
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
                env=SANDBOX_ENV,
                start_new_session=True,  # terminal signals are for the worker, not the entries
                **as_sandbox_user(),  # type: ignore[call-overload]
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
        oom_kills=usage.oom_kills,
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
        self._frozen = False  # by the sandbox cgroup's freezer, between its turns

    # -- InteractiveProcess --------------------------------------------------------

    def send(self, text: str) -> None:
        if self._ended is not None or self._in is None:
            return  # the next read_line reports why
        self._thaw()
        self._pending += text.encode()
        self._flush()

    def read_line(self, timeout_s: float, *, pause: bool = True) -> str | RunOutcome:
        if self._ended is not None:
            return self._ended
        if self._released:
            raise HostError("read from a persistent process after it was closed")
        self._thaw()
        deadline = time.monotonic() + max(0.0, timeout_s)
        next_sample = time.monotonic() + FIRST_SAMPLE_S
        watch = self._watch()
        cap = self.limits.output_kb * 1024
        chan = self._sandbox.channel
        while True:
            line = self._take_line()
            if line is not None:
                if pause:
                    self._freeze()  # it answered: nothing of it runs on the opponent's time
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
                        killed = self._sandbox.oom_outcome(self.limits, time.monotonic() - self._started)
                        if killed is None:
                            raise HostError(str(e)) from e
                        self._ended = killed  # the OOM killer took the launcher too
                        self.release()
                        self._sandbox.close()
                        return killed

    @property
    def cpu_ms(self) -> float:
        if self._result is not None:
            return max(self._result.cpu_us / 1000.0, self._usage.cpu_ms)
        if self._ended is not None or self._released:
            return self._usage.cpu_ms
        self._watch().sample()
        return self._usage.cpu_ms

    def pause(self) -> None:
        if self._ended is None and not self._released:
            self._freeze()

    def close(self) -> None:
        self.release()

    # -- inside ----------------------------------------------------------------------

    def _freeze(self) -> None:
        """Stop the entry's processes (cgroup freezer) until it is spoken to again."""
        cgroup = self._sandbox.cgroup
        if cgroup is None or self._frozen:
            return
        try:
            cgroup.freeze()
        except OSError as e:
            raise HostError(f"cannot freeze a persistent entry between its turns: {e}") from e
        self._frozen = True

    def _thaw(self) -> None:
        cgroup = self._sandbox.cgroup
        if cgroup is None or not self._frozen:
            return
        try:
            cgroup.thaw()
        except OSError as e:
            raise HostError(f"cannot thaw a persistent entry for its turn: {e}") from e
        self._frozen = False

    def _watch(self) -> TreeWatch:
        watch = TreeWatch(
            self._sandbox.pid,
            cpu_limit_ms=self._cpu_limit_s * 1000.0 if self._cpu_limit_s is not None else None,
            memory_limit_kb=self.limits.memory_mb * 1024,
            skip_children=True,
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
        self._sandbox.charge_cgroup(self._usage)
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
            with contextlib.suppress(HostError):
                self._thaw()  # a frozen process cannot die
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

    @property
    def workdir(self) -> Path:  # type: ignore[override]  # read-only here: never assigned
        """Looked up when asked (the current game's init): not on every game's way in."""
        return self._sandbox.workdir

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
        self.binds = extra_binds()
        self.cgroups: Cgroups = shared_cgroups()
        if self.cgroups.problem is not None:
            log.warning("%s", self.cgroups.problem)

    @property
    def memory_mode(self) -> str:
        """What charges an entry's memory: "memory: cgroup v1", "... v2" or "memory: rlimit only"."""
        return self.cgroups.memory_mode

    def _cgroup(self, memory_mb: int, entry_bytes: int, processes: int) -> SandboxCgroup | None:
        if self.cgroups.version is None:
            return None  # rlimits only: said once, at start
        # the entry's limit, its own files (its working copy is charged to it) and
        # the launcher: the sandbox can never pin more than this of the machine
        memory = (memory_mb << 20) + entry_bytes + LAUNCHER_SLACK_BYTES
        return self.cgroups.create(memory, processes + PIDS_SLACK)

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        return BwrapHost(self.game_sandbox(entry_dir, limits))

    def game_sandbox(self, entry_dir: Path, limits: Limits) -> Sandbox:
        """A new sandbox for one game of the entry at ``entry_dir`` (what ``open`` hosts)."""
        entry_bytes, entry_inodes = tree_stats(entry_dir)
        layout = Layout.for_game(entry_bytes, limits, entry_inodes)
        cgroup = self._cgroup(limits.memory_mb, entry_bytes, limits.processes)
        return self._sandbox(layout, entry_dir, cgroup)

    def _sandbox(self, layout: Layout, entry_dir: Path, cgroup: SandboxCgroup | None) -> Sandbox:
        try:
            return Sandbox(self.bwrap, self.launcher, layout, entry_dir, binds=self.binds, cgroup=cgroup)
        except BaseException:
            if cgroup is not None:
                cgroup.destroy()  # whatever failed, no cgroup outlives its sandbox
            raise

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        """Build in a sandbox like a game's, then copy the built tree back into ``entry_dir``."""
        entry_bytes, entry_inodes = tree_stats(entry_dir)
        cgroup = self._cgroup(limits.memory_mb, entry_bytes + BUILD_SCRATCH_BYTES, limits.processes)
        layout = Layout.for_build(entry_bytes, entry_inodes)
        sandbox = self._sandbox(layout, entry_dir, cgroup)
        try:
            # the build cache raised ``limits`` to ``limits.build_limits`` already
            outcome = sandbox.run(["sh", "-c", command], b"", limits, stderr_keep=BUILD_LOG_TAIL)
            if outcome.failure is not None or outcome.exit_code != 0:
                return outcome  # nothing to take: the build failed already
            # into a fresh directory, then in place of the source: what the build
            # removed or replaced (a file by a directory) cannot conflict
            fresh = entry_dir.with_name(f".{entry_dir.name}.built")
            if fresh.exists():
                shutil.rmtree(fresh)
            try:
                # apparent sizes: a sparse file costs its full length on this disk (docs/config.md#builds)
                cap = entry_bytes + BUILD_OUTPUT_BYTES
                copy_out(sandbox.workdir, fresh, max_files=layout.entry_inodes, max_bytes=cap)
            except BuildOutputError as e:
                shutil.rmtree(fresh, ignore_errors=True)
                return build_output_failure(outcome, str(e))
            except OSError as e:
                shutil.rmtree(fresh, ignore_errors=True)
                raise HostError(f"cannot copy the build of {entry_dir} out of its sandbox: {e}") from e
            shutil.rmtree(entry_dir)
            os.rename(fresh, entry_dir)
            return outcome
        finally:
            sandbox.close()
