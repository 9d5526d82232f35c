"""Process identity (runner.orchestration.procs), a worker's own policy (workers.policy), health."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from pathlib import Path

import pytest

from runner.domain.match_values import EntryRef, Limits, MatchSpec
from runner.orchestration import procs
from runner.orchestration.workers_health import WorkersHealth
from workers.policy import CeilingRefused, LimitCeiling, PolicyRefused, WorkerPolicy


def _sleeper() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])


def test_a_recorded_process_is_killed_only_if_it_is_still_the_same_one(tmp_path: Path) -> None:
    ours = _sleeper()
    try:
        pid_file = tmp_path / "x.pid"
        ident = procs.record(pid_file, ours.pid, "sleeper")
        assert ident is not None and ident.alive()
        # the pid now names a process started later (pid reuse): leave it alone
        stale = dataclasses.replace(ident, create_time=ident.create_time - 1000.0)
        procs.identity_path(pid_file).write_text(json.dumps(dataclasses.asdict(stale)))
        assert procs.kill_recorded(pid_file) is False
        assert ours.poll() is None
        assert not pid_file.exists() and not procs.identity_path(pid_file).exists()
        # a bare pid file (no identity) is never enough either
        pid_file.write_text(str(ours.pid))
        assert procs.kill_recorded(pid_file) is False
        assert ours.poll() is None
        # the very process recorded: killed
        procs.record(pid_file, ours.pid, "sleeper")
        assert procs.kill_recorded(pid_file) is True
        assert not ident.alive()  # (psutil reaped our child while waiting for it)
    finally:
        if ours.poll() is None:
            ours.kill()
        ours.wait()


def test_wait_unreaped_keeps_the_pid_until_we_reap_it() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    assert procs.wait_unreaped(child.pid, 30.0)
    assert child.returncode is None  # not reaped yet: its pid cannot be reused
    assert child.wait(5) == 0


def _spec(sandbox: str, limits: Limits) -> MatchSpec:
    ref = EntryRef("a", "0" * 64, "mnk", ["./a.out"])
    return MatchSpec.of("m", "mnk", "b", "3 3 3", [["a", "b"]], {"a": ref, "b": ref}, limits, 0, sandbox)


def test_a_task_cannot_turn_the_sandbox_off() -> None:
    strict = WorkerPolicy()
    with pytest.raises(PolicyRefused, match=r"w1 refuses sandbox 'none'.*--allow-unsandboxed"):
        strict.apply(_spec("none", Limits()), "w1")
    assert strict.apply(_spec("bwrap", Limits()), "w1").sandbox == "bwrap"
    assert strict.apply(_spec("anything-else", Limits()), "w1").sandbox == "bwrap"
    lenient = WorkerPolicy(allow_unsandboxed=True)
    assert lenient.apply(_spec("none", Limits()), "w1").sandbox == "none"
    broken = WorkerPolicy(allow_unsandboxed=True, sandbox_works=False)
    with pytest.raises(PolicyRefused, match="no working sandbox"):
        broken.apply(_spec("bwrap", Limits()), "w1")


def test_limits_above_a_ceiling_are_refused_never_rewritten() -> None:
    policy = WorkerPolicy(ceiling=LimitCeiling(move_wall_s=2.0, memory_mb=256, processes=8))
    for greedy, named in [
        (
            Limits(move_wall_s=3600.0),
            r"limits\.move_wall_s 3600 is above this worker's 2 \(--max-move-wall-s\)",
        ),
        (Limits(move_wall_s=1.0, memory_mb=1 << 20), r"limits\.memory_mb 1048576 .* \(--max-memory-mb\)"),
        (Limits(move_wall_s=1.0, memory_mb=64, processes=100000), r"limits\.processes"),
    ]:
        with pytest.raises(CeilingRefused, match=named):
            policy.apply(_spec("bwrap", greedy), "w")
    modest = Limits(move_wall_s=0.5, memory_mb=64, processes=4)
    assert policy.apply(_spec("bwrap", modest), "w").limits == modest
    assert WorkerPolicy.from_json(policy.to_json()) == policy


def test_a_failing_worker_is_quarantined_without_charging_matches() -> None:
    health = WorkersHealth(quarantine_after=3, uncharged_per_match=2)
    decisions = [health.failed("broken", f"m{i}", "sandbox failed") for i in range(3)]
    assert [d.charge_match for d in decisions] == [False, False, False]
    assert [d.quarantine_now for d in decisions] == [False, False, True]
    assert health.is_quarantined("broken")
    # a proven worker's failure counts against the match (it may be the match's fault)
    health.accepted("good")
    assert health.failed("good", "m9", "odd").charge_match
    # a match that breaks every machine still ends: uncharged retries are bounded per match
    assert not health.failed("new1", "mx", "x").charge_match
    health.requeued_uncharged("mx")
    # a failure whose requeue did not happen (the attempt was no longer in flight) uses nothing
    assert not health.failed("new2", "mx", "x").charge_match
    assert not health.failed("new2b", "mx", "x").charge_match
    health.requeued_uncharged("mx")
    assert health.failed("new3", "mx", "x").charge_match
    assert health.summary()["broken"]["quarantined"] is True


def test_one_entrys_artifact_counts_once_in_a_row_against_a_worker() -> None:
    """Issue 34 item 1: a worker whose disk fills whenever it builds one entry is not quarantined
    for it, however many of that entry's matches it fails; faults of other entries, or failures
    that name none, still add up."""
    health = WorkersHealth(quarantine_after=3)
    for i in range(6):
        assert not health.failed("w", f"m{i}", "ENOSPC building big", entry="big-digest").quarantine_now
    assert not health.is_quarantined("w")
    assert not health.failed("w", "n1", "ENOSPC building other", entry="other-digest").quarantine_now
    assert health.failed("w", "n2", "sandbox failed").quarantine_now  # the third distinct cause
    # a good result ends the streak: the same entry may count once again after it
    health.accepted("v")
    for i in range(4):
        health.failed("v", f"k{i}", "ENOSPC", entry="big-digest")
    health.accepted("v")
    assert not health.failed("v", "k9", "ENOSPC", entry="big-digest").quarantine_now
    assert not health.is_quarantined("v")
