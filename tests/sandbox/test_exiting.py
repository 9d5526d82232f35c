"""The rule for leftovers after a move's program exits (``workers.sandbox.exiting``): the kernel's
view of real processes (only its exit path counts as exiting), and the grace loop with a fake clock
(it waits while some leftover still runs its own code, at most the grace)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

from workers.sandbox.exiting import is_exiting, leftovers_after_grace

PY = sys.executable


class Clock:
    def __init__(self) -> None:
        self.now = 0.0
        self.sleeps = 0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.sleeps += 1
        self.now += s


def test_a_running_or_signalled_process_is_not_exiting_a_dead_one_is() -> None:
    code = (
        "import signal, time\n"
        "signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})\n"
        "print(1, flush=True)\n"
        "time.sleep(30)"
    )
    proc = subprocess.Popen([PY, "-c", code], stdout=subprocess.PIPE)
    try:
        assert proc.stdout is not None and proc.stdout.readline() == b"1\n"
        assert not is_exiting(proc.pid)
        os.kill(proc.pid, signal.SIGTERM)  # pending (blocked): told to go, but it runs on
        assert not is_exiting(proc.pid)
        proc.kill()
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped: a zombie
        assert is_exiting(proc.pid)
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert is_exiting(proc.pid)  # gone


def test_a_leftover_that_goes_within_the_grace_is_not_returned() -> None:
    clock = Clock()
    alive = [[10, 11], [10, 11], [11], []]
    left = leftovers_after_grace(
        lambda: alive.pop(0), 5.0, exiting=lambda pid: False, clock=clock, sleep=clock.sleep
    )
    assert left == [] and clock.sleeps == 3


def test_exiting_leftovers_are_not_waited_for() -> None:
    clock = Clock()
    left = leftovers_after_grace(
        lambda: [7, 8], 5.0, exiting=lambda pid: True, clock=clock, sleep=clock.sleep
    )
    assert left == [] and clock.sleeps == 0


def test_a_leftover_still_running_when_the_grace_ends_is_returned() -> None:
    clock = Clock()
    left = leftovers_after_grace(
        lambda: [7, 8], 0.3, exiting=lambda pid: pid == 8, clock=clock, sleep=clock.sleep
    )
    assert left == [7] and 0.3 <= clock.now < 0.31


def test_once_seen_exiting_it_is_not_looked_at_again() -> None:
    clock = Clock()
    looked: list[int] = []

    def exiting(pid: int) -> bool:
        looked.append(pid)
        return pid == 7

    alive = [[7, 8], [7, 8], [7]]
    left = leftovers_after_grace(lambda: alive.pop(0), 1.0, exiting=exiting, clock=clock, sleep=clock.sleep)
    assert left == [] and looked == [7, 8, 8]
