"""A cgroup per sandbox (docs/sandbox.md): the kernel charges every byte an entry pins.

rlimits and psutil see only what processes map. Detached SysV shared memory,
unmapped memfd pages, files in the sandbox's tmpfs and kernel memory (inodes,
dentries) belong to no process, but the memory controller charges each page
to the cgroup that allocated it. So each sandbox gets its own cgroup:

* memory: a hard limit (the entry's ``memory_mb`` plus its own files plus a
  small slack for the launcher); past it the kernel reclaims, then fails the
  allocation or OOM-kills inside the cgroup, and ``oom_kills`` tells the host
  (verdict ``memory_limit``);
* TCP buffers: kernel memory that no process maps either, and the host's
  ``tcp_mem`` is shared by every socket of the machine, the worker's broker
  connection included (``tcp_buffer_limit``);
* pids: a cap on tasks (threads included), whatever user they run as;
* CPU accounting: every CPU second of every process, reaped or not;
* freezer: a persistent entry is frozen between its turns. The launcher
  (the sandbox's PID 1) must keep answering while its entry is frozen, so the
  entry's processes live in a child cgroup ``entry``: the launcher writes
  itself there from the forked child, before ``exec``, through a
  ``cgroup.procs`` descriptor the host opened (``entry_procs_fd``).

Two back ends behind one small interface (``SandboxCgroup``): cgroup v2 where
the unified hierarchy has the memory and pids controllers delegated to the
worker's cgroup (its ``cgroup.subtree_control`` lists them, or
``TOURNEY_CGROUP_ROOT`` names a delegated directory), else cgroup v1 with the
memory, pids, freezer and cpuacct hierarchies (writable by root). Where
neither can be made ``Cgroups.problem`` says why and how to fix it, and the
sandbox falls back to "memory: rlimit only" (the IPC namespace's shm limits
and the tmpfs caps still hold).

Cgroups are named ``tourney-<worker pid>-<worker start time>-<n>``, created
beside nothing but the worker's own cgroup, removed when their sandbox
closes, and swept at start: a leftover whose worker (pid *and* start time)
no longer runs is removed; a name alone proves nothing.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import re
import threading
import time
from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from workers.sandbox.base import HostError
from workers.sandbox.turn_switch import TurnFiles

CGROUP_FS = Path("/sys/fs/cgroup")
PREFIX = "tourney-"
_NAME = re.compile(rf"^{PREFIX}(?:freezer-)?(\d+)-(\d+)-\d+$")  # freezer-: workers/sandbox/turn_switch.py
#: the launcher and the host's copy of the entry: room above the entry's own limit
LAUNCHER_SLACK_BYTES = 16 << 20
#: tasks beyond the entry's process cap (the launcher; threads count as tasks)
PIDS_SLACK = 8
#: rmdir of a cgroup whose last task is still being reaped: a sandbox's dirs, all of them, for this
#: long (a loaded machine reaped slower than 0.1 s), pausing 2 ms growing to 50 ms; a sweep's, 0.1 s
RMDIR_DEADLINE_S, RMDIR_SWEEP_S, RMDIR_PAUSE_S = 2.0, 0.1, (0.002, 0.05)
V1_CONTROLLERS = ("memory", "pids", "freezer", "cpuacct")
#: what the run log and the report say when no cgroup can be made
RLIMIT_ONLY = "memory: rlimit only"
#: the most a sandbox's TCP buffers may pin on cgroup v1 (tcp_buffer_limit)
TCP_BUFFER_CAP_BYTES = 64 << 20


def tcp_buffer_limit(memory_bytes: int) -> int:
    """What a sandbox's TCP socket buffers may pin on cgroup v1 (docs/config.md,
    "What the sandbox refuses and charges").

    v1 counts socket buffers apart from ``memory.limit_in_bytes``, in
    ``memory.kmem.tcp.*``, and charges nothing there until a limit is written:
    without one, unread loopback connections inside the sandbox's own network
    namespace pin the host's ``tcp_mem`` (hundreds of MiB from one process),
    which once full starves every socket of the worker. The sandbox's memory
    limit, as v2 (one counter) would let the buffers take at most, but never
    more than ``TCP_BUFFER_CAP_BYTES``: the limits of every sandbox a worker
    runs at once must add up to well below the host's ``tcp_mem`` pressure
    threshold (``/proc/sys/net/ipv4/tcp_mem``: 1.1 GiB on the reference
    machine), and nothing a contest program
    does over loopback needs more. Past it the kernel puts the cgroup's
    sockets under pressure: sends block or fail (EAGAIN), incoming segments
    are dropped until the reader reads; nothing is killed.
    """
    return min(memory_bytes, TCP_BUFFER_CAP_BYTES)


class CgroupError(HostError):
    """A cgroup could not be made or used (the runner's problem, not the entry's)."""


@dataclass(frozen=True)
class CgroupUsage:
    """What the kernel counted for one sandbox so far."""

    peak_memory_bytes: int
    oom_kills: int
    cpu_us: int
    #: allocations the memory limit refused or reclaimed for (v1 failcnt, v2 "max" events)
    memory_limit_hits: int


def write_knob(path: Path, value: str) -> None:
    """Write one cgroup file (a knob) in one write(2), as the kernel wants it."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def read_knob(path: Path) -> str:
    """A cgroup file's text, or "" where it cannot be read (a controller not here)."""
    try:
        return path.read_text()
    except OSError:
        return ""


