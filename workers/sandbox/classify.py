"""Which DESIGN §4.3 verdict a finished run earned, from what was measured.

Pure: the launcher's result, the host's samples and the limits in; a
``VerdictKind`` (or None: the protocol judges the output) and a one-line
detail out. The order of the checks is the order of blame: a limit the host
enforced by stopping the run explains whatever happened after it (a killed
process dies of SIGKILL; that is not a crash). CPU comes before the wall
clock: a tree of busy processes that the deadline stopped had usually spent
its CPU budget well before (the sampler can miss that on a loaded machine),
while one busy process with equal CPU and wall limits is a timeout.
"""

from __future__ import annotations

import re
import signal

from runner.contracts import Limits, VerdictKind
from workers.sandbox.launcher import (
    F_LEFT,
    F_SIGNALED,
    F_STDOUT_OVER,
    F_TIMEOUT,
    LauncherResult,
    cpu_rlimit_s,
)
from workers.sandbox.sampler import CPU_SLACK_MS, TreeUsage

#: what a process that ran out of address space tends to say on its way out
MEMORY_WORDS = re.compile(
    rb"MemoryError|bad_alloc|out of memory|Cannot allocate memory|memory exhausted|"
    rb"failed to allocate|allocation failed",
    re.IGNORECASE,
)
#: an abnormal exit with a peak this close to the address-space limit ran out of memory
MEMORY_NEAR_LIMIT = 0.9


def signal_name(signo: int) -> str:
    try:
        return signal.Signals(signo).name
    except ValueError:
        return f"signal {signo}"


def _fmt_s(seconds: float) -> str:
    return f"{seconds:g} s"


def classify(
    result: LauncherResult,
    limits: Limits,
    usage: TreeUsage,
    *,
    stopped_for: str | None = None,
    cpu_limit_s: float | None = None,
    wall_limit_s: float | None = None,
) -> tuple[VerdictKind | None, str]:
    """The host rule the run broke, if any, with a one-line detail.

    ``stopped_for`` is ``"cpu"`` or ``"memory"`` when the host's sampler
    stopped the run; ``cpu_limit_s`` is the CPU budget of this run (None: no
    CPU rule, e.g. a persistent process without a game budget).
    """
    cpu_ms = max(result.cpu_us / 1000.0, usage.cpu_ms)
    procs = max(usage.peak_processes, 1)
    plural = "es" if procs != 1 else ""
    if stopped_for == "cpu" and cpu_limit_s is not None:
        return (
            VerdictKind.CPU_LIMIT,
            f"CPU limit {_fmt_s(cpu_limit_s)} exceeded: "
            f"{cpu_ms / 1000:.2f} s used by {procs} process{plural}",
        )
    if stopped_for == "memory":
        return (
            VerdictKind.MEMORY_LIMIT,
            f"memory limit {limits.memory_mb} MiB exceeded: {usage.peak_rss_kb // 1024} MiB resident "
            f"in {procs} process{plural}",
        )
    if usage.oom_kills:
        # the sandbox's cgroup counts what no process maps (shm, memfd, tmpfs, kernel memory)
        return (
            VerdictKind.MEMORY_LIMIT,
            f"memory limit {limits.memory_mb} MiB exceeded: the kernel killed {usage.oom_kills} "
            f"process{'es' if usage.oom_kills != 1 else ''} at the sandbox's limit",
        )
    if result.flags & F_STDOUT_OVER:
        return VerdictKind.BAD_OUTPUT, f"output over {limits.output_kb} KiB"
    wall = wall_limit_s if wall_limit_s is not None else limits.move_wall_s
    timed_out = bool(result.flags & F_TIMEOUT)
    sig = result.signal if result.flags & F_SIGNALED else None
    code = result.exit_code if not result.flags & F_SIGNALED else None
    if cpu_limit_s is not None:
        soft, _ = cpu_rlimit_s(cpu_limit_s)
        by_rlimit = sig == signal.SIGXCPU or (
            sig == signal.SIGKILL and not timed_out and cpu_ms >= soft * 1000.0 - CPU_SLACK_MS
        )
        # a run the deadline stopped was over its CPU budget first only if it is over
        # even without the CPU one core could have used between the deadline and the kill
        late_ms = max(0.0, result.wall_us / 1000.0 - wall * 1000.0) if timed_out else 0.0
        if by_rlimit or cpu_ms - late_ms > cpu_limit_s * 1000.0 + CPU_SLACK_MS:
            by = f" by {procs} process{plural}" if usage.peak_processes else ""
            return (
                VerdictKind.CPU_LIMIT,
                f"CPU limit {_fmt_s(cpu_limit_s)} exceeded: {cpu_ms / 1000:.2f} s used{by}",
            )
    if timed_out:
        return VerdictKind.TIMEOUT, f"wall-clock limit {_fmt_s(wall)} exceeded"
    failed = sig is not None or (code is not None and code != 0)
    if failed:
        near_limit = result.maxrss_kb >= limits.memory_mb * 1024 * MEMORY_NEAR_LIMIT
        words = MEMORY_WORDS.search(result.stderr)
        if near_limit or words is not None:
            why = words.group(0).decode(errors="replace") if words is not None else "peak near the limit"
            return VerdictKind.MEMORY_LIMIT, f"memory limit {limits.memory_mb} MiB exceeded ({why})"
    if sig is not None:
        return VerdictKind.CRASH, f"signal {sig} ({signal_name(sig)})"
    if code is not None and code != 0:
        return VerdictKind.CRASH, f"exit code {code}"
    if result.flags & F_LEFT:
        n = result.left_count or 1
        name = f" ({result.left_comm})" if result.left_comm else ""
        return (
            VerdictKind.LEFT_PROCESSES,
            f"did not kill all its processes: {n} still running after it exited{name}",
        )
    return None, ""
