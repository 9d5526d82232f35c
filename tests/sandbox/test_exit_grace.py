"""``left_processes`` must not depend on machine load (issue 14 item 9, issue 25 item 5), and
the exit grace is not free thinking time: after a move's program exits, its leftovers get
``Limits.exit_grace_ms`` to go, on the move's own clock (the grace counts as the move's wall
time, never past its deadline); one in the kernel's exit path never counts, whatever the load;
one still running its own code when the grace ends is charged. Under both hosts.

The entries: ``tests/fixtures/pousse/term_children`` forks searchers, SIGTERMs them, prints its
move and exits without waiting (a 1998 program charged in 4 of its 24 games under the
launcher's old fixed 20 ms); ``pousse/exit_searchers`` (C, like entry 5 of 1998) has searchers
that write their answer and call exit() without the parent waiting; ``pousse/hup_child`` leaves
a helper that raises a blocked SIGHUP to look on its way out and thinks on.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.domain.match_values import Limits, VerdictKind
from workers.sandbox.base import EntryHost, HostFactory
from workers.sandbox.plain import PlainHostFactory

from .conftest import FIXTURES, recording

TERM_CHILDREN = FIXTURES / "pousse" / "term_children"
EXIT_SEARCHERS = FIXTURES / "pousse" / "exit_searchers"
HUP_CHILD = FIXTURES / "pousse" / "hup_child"
#: a generous wall limit: Python startup on a loaded machine is slow, and no move here may time out
LIMITS = Limits(move_wall_s=20.0)


@pytest.fixture(params=["bwrap", "none"])
def hosts(request: pytest.FixtureRequest) -> Iterator[HostFactory]:
    if request.param == "none":
        yield PlainHostFactory()
        return
    with recording(request.getfixturevalue("bwrap_factory")) as rec:
        yield rec


@pytest.fixture
def host(hosts: HostFactory) -> Iterator[EntryHost]:
    with hosts.open(TERM_CHILDREN, LIMITS, "X") as h:
        yield h


def move(host: EntryHost, *args: str, grace_ms: int = 300) -> tuple[VerdictKind | None, str, float]:
    started = time.monotonic()
    out = host.run(["./runme", *args], b"6\n", Limits(move_wall_s=LIMITS.move_wall_s, exit_grace_ms=grace_ms))
    assert out.stdout == b"T1\n", out
    return out.failure, out.detail, time.monotonic() - started


def test_searchers_sigtermed_before_the_exit_are_never_charged(host: EntryHost) -> None:
    for _ in range(5):  # a rerun must not flip the verdict
        failure, detail, _ = move(host, "4")
        assert failure is None, detail


def test_a_searcher_that_dies_a_little_after_its_sigterm_is_not_charged(host: EntryHost) -> None:
    # SIGTERM stays pending (blocked) for 100 ms: far beyond the old 20 ms, well inside the grace
    for _ in range(3):
        failure, detail, _ = move(host, "2", "0.1", grace_ms=3000)
        assert failure is None, detail


def test_without_a_grace_the_same_searcher_is_charged(host: EntryHost) -> None:
    failure, detail, _ = move(host, "1", "5", grace_ms=0)
    assert failure is VerdictKind.LEFT_PROCESSES
    assert "did not kill all its processes" in detail


def test_a_searcher_that_outlives_the_grace_is_charged_when_it_ends(host: EntryHost) -> None:
    failure, _, took = move(host, "1", "30", grace_ms=300)
    assert failure is VerdictKind.LEFT_PROCESSES
    assert took < 10  # charged at the end of the grace, not when the searcher would have gone


def test_a_healthy_leftover_is_charged_when_the_grace_ends_on_the_moves_clock(hosts: HostFactory) -> None:
    limits = Limits(move_wall_s=20.0, exit_grace_ms=600)
    with hosts.open(TERM_CHILDREN, limits, "X") as host:
        out = host.run(["sh", "-c", "(sleep 33.5 &); echo T1"], b"6\n", limits)
    assert out.failure is VerdictKind.LEFT_PROCESSES
    assert out.wall_ms >= 600  # the grace it was given is the move's time


def test_a_leftover_running_past_the_deadline_makes_the_move_time_out(hosts: HostFactory) -> None:
    limits = Limits(move_wall_s=1.0, exit_grace_ms=5000)
    with hosts.open(TERM_CHILDREN, limits, "X") as host:
        started = time.monotonic()
        out = host.run(["sh", "-c", "(sleep 33.5 &); echo T1"], b"6\n", limits)
        took = time.monotonic() - started
    assert out.failure is VerdictKind.TIMEOUT
    assert took < 4.0  # the grace ends at the deadline


def test_a_helper_that_thinks_after_the_exit_pays_for_it_in_wall_time(hosts: HostFactory) -> None:
    """Issue 25 item 5 (a): a helper that blocks SIGHUP, raises it and computes 280 ms after
    the move's program exited gets its answer in only on the move's clock."""
    limits = Limits(move_wall_s=20.0, exit_grace_ms=5000)
    with hosts.open(HUP_CHILD, limits, "X") as host:
        out = host.run(["./runme", "0.28"], b"6\n", limits)
        assert out.stdout == b"T1\n" and out.failure is None, out
        assert out.wall_ms >= 280  # its thinking was the move's time
        thought = host.run(["cat", "hup_answer"], b"", limits).stdout
        assert float(thought) >= 0.28


def test_a_helper_still_thinking_when_the_grace_ends_is_killed_before_it_answers(hosts: HostFactory) -> None:
    limits = Limits(move_wall_s=20.0, exit_grace_ms=100)
    with hosts.open(HUP_CHILD, limits, "X") as host:
        out = host.run(["./runme", "3"], b"6\n", limits)
        assert out.failure is VerdictKind.LEFT_PROCESSES
        assert out.wall_ms < 2500
        time.sleep(0.2)
        assert host.run(["ls"], b"", limits).stdout.split() == [b"entry.yaml", b"runme"]


@pytest.fixture
def exit_searchers(tmp_path: Path) -> Path:
    entry = tmp_path / "exit_searchers"
    shutil.copytree(EXIT_SEARCHERS, entry)
    subprocess.run(["cc", "-O2", "-o", "runme", "main.c"], cwd=entry, check=True)
    return entry


@pytest.fixture
def busy_core() -> Iterator[int]:
    """One CPU this test runs on, kept busy by a spinning process pinned to it (stopped by pid);
    everything the test starts meanwhile inherits the pinning."""
    before = os.sched_getaffinity(0)
    cpu = max(before)
    os.sched_setaffinity(0, {cpu})
    spinner = subprocess.Popen([sys.executable, "-c", "while True: pass"])
    try:
        time.sleep(0.2)  # let it get going
        yield cpu
    finally:
        spinner.kill()
        spinner.wait()
        os.sched_setaffinity(0, before)


@pytest.mark.integration
def test_searchers_inside_exit_are_never_charged_on_a_busy_core(
    hosts: HostFactory, exit_searchers: Path, busy_core: int
) -> None:
    """Issue 25 item 5 (b): searchers that wrote their answer and called exit() are on their way
    out when the parent exits; on one busy core they may not have run since, yet never count."""
    limits = Limits(move_wall_s=20.0)
    verdicts = []
    with hosts.open(exit_searchers, limits, "X") as host:
        for _ in range(30):
            out = host.run(["./runme"], b"6\n", limits)
            assert out.stdout == b"T1\n", out
            verdicts.append(out.failure)
    assert verdicts.count(VerdictKind.LEFT_PROCESSES) == 0, [v for v in verdicts if v]


def test_the_default_grace_is_hundreds_of_milliseconds() -> None:
    assert 100 <= Limits().exit_grace_ms <= 1000
