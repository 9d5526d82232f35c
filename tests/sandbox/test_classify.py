"""The one classifier: a measurement and the limits in, a verdict out (pure: no host needed).

One row per rule of ``classify``'s docstring, then the conflicts between
rules, then how each host's raw report becomes a ``Measurement``.
"""

from __future__ import annotations

import signal
from dataclasses import replace

import pytest

from runner.domain.match_values import Limits, Verdict, VerdictKind
from workers.sandbox.classify import Measurement, classify, judged, outcome, signal_name, verdict_of
from workers.sandbox.launcher import (
    F_EXITED,
    F_KILLED,
    F_LEFT,
    F_SIGNALED,
    F_STDOUT_OVER,
    F_TIMEOUT,
    LauncherResult,
    measure,
)
from workers.sandbox.sampler import TreeUsage

LIMITS = Limits(move_wall_s=1.0, move_cpu_s=0.5, memory_mb=512, output_kb=64)
CLEAN = Measurement(exit_code=0, wall_ms=10.0, cpu_ms=1.0, peak_rss_kb=1000)
KILLED = replace(CLEAN, exit_code=None, signal=signal.SIGKILL)


def crashed(sig: int, **kw: object) -> Measurement:
    return replace(CLEAN, exit_code=None, signal=sig, **kw)  # type: ignore[arg-type]


def verdict(m: Measurement, limits: Limits = LIMITS) -> tuple[VerdictKind | None, str]:
    return classify(m, limits, cpu_limit_s=limits.cpu_s)


# -- one row per rule, in the docstring's order ------------------------------------------------
RULES = [
    pytest.param(
        replace(CLEAN, exit_code=None, start_error="cannot start './a.out': No such file or directory"),
        VerdictKind.CRASH,
        "cannot start './a.out': No such file or directory",
        id="1-not-started",
    ),
    pytest.param(
        replace(KILLED, cpu_ms=640, peak_processes=33, stopped_for="cpu"),
        VerdictKind.CPU_LIMIT,
        "CPU limit 0.5 s exceeded: 0.64 s used by 33 processes",
        id="2-stopped-for-cpu",
    ),
    pytest.param(
        replace(KILLED, tree_rss_kb=600 * 1024, peak_processes=4, stopped_for="memory"),
        VerdictKind.MEMORY_LIMIT,
        "memory limit 512 MiB exceeded: 600 MiB resident in 4 processes",
        id="2-stopped-for-memory",
    ),
    pytest.param(
        replace(KILLED, output_over=True),
        VerdictKind.BAD_OUTPUT,
        "output over 64 KiB",
        id="3-output-over-the-cap",
    ),
    pytest.param(
        crashed(signal.SIGXCPU, cpu_ms=1000),
        VerdictKind.CPU_LIMIT,
        "CPU limit 0.5 s exceeded: 1.00 s used",
        id="4-cpu-soft-rlimit-sigxcpu",
    ),
    pytest.param(
        crashed(signal.SIGKILL, cpu_ms=2000),
        VerdictKind.CPU_LIMIT,
        "CPU limit 0.5 s exceeded: 2.00 s used",
        id="4-cpu-hard-rlimit-sigkill",
    ),
    pytest.param(
        replace(CLEAN, cpu_ms=700),
        VerdictKind.CPU_LIMIT,
        "CPU limit 0.5 s exceeded: 0.70 s used",
        id="4-cpu-answer-too-late-in-cpu-time",
    ),
    pytest.param(
        replace(KILLED, timed_out=True, wall_ms=1005, cpu_ms=20),
        VerdictKind.TIMEOUT,
        "wall-clock limit 1 s exceeded",
        id="5-wall-clock",
    ),
    pytest.param(
        replace(CLEAN, exit_code=1, stderr_tail=b"Traceback ...\nMemoryError\n"),
        VerdictKind.MEMORY_LIMIT,
        "memory limit 512 MiB exceeded (MemoryError)",
        id="6-memory-words-on-a-failed-exit",
    ),
    pytest.param(
        crashed(signal.SIGSEGV, peak_rss_kb=500 * 1024),
        VerdictKind.MEMORY_LIMIT,
        "memory limit 512 MiB exceeded (peak near the limit)",
        id="6-memory-peak-near-the-limit",
    ),
    pytest.param(
        crashed(signal.SIGSEGV), VerdictKind.CRASH, "signal 11 (SIGSEGV)", id="7-signal-with-its-name"
    ),
    pytest.param(replace(CLEAN, exit_code=3), VerdictKind.CRASH, "exit code 3", id="8-exit-code"),
    pytest.param(
        replace(CLEAN, left_count=2, left_comm="sleep"),
        VerdictKind.LEFT_PROCESSES,
        "did not kill all its processes: 2 still running after it exited (sleep)",
        id="9-left-processes",
    ),
    pytest.param(CLEAN, None, "", id="10-clean-exit-is-for-the-protocol"),
]


