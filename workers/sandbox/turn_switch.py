"""A persistent entry's per-turn cgroup controls, held open for its life (docs/sandbox.md).

Around every turn of a persistent entry the host thaws it, reads its CPU time, and after its
answer reads the CPU time again and freezes it (nothing of it runs on the opponent's time).
A chess engine at 2,000 nodes a move answers in a few milliseconds, so these four steps are
a good part of a ply: opening the cgroup file by its path for each freeze and thaw cost about
150 us apiece here, and psutil's walk of the process tree for the CPU time about 300 us a
read. The kernel already counts every CPU second of the sandbox (cgroup CPU accounting), so
the CPU time is read from that counter, and both files are opened once per process and read
or written in place: a few microseconds each.

Under cgroup v1 most of a freeze and thaw is the kernel's, not the file's: the v1 freezer
turns a global static key on when a cgroup starts freezing and off when the last frozen one
thaws, and patching that key into the kernel's code took about 170 us each way here. So a
process that freezes v1 sandboxes holds one empty cgroup of its own frozen for its whole
life (``warm_v1_freezer``): the key stays on, and a freeze and thaw of a sandbox took about
20 us instead of 350. The freeze itself is the same cgroup freezer on the same processes,
so nothing of an entry runs on the opponent's time, exactly as before. The empty cgroup is
named as the sandboxes are (``tourney-freezer-<pid>-<start>-0``): removed at exit, and by
the next worker's sweep if its process died.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import threading
from dataclasses import dataclass
from pathlib import Path

log = logging.getLogger(__name__)

#: the v1 freezer's value that freezes
V1_FROZEN = "FROZEN"


@dataclass(frozen=True)
class TurnFiles:
    """Where a sandbox cgroup's freezer and CPU counter are, and how they are spoken."""

    freeze: Path  # v1 ``freezer.state``, v2 ``cgroup.freeze`` of the ``entry`` child
    frozen: str  # what freezes: "FROZEN" / "1"
    thawed: str  # what thaws: "THAWED" / "0"
    cpu: Path  # v1 ``cpuacct.usage`` (ns), v2 ``cpu.stat`` (its ``usage_usec`` line)


class TurnSwitch:
    """Freeze, thaw and read the CPU time of one sandbox's entry through descriptors opened
    once; ``OSError`` from any of them is the caller's (a host failure, never the entry's)."""

    def __init__(self, files: TurnFiles):
        if files.frozen == V1_FROZEN:
            warm_v1_freezer(files.freeze.parents[2])
        self._frozen, self._thawed = files.frozen.encode(), files.thawed.encode()
        self._v1_cpu = files.cpu.name == "cpuacct.usage"
        self._freeze_fd = os.open(files.freeze, os.O_WRONLY | os.O_CLOEXEC)
        try:
            self._cpu_fd = os.open(files.cpu, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            os.close(self._freeze_fd)
            raise

    def freeze(self) -> None:
        os.pwrite(self._freeze_fd, self._frozen, 0)

    def thaw(self) -> None:
        os.pwrite(self._freeze_fd, self._thawed, 0)

    def cpu_ms(self) -> float:
        """CPU time the kernel has counted for the sandbox (v1) or its entry (v2) so far."""
        text = os.pread(self._cpu_fd, 4096, 0).decode()
        if self._v1_cpu:
            return int(text.strip() or 0) / 1e6
        for line in text.splitlines():
            key, _, value = line.partition(" ")
            if key == "usage_usec":
                return int(value) / 1000.0
        return 0.0

    def close(self) -> None:
        for fd in (self._freeze_fd, self._cpu_fd):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._freeze_fd = self._cpu_fd = -1


_warm_lock = threading.Lock()
#: (the process that made it, its directory): one per process, forks make their own
_warm: tuple[int, Path] | None = None


def warm_v1_freezer(parent: Path) -> None:
    """Hold an empty cgroup under the v1 freezer hierarchy's ``parent`` frozen for the rest of
    this process's life (module doc: the kernel's static key stays on). Where it cannot be
    made, freezes work as before, only slower: a note in the log, no error."""
    global _warm
    # local: breaks a cycle (workers.sandbox.cgroups imports this module)
    from workers.sandbox.cgroups import PREFIX, process_start_time

    with _warm_lock:
        pid = os.getpid()
        if _warm is not None and _warm[0] == pid:
            return
        group = parent / f"{PREFIX}freezer-{pid}-{process_start_time(pid)}-0"
        try:
            (group / "entry").mkdir(parents=True, exist_ok=True)
            (group / "entry" / "freezer.state").write_text(V1_FROZEN)
        except OSError as e:
            log.info("cannot hold a v1 freezer cgroup frozen (freezes stay slower): %s", e)
            _unwarm(group)
            return
        _warm = (pid, group)
        atexit.register(_unwarm, group)


def _unwarm(group: Path) -> None:
    with contextlib.suppress(OSError):
        (group / "entry" / "freezer.state").write_text("THAWED")
    for d in (group / "entry", group):
        with contextlib.suppress(OSError):
            d.rmdir()
