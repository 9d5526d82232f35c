"""psutil's watch over a sandbox's process tree while a move runs long.

A short move (most native moves take a millisecond) is never sampled: the
launcher's ``wait4`` accounting covers it for free, and one psutil sample
costs more than such a move. Once a move has run past the first sampling
delay, the host samples the tree under the launcher at an interval: the sum
of CPU time over every live process (the whole tree, so a fork bomb or a
multi-threaded busy loop is charged for all of its processes), the resident
memory of the tree, and how many processes it has. A sample over a limit
makes the host ask the launcher to stop the move.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

import psutil

#: moves shorter than this are never sampled
FIRST_SAMPLE_S = 0.010
#: time between samples, and the least of it: sampling must not eat the entry's CPU
SAMPLE_INTERVAL_S = 0.025
#: a persistent entry's first sample where its sandbox has a cgroup: the kernel already counts
#: its CPU (the cgroup's counter, read around every turn), holds its memory under a hard limit
#: (an OOM kill there is ``memory_limit``) and its tasks under ``pids.max``, and RLIMIT_CPU
#: bounds each process's CPU, so the sample only finds a broken limit sooner. A sample costs
#: about 0.4 ms of the worker's CPU (1 ms under load), taken from the engines on a busy
#: machine: at ``tc 1+0.01`` 27% of stockfish's moves passed 25 ms (about a fifth of the
#: worker's CPU went to samples), 2.5% pass 100 ms (docs/benchmarks.md, "Depth at equal clock")
CGROUP_FIRST_SAMPLE_S = 0.100
#: a sample may take at most this share of the time between samples
MAX_SAMPLE_SHARE = 0.25
#: CPU measured this far over the limit counts (tick granularity of the accounting)
CPU_SLACK_MS = 50.0

#: why a host stopped a run before it ended by itself (a sample saw the tree over a limit)
StopReason = Literal["cpu", "memory"]


@dataclass
class TreeUsage:
    """What the samples saw (maxima over the samples taken)."""

    cpu_ms: float = 0.0
    peak_rss_kb: int = 0
    peak_processes: int = 0
    samples: int = 0
    #: processes the kernel's OOM killer took at the sandbox cgroup's memory limit
    oom_kills: int = 0


class TreeWatch:
    """Samples the descendants of one process (the sandbox's launcher)."""

    def __init__(
        self,
        root_pid: int,
        *,
        cpu_limit_ms: float | None,
        memory_limit_kb: int | None,
        skip_children: bool = False,
    ):
        self.cpu_limit_ms = cpu_limit_ms
        #: the root's own children are not the entry's (the bwrap launcher's game inits, whose
        #: reaped children's CPU is that of the game's earlier moves): only their descendants are
        self.skip_children = skip_children
        self.memory_limit_kb = memory_limit_kb
        self.usage = TreeUsage()
        self.interval_s = SAMPLE_INTERVAL_S
        try:
            self._root: psutil.Process | None = psutil.Process(root_pid)
        except psutil.Error:
            self._root = None

    def sample(self) -> StopReason | None:
        """Take one sample; ``"cpu"`` or ``"memory"`` if the tree is over that limit."""
        if self._root is None:
            return None
        procs = descendants(self._root)
        if procs is None:
            return None
        if self.skip_children:
            try:
                own = set(child_pids(self._root.pid))
            except OSError:
                return None
            procs = [p for p in procs if p.pid not in own]
        cpu_s = 0.0
        rss = 0
        alive = 0
        for p in procs:
            try:
                with p.oneshot():
                    t = p.cpu_times()
                    m = p.memory_info()
            except psutil.Error:
                continue  # exited between the listing and the read
            alive += 1
            # children_*: descendants it already waited for, gone from the listing
            cpu_s += t.user + t.system + t.children_user + t.children_system
            rss += m.rss
        u = self.usage
        u.samples += 1
        u.cpu_ms = max(u.cpu_ms, cpu_s * 1000.0)
        u.peak_rss_kb = max(u.peak_rss_kb, rss // 1024)
        u.peak_processes = max(u.peak_processes, alive)
        if self.cpu_limit_ms is not None and u.cpu_ms > self.cpu_limit_ms + CPU_SLACK_MS:
            return "cpu"
        if self.memory_limit_kb is not None and u.peak_rss_kb > self.memory_limit_kb:
            return "memory"
        return None

    def next_interval(self, sample_cost_s: float) -> float:
        """Time to the next sample: never so soon that sampling takes over a core."""
        self.interval_s = max(SAMPLE_INTERVAL_S, sample_cost_s / MAX_SAMPLE_SHARE)
        return self.interval_s


def descendants(root: psutil.Process) -> list[psutil.Process] | None:
    """Every live descendant of ``root`` (None when ``root`` is gone).

    Read from ``/proc/<pid>/task/<tid>/children``, which costs as much as the tree is
    large; psutil's ``children(recursive=True)`` reads the parent of every process on
    the machine instead, several milliseconds per sample on a busy machine (issue 13),
    taken from the very entry it watches. Without that file (a kernel built without
    ``CONFIG_PROC_CHILDREN``), psutil's way."""
    try:
        pids = child_pids(root.pid)
    except FileNotFoundError:
        if not os.path.exists(f"/proc/{root.pid}"):
            return None
        try:
            return root.children(recursive=True)
        except psutil.Error:
            return None
    found: list[psutil.Process] = []
    seen = {root.pid}
    while pids:
        pid = pids.pop()
        if pid in seen:
            continue
        seen.add(pid)
        try:
            found.append(psutil.Process(pid))
            pids.extend(child_pids(pid))
        except (psutil.Error, OSError):
            continue  # gone between the listing and the read: its children went to a subreaper
    return found


def child_pids(pid: int) -> list[int]:
    """The children of every thread of ``pid``; FileNotFoundError when it (or the file) is gone."""
    pids: list[int] = []
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                pids.extend(int(p) for p in f.read().split())
        except FileNotFoundError:
            if tid == str(pid):
                raise
            continue  # a thread that ended
    return pids