def _keyed(text: str, key: str) -> int:
    for line in text.splitlines():
        k, _, v = line.partition(" ")
        if k == key:
            with contextlib.suppress(ValueError):
                return int(v)
    return 0


def _int(text: str) -> int:
    try:
        return int(text.split()[0])
    except (ValueError, IndexError):
        return 0


def process_start_time(pid: int) -> int | None:
    """Field 22 of /proc/<pid>/stat (clock ticks since boot), or None if no such process."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    try:
        return int(stat.rsplit(")", 1)[1].split()[19])
    except (IndexError, ValueError):
        return None


def _rmdir(path: Path, until: float) -> bool:
    """Remove a cgroup directory and its children, retrying while tasks are reaped, until ``until``."""
    with contextlib.suppress(OSError):
        for child in filter(Path.is_dir, path.iterdir()):
            _rmdir(child, until)
    pauses = (min(RMDIR_PAUSE_S[0] * 2**n, RMDIR_PAUSE_S[1]) for n in itertools.count())
    while True:
        try:
            with contextlib.suppress(FileNotFoundError):  # gone already
                os.rmdir(path)
            return True
        except OSError:
            if time.monotonic() >= until:
                return False
            time.sleep(next(pauses))


class SandboxCgroup(ABC):
    """One sandbox's cgroup (one directory per hierarchy)."""

    #: the kernel version of what charges the sandbox: "cgroup v1" or "cgroup v2"
    version: str

    @abstractmethod
    def attach(self, pid: int) -> None:
        """Move ``pid`` (the sandbox's PID 1) in; its children inherit it."""

    @abstractmethod
    def entry_procs_fd(self) -> int:
        """A new descriptor of the ``entry`` child's ``cgroup.procs`` (the caller closes it)."""

    @abstractmethod
    def usage(self) -> CgroupUsage:
        """What the kernel has counted for the sandbox so far."""

    @abstractmethod
    def freeze(self) -> None:
        """Stop every process of the entry (not the launcher) until ``thaw``."""

    @abstractmethod
    def thaw(self) -> None:
        """Let the entry's processes run again."""

    @abstractmethod
    def turn_files(self) -> TurnFiles:
        """The freezer and CPU counter files, for a persistent entry's ``TurnSwitch``."""

    @abstractmethod
    def destroy(self) -> None:
        """Remove the cgroup (idempotent); the sandbox has ended."""

    def oom_kills(self) -> int:
        """Processes the kernel has OOM-killed in the sandbox so far (``usage().oom_kills``)."""
        return self.usage().oom_kills

    @abstractmethod
    def reset_peak(self) -> None:
        """Start counting peak memory afresh (a reused sandbox's next game);
        where the kernel cannot, the peak stays the sandbox's whole life's."""


