"""Numbers both hosts share: how much output they keep, the CPU rlimit backstop,
and the limits a build runs under.

One place, so the plain host (``sandbox: none``) and the bubblewrap sandbox
cannot drift apart: an entry must get the same verdict under either.
"""

from __future__ import annotations

import math

from runner.domain.match_values import Limits

#: how much of stderr a move keeps (its tail explains crashes)
STDERR_TAIL = 4096
#: builds keep more of their log
BUILD_LOG_TAIL = 64 * 1024

#: the least generous limits a build runs under, whatever the tournament's move limits are:
#: a compiler needs minutes, gigabytes and a few hundred processes and files
BUILD_FLOOR = Limits(
    move_wall_s=300.0,
    move_cpu_s=300.0,
    memory_mb=2048,
    output_kb=1024,
    processes=256,
    open_files=1024,
    file_size_mb=256,
)


def build_limits(limits: Limits | None = None) -> Limits:
    """``limits`` raised to ``BUILD_FLOOR`` field by field (move limits do not fit a compiler)."""
    base = limits or Limits()
    f = BUILD_FLOOR
    return Limits(
        move_wall_s=max(base.move_wall_s, f.move_wall_s),
        move_cpu_s=max(base.cpu_s, f.cpu_s),
        memory_mb=max(base.memory_mb, f.memory_mb),
        output_kb=max(base.output_kb, f.output_kb),
        processes=max(base.processes, f.processes),
        open_files=max(base.open_files, f.open_files),
        file_size_mb=max(base.file_size_mb, f.file_size_mb),
    )


def cpu_rlimit_s(cpu_s: float) -> tuple[int, int]:
    """(soft, hard) RLIMIT_CPU for a CPU limit of ``cpu_s``.

    A backstop only: whole seconds, strictly above the limit, so the precise
    checks (sampled tree CPU, final rusage) decide first. SIGXCPU at the soft
    limit; SIGKILL a second later for a process that ignores it.
    """
    soft = math.floor(cpu_s) + 1
    return soft, soft + 1