@pytest.mark.parametrize(("m", "kind", "detail"), RULES)
def test_each_rule(m: Measurement, kind: VerdictKind | None, detail: str) -> None:
    assert verdict(m) == (kind, detail)


# -- where two rules could apply, the earlier one wins -------------------------------------------
CONFLICTS = [
    pytest.param(
        # a tree of busy processes the deadline stopped had spent its CPU budget first
        replace(KILLED, timed_out=True, wall_ms=1010, cpu_ms=1900, peak_processes=33),
        Limits(move_wall_s=1.0),
        VerdictKind.CPU_LIMIT,
        "CPU limit 1 s exceeded: 1.90 s used by 33 processes",
        id="cpu-vs-wall:busy-tree-is-cpu",
    ),
    pytest.param(
        # one busy process killed 80 ms late, with equal limits: the CPU of the lateness does not count
        replace(KILLED, timed_out=True, wall_ms=1080, cpu_ms=1080),
        Limits(move_wall_s=1.0),
        VerdictKind.TIMEOUT,
        "wall-clock limit 1 s exceeded",
        id="cpu-vs-wall:one-late-process-is-timeout",
    ),
    pytest.param(
        # the deadline's SIGKILL is not the hard CPU rlimit's, whatever the CPU
        replace(KILLED, timed_out=True, wall_ms=1001, cpu_ms=10),
        LIMITS,
        VerdictKind.TIMEOUT,
        "wall-clock limit 1 s exceeded",
        id="kill-vs-crash:the-deadline-kill-is-timeout",
    ),
    pytest.param(
        replace(KILLED, output_over=True, signal=signal.SIGKILL),
        LIMITS,
        VerdictKind.BAD_OUTPUT,
        "output over 64 KiB",
        id="kill-vs-crash:the-output-cap-kill-is-bad-output",
    ),
    pytest.param(
        replace(KILLED, cpu_ms=10),
        LIMITS,
        VerdictKind.CRASH,
        "signal 9 (SIGKILL)",
        id="kill-vs-crash:a-sigkill-nobody-explains-is-a-crash",
    ),
    pytest.param(
        replace(KILLED, cpu_ms=5000, stopped_for="memory", tree_rss_kb=513 * 1024),
        LIMITS,
        VerdictKind.MEMORY_LIMIT,
        "memory limit 512 MiB exceeded: 513 MiB resident in 1 process",
        id="stopped-for-memory-outranks-cpu",
    ),
    pytest.param(
        replace(CLEAN, stderr_tail=b"MemoryError handled\n"),
        LIMITS,
        None,
        "",
        id="memory-words:after-a-clean-exit-are-nobodys-business",
    ),
    pytest.param(
        crashed(signal.SIGABRT, stderr_tail=b"terminate called after throwing 'std::bad_alloc'\n"),
        LIMITS,
        VerdictKind.MEMORY_LIMIT,
        "memory limit 512 MiB exceeded (bad_alloc)",
        id="memory-words:outrank-the-crash",
    ),
    pytest.param(
        replace(CLEAN, exit_code=2, left_count=1),
        LIMITS,
        VerdictKind.CRASH,
        "exit code 2",
        id="a-crash-outranks-left-processes",
    ),
]


@pytest.mark.parametrize(("m", "limits", "kind", "detail"), CONFLICTS)
def test_rule_order(m: Measurement, limits: Limits, kind: VerdictKind | None, detail: str) -> None:
    assert verdict(m, limits) == (kind, detail)


