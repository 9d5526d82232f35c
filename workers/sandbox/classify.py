"""Which verdict a finished run earned (docs/architecture.md): hosts measure, this decides.

Both hosts describe how a program run ended as one ``Measurement`` (the
bubblewrap sandbox from its launcher's report and psutil's samples, the plain
host from ``wait4``); ``classify`` alone turns a measurement and the limits
into a verdict, so an entry gets the same verdict under ``sandbox: none`` as
in the sandbox, and ``verdict_of`` alone turns a host's ``RunOutcome`` into the
``Verdict`` a protocol records. Pure: no clock, no processes, no I/O.
"""

from __future__ import annotations

import re
import signal
from dataclasses import dataclass

from runner.domain.match_values import Limits, Verdict, VerdictKind
from workers.sandbox.base import RunOutcome
from workers.sandbox.limits import cpu_rlimit_s
from workers.sandbox.sampler import CPU_SLACK_MS, StopReason

#: what a process that ran out of address space tends to say on its way out
MEMORY_WORDS = re.compile(
    rb"MemoryError|bad_alloc|out of memory|Cannot allocate memory|memory exhausted|"
    rb"failed to allocate|allocation failed",
    re.IGNORECASE,
)
#: how much of an entry's output or stderr a detail quotes
QUOTE_CHARS = 60
#: the longest detail a verdict carries
DETAIL_CHARS = 200
#: an abnormal exit with a peak this close to the address-space limit ran out of memory
MEMORY_NEAR_LIMIT = 0.9


@dataclass(frozen=True)
class Measurement:
    """How one run of an entry program ended, as its host measured it.

    ``exit_code`` is None when the program died of a signal (``signal`` set)
    or never started (``start_error`` set). ``peak_rss_kb`` is the largest
    process's peak (``wait4``), which the address-space limit bounds;
    ``tree_rss_kb`` and ``peak_processes`` are what the host's sampler saw of
    the whole tree (0: not sampled, e.g. a short move or the plain host).
    """

    exit_code: int | None = 0
    signal: int | None = None
    wall_ms: float = 0.0
    cpu_ms: float = 0.0
    peak_rss_kb: int = 0
    tree_rss_kb: int = 0
    peak_processes: int = 0
    timed_out: bool = False  # the host stopped it at the wall-clock deadline
    output_over: bool = False  # it wrote more than the output cap
    left_count: int = 0  # descendants still running after the program exited
    left_comm: str = ""  # the name of one of them
    stderr_tail: bytes = b""
    stopped_for: StopReason | None = None
    start_error: str = ""  # why the program could not be started (its ``run`` line)
    oom_kills: int = 0  # processes the kernel killed at the sandbox cgroup's memory limit

    @property
    def failed(self) -> bool:
        """Died of a signal or exited non-zero."""
        return self.signal is not None or (self.exit_code is not None and self.exit_code != 0)


def signal_name(signo: int) -> str:
    try:
        return signal.Signals(signo).name
    except ValueError:
        return f"signal {signo}"