class CgroupV1(SandboxCgroup):
    version = "cgroup v1"

    def __init__(self, dirs: dict[str, Path], memory_bytes: int, tasks: int):
        self.dirs = dirs
        self._destroyed = False
        try:
            for d in dirs.values():
                os.mkdir(d, 0o700)
            mem = dirs["memory"]
            write_knob(mem / "memory.limit_in_bytes", str(memory_bytes))
            if (mem / "memory.memsw.limit_in_bytes").exists():
                # no escape into swap either (memsw must be set after memory)
                write_knob(mem / "memory.memsw.limit_in_bytes", str(memory_bytes))
            with contextlib.suppress(OSError):
                write_knob(mem / "memory.swappiness", "0")  # nice to have: not every kernel takes it
            if (mem / "memory.kmem.tcp.limit_in_bytes").exists():
                # before any task is in: a socket is charged to the cgroup it was made in
                # only if accounting was on then (tcp_buffer_limit)
                write_knob(mem / "memory.kmem.tcp.limit_in_bytes", str(tcp_buffer_limit(memory_bytes)))
            write_knob(dirs["pids"] / "pids.max", str(tasks))
            os.mkdir(dirs["freezer"] / "entry", 0o700)
        except OSError as e:
            self.destroy()
            raise CgroupError(f"cannot set up a v1 cgroup under {dirs['memory'].parent}: {e}") from e

    def attach(self, pid: int) -> None:
        try:
            for d in self.dirs.values():
                write_knob(d / "cgroup.procs", str(pid))
        except OSError as e:
            raise CgroupError(f"cannot move the sandbox {pid} into its cgroup: {e}") from e

    def entry_procs_fd(self) -> int:
        return os.open(self.dirs["freezer"] / "entry" / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)

    def usage(self) -> CgroupUsage:
        mem = self.dirs["memory"]
        return CgroupUsage(
            peak_memory_bytes=_int(read_knob(mem / "memory.max_usage_in_bytes")),
            oom_kills=_keyed(read_knob(mem / "memory.oom_control"), "oom_kill"),
            cpu_us=_int(read_knob(self.dirs["cpuacct"] / "cpuacct.usage")) // 1000,
            memory_limit_hits=_int(read_knob(mem / "memory.failcnt")),
        )

    def oom_kills(self) -> int:
        return _keyed(read_knob(self.dirs["memory"] / "memory.oom_control"), "oom_kill")

    def reset_peak(self) -> None:
        write_knob(self.dirs["memory"] / "memory.max_usage_in_bytes", "0")

    def freeze(self) -> None:
        write_knob(self.dirs["freezer"] / "entry" / "freezer.state", "FROZEN")

    def thaw(self) -> None:
        write_knob(self.dirs["freezer"] / "entry" / "freezer.state", "THAWED")

    def turn_files(self) -> TurnFiles:
        freeze = self.dirs["freezer"] / "entry" / "freezer.state"
        return TurnFiles(freeze, "FROZEN", "THAWED", self.dirs["cpuacct"] / "cpuacct.usage")

    def destroy(self) -> None:
        if self._destroyed:
            return
        self._destroyed = True
        with contextlib.suppress(OSError):
            self.thaw()  # a frozen task cannot die and leave
        until = time.monotonic() + RMDIR_DEADLINE_S
        for d in self.dirs.values():
            _rmdir(d, until)