def test_no_cpu_budget_means_no_cpu_rule() -> None:
    # a persistent process without a game budget: SIGXCPU cannot be ours, so it is a crash
    assert classify(crashed(signal.SIGXCPU, cpu_ms=9000), LIMITS, cpu_limit_s=None) == (
        VerdictKind.CRASH,
        "signal 24 (SIGXCPU)",
    )


def test_the_wall_limit_can_be_given() -> None:
    m = replace(KILLED, timed_out=True)
    assert classify(m, LIMITS, cpu_limit_s=None, wall_limit_s=2.5) == (
        VerdictKind.TIMEOUT,
        "wall-clock limit 2.5 s exceeded",
    )


def test_signal_name_of_an_unknown_number() -> None:
    assert signal_name(signal.SIGSEGV) == "SIGSEGV"
    assert signal_name(200) == "signal 200"


def test_judged_carries_the_measurement_into_the_outcome() -> None:
    m = replace(CLEAN, exit_code=3, stderr_tail=b"oops", tree_rss_kb=5000, cpu_ms=12.5)
    out = judged(m, b"partial", LIMITS, cpu_limit_s=LIMITS.cpu_s)
    assert (out.failure, out.detail, out.exit_code, out.signal) == (VerdictKind.CRASH, "exit code 3", 3, None)
    assert (out.stdout, out.stderr_tail, out.cpu_ms, out.peak_rss_kb) == (b"partial", b"oops", 12.5, 5000)


@pytest.mark.parametrize(
    "m",
    [
        pytest.param(crashed(signal.SIGSEGV, stderr_tail=b"starting\nSegmentation fault\n"), id="signal"),
        pytest.param(replace(CLEAN, exit_code=3, stderr_tail=b"oops: no board\n"), id="exit-code"),
    ],
)
def test_a_crash_has_one_wording_whether_the_host_classified_it_or_not(m: Measurement) -> None:
    """``verdict_of`` is the only way from an outcome to a verdict: an outcome whose host left
    ``failure`` empty gets ``classify``'s crash rule, and both quote stderr's last line."""
    classified = verdict_of(judged(m, b"", LIMITS, cpu_limit_s=LIMITS.cpu_s), "p")
    unclassified = verdict_of(outcome(m, b"", None, ""), "p")
    kind, detail = verdict(m)
    why = m.stderr_tail.decode().splitlines()[-1]
    assert classified == unclassified == Verdict(VerdictKind.CRASH, "p", f"{detail}: {why}")
    assert kind is VerdictKind.CRASH


def test_a_clean_outcome_has_no_verdict_and_a_long_detail_is_cut_to_one_line() -> None:
    assert verdict_of(judged(CLEAN, b"1 2\n", LIMITS, cpu_limit_s=LIMITS.cpu_s), "p") is None
    long = outcome(CLEAN, b"", VerdictKind.BAD_OUTPUT, "x\n" * 300)
    v = verdict_of(long, "p")
    assert v is not None and len(v.detail) == 200 and "\n" not in v.detail and v.detail.endswith("...")


# -- the sandbox's launcher report as a measurement ---------------------------------------------
def launcher(
    flags: int, code: int = 0, sig: int = 0, cpu_ms: float = 1.0, left: int = 0, comm: str = ""
) -> LauncherResult:
    return LauncherResult(flags, code, sig, 0, 1_000_000, int(cpu_ms * 1000), 1000, left, comm, b"", b"err")


def test_launcher_report_becomes_a_measurement() -> None:
    usage = TreeUsage(cpu_ms=640, peak_rss_kb=2048, peak_processes=3, samples=2)
    m = measure(launcher(F_SIGNALED | F_TIMEOUT | F_KILLED, sig=9, cpu_ms=600), usage, "cpu")
    assert m == Measurement(
        exit_code=None,
        signal=9,
        wall_ms=1000.0,
        cpu_ms=640.0,
        peak_rss_kb=1000,
        tree_rss_kb=2048,
        peak_processes=3,
        timed_out=True,
        stderr_tail=b"err",
        stopped_for="cpu",
    )


def test_launcher_flags_for_output_and_leftovers() -> None:
    assert measure(launcher(F_EXITED | F_STDOUT_OVER), TreeUsage()).output_over
    left = measure(launcher(F_EXITED | F_LEFT, comm="sleep"), TreeUsage())  # a count of 0 still means one
    assert (left.exit_code, left.left_count, left.left_comm) == (0, 1, "sleep")
