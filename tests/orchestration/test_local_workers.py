"""The local worker's restart budget and standby start, in isolation (no run, no broker)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from runner.orchestration import standby
from runner.orchestration.local_workers import RestartBudget, Restarted


def test_the_restart_budget_allows_a_few_restarts_per_window_then_refuses() -> None:
    budget = RestartBudget(restarts=3, window_s=60.0)
    assert [budget.allow(t) for t in (0.0, 1.0, 2.0)] == [True, True, True]
    assert not budget.allow(3.0)  # a fourth death within the minute: stop the run
    assert not budget.allow(59.9)
    assert budget.allow(60.0)  # the first restart has left the window


def test_a_restart_is_described_with_how_the_worker_ended() -> None:
    killed = Restarted("local-1-7@h", -9, "local-2-7@h").describe()
    assert killed == "local worker local-1-7@h exited (killed by SIGKILL); started local-2-7@h"
    assert "(exit code 2)" in Restarted("local-1-7@h", 2, "local-2-7@h").describe()


@pytest.mark.parametrize(
    ("argv", "wanted"),
    [
        (["run", "c.yaml"], True),
        (["run", "c.yaml", "--workers", "2", "--broker", "redis://:p@h:1/0"], True),
        (["run", "c.yaml", "--inline"], False),
        (["run", "--inl", "c.yaml"], False),  # argparse takes unambiguous prefixes
        (["run", "c.yaml", "--broker-file", "f", "--no-local-workers"], False),
        (["run", "-h"], False),
        (["validate", "c.yaml"], False),
        (["worker", "--concurrency", "2"], False),
        ([], False),
    ],
)
def test_only_a_run_that_will_start_local_workers_wants_a_standby(argv: list[str], wanted: bool) -> None:
    assert standby.wanted(argv) is wanted


def test_the_standbys_command_line_never_shows_the_broker_url() -> None:
    shown = standby._shown(["run", "c.yaml", "--broker", "redis://:secret@h:1/0", "--broker=redis://:s2@h"])
    assert shown == ["run", "c.yaml", "--broker", "***", "--broker=***"]


def test_a_standby_told_nothing_exits_silently() -> None:
    """EOF on its stdin (the run failed before its workers): exit 0, no output, after its imports."""
    import os

    proc = subprocess.Popen(
        [sys.executable, "-m", "runner.cli", "worker", "--standby", str(os.getpid()), "run", "x.yaml"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = proc.communicate(b"", timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert (proc.returncode, out, err) == (0, b"", b"")


def test_a_standby_whose_parent_is_not_the_one_named_exits_without_waiting_for_its_order() -> None:
    """It checks its parent after asking for PDEATHSIG: a coordinator already gone is noticed
    (here stdin stays open: a standby that waited for its line would never end)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "runner.cli", "worker", "--standby", "1", "run", "x.yaml"],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdin is not None
        proc.stdin.close()