class CgroupV2(SandboxCgroup):
    """``<dir>`` carries the limits; ``<dir>/launcher`` and ``<dir>/entry`` hold the
    processes (v2 lets no process sit in a cgroup that distributes controllers)."""

    version = "cgroup v2"

    def __init__(self, path: Path, memory_bytes: int, tasks: int):
        self.path = path
        self._destroyed = False
        self._peak_fd: int | None = None  # held once the peak was reset (reset_peak)
        try:
            os.mkdir(path, 0o700)
            # memory.max bounds socket buffers too: v2 charges them to the one memory
            # counter (memory.stat "sock"; Documentation/admin-guide/cgroup-v2.rst), so
            # there is no separate TCP limit to set (unless the kernel was booted with
            # cgroup.memory=nosocket, which turns that charge off)
            write_knob(path / "memory.max", str(memory_bytes))
            if (path / "memory.swap.max").exists():
                write_knob(path / "memory.swap.max", "0")
            write_knob(path / "pids.max", str(tasks))
            os.mkdir(path / "launcher", 0o700)
            os.mkdir(path / "entry", 0o700)
        except OSError as e:
            self.destroy()
            raise CgroupError(f"cannot set up a v2 cgroup under {path.parent}: {e}") from e

    def attach(self, pid: int) -> None:
        try:
            write_knob(self.path / "launcher" / "cgroup.procs", str(pid))
        except OSError as e:
            raise CgroupError(f"cannot move the sandbox {pid} into its cgroup: {e}") from e

    def entry_procs_fd(self) -> int:
        return os.open(self.path / "entry" / "cgroup.procs", os.O_WRONLY | os.O_CLOEXEC)

    def usage(self) -> CgroupUsage:
        events = read_knob(self.path / "memory.events")
        peak = _int(self._read_peak()) or _int(read_knob(self.path / "memory.current"))
        return CgroupUsage(
            peak_memory_bytes=peak,
            oom_kills=_keyed(events, "oom_kill"),
            cpu_us=_keyed(read_knob(self.path / "cpu.stat"), "usage_usec"),
            memory_limit_hits=_keyed(events, "max"),
        )

    def oom_kills(self) -> int:
        return _keyed(read_knob(self.path / "memory.events"), "oom_kill")

    def _read_peak(self) -> str:
        if self._peak_fd is None:
            return read_knob(self.path / "memory.peak")
        try:
            return os.pread(self._peak_fd, 64, 0).decode()
        except OSError:
            return ""

    def reset_peak(self) -> None:
        # since Linux 6.12 a write resets the peak as read through the same descriptor
        if self._peak_fd is None:
            try:
                self._peak_fd = os.open(self.path / "memory.peak", os.O_RDWR | os.O_CLOEXEC)
            except OSError:
                return  # an older kernel: the peak stays the sandbox's whole life's
        with contextlib.suppress(OSError):
            os.write(self._peak_fd, b"reset\n")

    def freeze(self) -> None:
        write_knob(self.path / "entry" / "cgroup.freeze", "1")

    def thaw(self) -> None:
        write_knob(self.path / "entry" / "cgroup.freeze", "0")

    def turn_files(self) -> TurnFiles:
        return TurnFiles(self.path / "entry" / "cgroup.freeze", "1", "0", self.path / "entry" / "cpu.stat")

    def destroy(self) -> None:
        if self._destroyed:
            return
        self._destroyed = True
        if self._peak_fd is not None:
            os.close(self._peak_fd)
            self._peak_fd = None
        with contextlib.suppress(OSError):
            self.thaw()
        _rmdir(self.path, time.monotonic() + RMDIR_DEADLINE_S)


def _own_cgroup_paths() -> dict[str, str]:
    """This process's cgroup per v1 controller, and "" for the unified hierarchy."""
    paths: dict[str, str] = {}
    for line in read_knob(Path("/proc/self/cgroup")).splitlines():
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        _, controllers, path = parts
        if not controllers:
            paths[""] = path
        for c in controllers.split(","):
            paths[c] = path
    return paths


def _under(mount: Path, path: str) -> Path:
    """The directory of ``path`` under ``mount``, or the mount itself where a
    cgroup namespace hides the path."""
    candidate = mount / path.lstrip("/")
    return candidate if candidate.is_dir() else mount


