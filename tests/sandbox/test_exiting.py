"""The rule for leftovers on their way out (``workers.sandbox.exiting``): the kernel's view of real
processes, and the grace loop with a fake clock (it waits only while every leftover is exiting)."""

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


def test_a_running_process_is_not_exiting_a_signalled_or_dead_one_is() -> None:
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
        os.kill(proc.pid, signal.SIGTERM)  # pending (blocked): it was told to go
        assert is_exiting(proc.pid)
        proc.kill()
        os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOWAIT)  # dead, not reaped: a zombie
        assert is_exiting(proc.pid)
    finally:
        proc.kill()
        proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
    assert is_exiting(proc.pid)  # gone


def test_a_leftover_not_exiting_is_returned_at_once() -> None:
    clock = Clock()
    left = leftovers_after_grace(
        lambda: [10, 11], 5.0, exiting=lambda pid: pid == 10, clock=clock, sleep=clock.sleep
    )
    assert left == [10, 11] and clock.sleeps == 0


def test_exiting_leftovers_are_waited_for_until_they_go() -> None:
    clock = Clock()
    alive = [[7, 8], [7, 8], [8], []]
    left = leftovers_after_grace(
        lambda: alive.pop(0), 0.3, exiting=lambda pid: True, clock=clock, sleep=clock.sleep
    )
    assert left == [] and clock.sleeps == 3


def test_the_grace_ends() -> None:
    clock = Clock()
    left = leftovers_after_grace(lambda: [7], 0.3, exiting=lambda pid: True, clock=clock, sleep=clock.sleep)
    assert left == [7] and 0.3 <= clock.now < 0.31


def test_once_seen_exiting_it_stays_so_for_the_grace() -> None:
    # its SIGTERM handler runs now: the signal is no longer pending
    clock = Clock()
    seen = iter([True])
    alive = [[7], [7], []]
    left = leftovers_after_grace(
        lambda: alive.pop(0), 1.0, exiting=lambda pid: next(seen, False), clock=clock, sleep=clock.sleep
    )
    assert left == []
