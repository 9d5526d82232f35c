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

from dataclasses import dataclass
from typing import Literal

import psutil

#: moves shorter than this are never sampled
FIRST_SAMPLE_S = 0.010
#: time between samples, and the least of it: sampling must not eat the entry's CPU
SAMPLE_INTERVAL_S = 0.025
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

    def __init__(self, root_pid: int, *, cpu_limit_ms: float | None, memory_limit_kb: int | None):
        self.cpu_limit_ms = cpu_limit_ms
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
        try:
            procs = self._root.children(recursive=True)
        except psutil.Error:
            return None
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