class Cgroups:
    """Makes sandbox cgroups on this machine; ``problem`` says why it cannot."""

    def __init__(self, fs: Path = CGROUP_FS):
        self._lock = threading.Lock()
        self._renew_stem()
        self.version: str | None = None
        self.problem: str | None = None
        self._v2_parent: Path | None = None
        self._v1_parents: dict[str, Path] = {}
        own = _own_cgroup_paths()
        v2 = self._find_v2(fs, own)
        if v2 is not None:
            self.version, self._v2_parent = "cgroup v2", v2
        else:
            parents = {c: _under(fs / c, own.get(c, "/")) for c in V1_CONTROLLERS}
            missing = [c for c, p in parents.items() if not os.access(p, os.W_OK)]
            if missing:
                self.problem = (
                    f"no cgroup can be made for sandboxes ({RLIMIT_ONLY}): neither a cgroup v2 "
                    "hierarchy with the memory and pids controllers delegated nor writable v1 "
                    f"hierarchies ({', '.join(str(fs / c) for c in missing)} missing or not writable). "
                    "Fix: run the worker as root on a machine with cgroups mounted, or delegate a "
                    "v2 cgroup (systemd Delegate=yes) and name it in TOURNEY_CGROUP_ROOT"
                )
            else:
                self.version, self._v1_parents = "cgroup v1", parents
        if self.version is not None:
            self.sweep()

    def _renew_stem(self) -> None:
        """Names for this process (a forked pool process gets its own: pid and start time)."""
        self._pid = os.getpid()
        self._stem = f"{PREFIX}{self._pid}-{process_start_time(self._pid)}-"
        self._counter = itertools.count()

    @staticmethod
    def _find_v2(fs: Path, own: dict[str, str]) -> Path | None:
        explicit = os.environ.get("TOURNEY_CGROUP_ROOT")
        candidates = [Path(explicit)] if explicit else []
        unified = fs / "unified" if (fs / "unified" / "cgroup.controllers").exists() else fs
        if (unified / "cgroup.controllers").exists():
            candidates.append(_under(unified, own.get("", "/")))
        for c in candidates:
            enabled = set(read_knob(c / "cgroup.subtree_control").split())
            if {"memory", "pids"} <= enabled and os.access(c, os.W_OK):
                return c
        return None

    @property
    def memory_mode(self) -> str:
        """One line for the run log and the report: what charges an entry's memory."""
        return f"memory: {self.version}" if self.version else RLIMIT_ONLY

    def create(self, memory_bytes: int, tasks: int) -> SandboxCgroup:
        """A fresh cgroup with these limits (``CgroupError`` if none can be made)."""
        if self.version is None:
            raise CgroupError(self.problem or RLIMIT_ONLY)
        with self._lock:
            if os.getpid() != self._pid:
                self._renew_stem()
            name = f"{self._stem}{next(self._counter)}"
        if self._v2_parent is not None:
            return CgroupV2(self._v2_parent / name, memory_bytes, tasks)
        return CgroupV1({c: p / name for c, p in self._v1_parents.items()}, memory_bytes, tasks)

    def sweep(self) -> list[str]:
        """Remove the cgroups of workers that no longer run; return their names."""
        parents = [self._v2_parent] if self._v2_parent is not None else list(self._v1_parents.values())
        removed: set[str] = set()
        for parent in parents:
            with contextlib.suppress(OSError):
                for d in parent.iterdir():
                    m = _NAME.match(d.name)
                    if m is None or not d.is_dir():
                        continue
                    pid, start = int(m.group(1)), int(m.group(2))
                    if process_start_time(pid) == start:
                        continue  # its worker still runs: it is not ours to remove
                    for thaw, value in (
                        (d / "entry" / "freezer.state", "THAWED"),
                        (d / "entry" / "cgroup.freeze", "0"),
                    ):
                        with contextlib.suppress(OSError):
                            write_knob(thaw, value)  # a frozen process cannot die and leave
                    if _rmdir(d, time.monotonic() + RMDIR_SWEEP_S):
                        removed.add(d.name)
        return sorted(removed)


_shared: Cgroups | None = None
_shared_lock = threading.Lock()


def shared_cgroups() -> Cgroups:
    """The process's one ``Cgroups`` (detection and the stale sweep run once)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = Cgroups()
        return _shared


def sandbox_memory_note() -> str:
    """What a worker says at start about how its sandboxes' memory is charged
    ("memory: cgroup v1"), or, where no cgroup can be made, why and how to fix it."""
    cgroups = shared_cgroups()
    return cgroups.problem if cgroups.problem is not None else cgroups.memory_mode
