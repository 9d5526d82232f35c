"""Which verdict a finished run earns (pure: no sandbox needed)."""

from __future__ import annotations

import signal

import pytest

from runner.contracts import Limits, VerdictKind
from workers.sandbox.classify import classify
from workers.sandbox.launcher import (
    F_EXITED,
    F_KILLED,
    F_LEFT,
    F_SIGNALED,
    F_STDOUT_OVER,
    F_TIMEOUT,
    LauncherResult,
)
from workers.sandbox.sampler import TreeUsage

LIMITS = Limits(move_wall_s=1.0, move_cpu_s=0.5, memory_mb=512, output_kb=64)


def result(
    flags: int,
    code: int = 0,
    sig: int = 0,
    cpu_ms: float = 1.0,
    rss_kb: int = 1000,
    stderr: bytes = b"",
    left: int = 0,
    comm: str = "",
) -> LauncherResult:
    return LauncherResult(flags, code, sig, 0, 1000, int(cpu_ms * 1000), rss_kb, left, comm, b"", stderr)


def verdict(
    r: LauncherResult, usage: TreeUsage | None = None, **kw: object
) -> tuple[VerdictKind | None, str]:
    return classify(r, LIMITS, usage or TreeUsage(), cpu_limit_s=LIMITS.cpu_s, **kw)  # type: ignore[arg-type]


def test_a_clean_exit_is_left_to_the_protocol() -> None:
    assert verdict(result(F_EXITED)) == (None, "")


def test_exit_codes_and_signals() -> None:
    assert verdict(result(F_EXITED, code=3)) == (VerdictKind.CRASH, "exit code 3")
    assert verdict(result(F_SIGNALED, sig=11)) == (VerdictKind.CRASH, "signal 11 (SIGSEGV)")
    assert verdict(result(F_SIGNALED, sig=6)) == (VerdictKind.CRASH, "signal 6 (SIGABRT)")


def test_timeout_explains_the_kill() -> None:
    kind, detail = verdict(result(F_SIGNALED | F_TIMEOUT | F_KILLED, sig=9))
    assert (kind, detail) == (VerdictKind.TIMEOUT, "wall-clock limit 1 s exceeded")


def test_output_over_the_cap() -> None:
    assert verdict(result(F_SIGNALED | F_STDOUT_OVER | F_KILLED, sig=9)) == (
        VerdictKind.BAD_OUTPUT,
        "output over 64 KiB",
    )


@pytest.mark.parametrize(
    ("r", "why"),
    [
        (result(F_SIGNALED, sig=signal.SIGXCPU, cpu_ms=1000), "the CPU rlimit's SIGXCPU"),
        (result(F_SIGNALED, sig=signal.SIGKILL, cpu_ms=2000), "the CPU rlimit's hard SIGKILL"),
        (result(F_EXITED, cpu_ms=700), "an answer that came too late in CPU time"),
    ],
)
def test_cpu_limit(r: LauncherResult, why: str) -> None:
    kind, detail = verdict(r)
    assert kind is VerdictKind.CPU_LIMIT, why
    assert detail.startswith("CPU limit 0.5 s exceeded")


def test_cpu_limit_from_the_tree_sampler_names_the_processes() -> None:
    usage = TreeUsage(cpu_ms=640, peak_rss_kb=1000, peak_processes=33, samples=5)
    kind, detail = verdict(result(F_SIGNALED | F_KILLED, sig=9), usage, stopped_for="cpu")
    assert kind is VerdictKind.CPU_LIMIT
    assert detail == "CPU limit 0.5 s exceeded: 0.64 s used by 33 processes"


def test_a_sigkill_we_did_not_send_and_little_cpu_is_a_crash() -> None:
    assert verdict(result(F_SIGNALED, sig=9, cpu_ms=10)) == (VerdictKind.CRASH, "signal 9 (SIGKILL)")


@pytest.mark.parametrize(
    "r",
    [
        result(F_EXITED, code=1, stderr=b"Traceback ...\nMemoryError\n"),
        result(
            F_SIGNALED, sig=6, stderr=b"terminate called after throwing an instance of 'std::bad_alloc'\n"
        ),
        result(F_SIGNALED, sig=11, rss_kb=500 * 1024),
    ],
)
def test_memory_limit(r: LauncherResult) -> None:
    kind, detail = verdict(r)
    assert kind is VerdictKind.MEMORY_LIMIT
    assert detail.startswith("memory limit 512 MiB exceeded")


def test_memory_words_in_a_clean_exit_are_nobodys_business() -> None:
    assert verdict(result(F_EXITED, stderr=b"MemoryError handled\n")) == (None, "")


def test_memory_stopped_by_the_sampler() -> None:
    usage = TreeUsage(cpu_ms=10, peak_rss_kb=600 * 1024, peak_processes=4)
    kind, detail = verdict(result(F_SIGNALED | F_KILLED, sig=9), usage, stopped_for="memory")
    assert kind is VerdictKind.MEMORY_LIMIT
    assert detail == "memory limit 512 MiB exceeded: 600 MiB resident in 4 processes"


def test_left_processes() -> None:
    kind, detail = verdict(result(F_EXITED | F_LEFT, left=2, comm="sleep"))
    assert kind is VerdictKind.LEFT_PROCESSES
    assert detail == "did not kill all its processes: 2 still running after it exited (sleep)"


def test_a_crash_outranks_left_processes() -> None:
    assert verdict(result(F_EXITED | F_LEFT, code=2, left=1))[0] is VerdictKind.CRASH


def test_a_busy_tree_stopped_by_the_deadline_was_over_its_cpu_budget() -> None:
    limits = Limits(move_wall_s=1.0)  # CPU limit = wall limit
    tree = LauncherResult(
        F_SIGNALED | F_TIMEOUT | F_KILLED, 0, 9, 0, 1_010_000, 1_900_000, 1000, 0, "", b"", b""
    )
    usage = TreeUsage(cpu_ms=900, peak_processes=33)
    kind, detail = classify(tree, limits, usage, cpu_limit_s=limits.cpu_s)
    assert kind is VerdictKind.CPU_LIMIT
    assert detail == "CPU limit 1 s exceeded: 1.90 s used by 33 processes"


def test_one_busy_process_with_equal_limits_is_a_timeout_even_when_killed_late() -> None:
    limits = Limits(move_wall_s=1.0)
    # killed 80 ms late, having used the CPU of all of it
    late = LauncherResult(
        F_SIGNALED | F_TIMEOUT | F_KILLED, 0, 9, 0, 1_080_000, 1_080_000, 1000, 0, "", b"", b""
    )
    kind, _ = classify(late, limits, TreeUsage(), cpu_limit_s=limits.cpu_s)
    assert kind is VerdictKind.TIMEOUT
