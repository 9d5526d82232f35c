"""``left_processes`` must not depend on machine load (issue 14 item 9): descendants that
a program SIGTERMed before exiting get ``Limits.exit_grace_ms`` to go, under both hosts;
a descendant alive and not told to go is charged at once, without waiting for the grace.

The entry is ``tests/fixtures/pousse/term_children``: it forks searchers, SIGTERMs them,
prints its move and exits without waiting (a 1998 program charged in 4 of its 24 games
under the launcher's old fixed 20 ms).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import pytest

from runner.domain.contracts import Limits, VerdictKind
from workers.sandbox.base import EntryHost, HostFactory
from workers.sandbox.plain import PlainHostFactory

from .conftest import FIXTURES, Recorder, survivors_after

TERM_CHILDREN = FIXTURES / "pousse" / "term_children"
#: a generous wall limit: Python startup on a loaded machine is slow, and no move here may time out
LIMITS = Limits(move_wall_s=20.0)


@pytest.fixture(params=["bwrap", "none"])
def hosts(request: pytest.FixtureRequest) -> Iterator[HostFactory]:
    if request.param == "none":
        yield PlainHostFactory()
        return
    rec = Recorder(request.getfixturevalue("bwrap_factory"))
    yield rec
    assert survivors_after(rec) == []


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


def test_a_healthy_leftover_is_charged_without_waiting_for_the_grace(hosts: HostFactory) -> None:
    limits = Limits(move_wall_s=20.0, exit_grace_ms=8000)
    with hosts.open(TERM_CHILDREN, limits, "X") as host:
        started = time.monotonic()
        out = host.run(["sh", "-c", "(sleep 33.5 &); echo T1"], b"6\n", limits)
        took = time.monotonic() - started
    assert out.failure is VerdictKind.LEFT_PROCESSES
    assert took < 4.0  # not the 8 s grace: nothing was on its way out


def test_the_default_grace_is_hundreds_of_milliseconds() -> None:
    assert 100 <= Limits().exit_grace_ms <= 1000