def one_line(text: str, limit: int = QUOTE_CHARS) -> str:
    """``text`` squeezed onto one short line (a verdict's detail is one line, docs/config.md)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def last_stderr_line(stderr_tail: bytes) -> str:
    lines = [ln for ln in stderr_tail.decode("utf-8", errors="replace").splitlines() if ln.strip()]
    return one_line(lines[-1], 100) if lines else ""


def _fmt_s(seconds: float) -> str:
    return f"{seconds:g} s"


def _processes(n: int) -> str:
    return f"{n} process{'es' if n != 1 else ''}"


def classify(
    m: Measurement,
    limits: Limits,
    *,
    cpu_limit_s: float | None,
    wall_limit_s: float | None = None,
) -> tuple[VerdictKind | None, str]:
    """The host rule the run broke, if any, with a one-line detail.

    ``cpu_limit_s`` is this run's CPU budget (None: no CPU rule, e.g. a
    persistent process without a game budget); ``wall_limit_s`` its
    wall-clock limit (default ``limits.move_wall_s``).

    The rules, first match wins. The order is the order of blame: a limit the
    host enforced by stopping the run explains whatever happened after it (a
    killed process dies of SIGKILL; that is not a crash).

    1. ``start_error``: the program could not be started → ``crash``.
    2. ``stopped_for`` ``"cpu"`` (with a CPU budget) → ``cpu_limit``;
       ``"memory"`` → ``memory_limit``: the host's sampler stopped it.
    3. ``oom_kills`` → ``memory_limit``: the kernel killed a process at the
       sandbox cgroup's limit, which counts what no process maps (SysV shm,
       memfd, tmpfs files, kernel memory).
    4. ``output_over`` → ``bad_output``.
    5. CPU → ``cpu_limit``: SIGXCPU (the soft rlimit); a SIGKILL the deadline
       did not explain, with the CPU at the soft rlimit (the hard rlimit); or
       CPU over the budget by more than ``CPU_SLACK_MS``, not counting what one
       core could have used between the deadline and the kill. CPU comes
       before the wall clock: a tree of busy processes that the deadline
       stopped had usually spent its CPU budget well before (the sampler can
       miss that on a loaded machine), while one busy process with equal CPU
       and wall limits is a timeout.
    6. ``timed_out`` → ``timeout``.
    7. a signal or a non-zero exit with a peak near the address-space limit
       (``MEMORY_NEAR_LIMIT``) or ``MEMORY_WORDS`` on stderr → ``memory_limit``
       (memory words after a clean exit are nobody's business).
    8. a signal → ``crash`` with its number and name.
    9. a non-zero exit code → ``crash`` with the code.
    10. descendants left running after the program exited → ``left_processes``.
    11. otherwise None: the protocol judges the output.
    """
    if m.start_error:
        return VerdictKind.CRASH, m.start_error
    procs = max(m.peak_processes, 1)
    if m.stopped_for == "cpu" and cpu_limit_s is not None:
        return (
            VerdictKind.CPU_LIMIT,
            f"CPU limit {_fmt_s(cpu_limit_s)} exceeded: {m.cpu_ms / 1000:.2f} s used by {_processes(procs)}",
        )
    if m.stopped_for == "memory":
        return (
            VerdictKind.MEMORY_LIMIT,
            f"memory limit {limits.memory_mb} MiB exceeded: {m.tree_rss_kb // 1024} MiB resident "
            f"in {_processes(procs)}",
        )
    if m.oom_kills:
        # the sandbox's cgroup counts what no process maps (shm, memfd, tmpfs, kernel memory)
        return (
            VerdictKind.MEMORY_LIMIT,
            f"memory limit {limits.memory_mb} MiB exceeded: the kernel killed {_processes(m.oom_kills)} "
            "at the sandbox's limit",
        )
    if m.output_over:
        return VerdictKind.BAD_OUTPUT, f"output over {limits.output_kb} KiB"
    wall = wall_limit_s if wall_limit_s is not None else limits.move_wall_s
    if cpu_limit_s is not None:
        soft, _ = cpu_rlimit_s(cpu_limit_s)
        by_rlimit = m.signal == signal.SIGXCPU or (
            m.signal == signal.SIGKILL and not m.timed_out and m.cpu_ms >= soft * 1000.0 - CPU_SLACK_MS
        )
        # a run the deadline stopped was over its CPU budget first only if it is over
        # even without the CPU one core could have used between the deadline and the kill
        late_ms = max(0.0, m.wall_ms - wall * 1000.0) if m.timed_out else 0.0
        if by_rlimit or m.cpu_ms - late_ms > cpu_limit_s * 1000.0 + CPU_SLACK_MS:
            by = f" by {_processes(procs)}" if m.peak_processes else ""
            return (
                VerdictKind.CPU_LIMIT,
                f"CPU limit {_fmt_s(cpu_limit_s)} exceeded: {m.cpu_ms / 1000:.2f} s used{by}",
            )
    if m.timed_out:
        return VerdictKind.TIMEOUT, f"wall-clock limit {_fmt_s(wall)} exceeded"
    if m.failed:
        near_limit = m.peak_rss_kb >= limits.memory_mb * 1024 * MEMORY_NEAR_LIMIT
        words = MEMORY_WORDS.search(m.stderr_tail)
        if near_limit or words is not None:
            why = words.group(0).decode(errors="replace") if words is not None else "peak near the limit"
            return VerdictKind.MEMORY_LIMIT, f"memory limit {limits.memory_mb} MiB exceeded ({why})"
    kind, detail = _exit_rule(m.exit_code, m.signal)
    if kind is not None:
        return kind, detail
    if m.left_count:
        name = f" ({m.left_comm})" if m.left_comm else ""
        return (
            VerdictKind.LEFT_PROCESSES,
            f"did not kill all its processes: {m.left_count} still running after it exited{name}",
        )
    return None, ""


def _exit_rule(exit_code: int | None, signo: int | None) -> tuple[VerdictKind | None, str]:
    """Rules 8 and 9 of ``classify``: a signal, then a non-zero exit code, is a crash."""
    if signo is not None:
        return VerdictKind.CRASH, f"signal {signo} ({signal_name(signo)})"
    if exit_code is not None and exit_code != 0:
        return VerdictKind.CRASH, f"exit code {exit_code}"
    return None, ""


def verdict_of(outcome: RunOutcome, player: str) -> Verdict | None:
    """The verdict ``player``'s run earned, else None (the protocol then judges its output).

    It is the host's ``failure`` (``classify``'s, or one the host reached itself);
    a host that left ``failure`` empty on a signal or a non-zero exit gets
    ``classify``'s crash rules, so no run ends as a crash worded two ways. A crash
    quotes the last line of stderr, which usually says why.
    """
    kind, detail = outcome.failure, outcome.detail
    if kind is None:
        kind, detail = _exit_rule(outcome.exit_code, outcome.signal)
        if kind is None:
            return None
    if kind is VerdictKind.CRASH:
        why = last_stderr_line(outcome.stderr_tail)
        if why and why not in detail:
            detail = f"{detail}: {why}"
    return Verdict(kind, player, one_line(detail, DETAIL_CHARS) or kind.value)


def judged(
    m: Measurement,
    stdout: bytes,
    limits: Limits,
    *,
    cpu_limit_s: float | None,
    wall_limit_s: float | None = None,
) -> RunOutcome:
    """The ``RunOutcome`` of a measured run: what it wrote, what it used, and ``classify``'s verdict."""
    failure, detail = classify(m, limits, cpu_limit_s=cpu_limit_s, wall_limit_s=wall_limit_s)
    return outcome(m, stdout, failure, detail)


def outcome(m: Measurement, stdout: bytes, failure: VerdictKind | None, detail: str) -> RunOutcome:
    """A ``RunOutcome`` with a verdict the host reached itself (e.g. a persistent process it stopped)."""
    return RunOutcome(
        stdout=stdout,
        stderr_tail=m.stderr_tail,
        exit_code=m.exit_code,
        signal=m.signal,
        wall_ms=m.wall_ms,
        cpu_ms=m.cpu_ms,
        peak_rss_kb=max(m.peak_rss_kb, m.tree_rss_kb),
        failure=failure,
        detail=detail,
    )
