"""``tourney run``'s one local worker: started early in standby, supervised, restarted a
bounded number of times (the kill-and-replay case is in ``test_faults.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from runner.storage.store import RunStore
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import (
    assert_nothing_left,
    standings,
    tourney,
    write_config,
)


def test_a_normal_runs_worker_is_the_standby_and_a_refused_resume_leaves_nothing(tmp_path: Path) -> None:
    config = write_config(tmp_path, "standby", entrants=3, games_per_pairing=2)
    run_dir = tmp_path / "runs" / "standby"
    done = tourney("run", config, "--workers", "2", "--no-progress", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    log = (run_dir / "logs" / "worker-1.log").read_text(errors="replace")
    assert "tourney worker: started in standby" in log, log[-2000:]
    # one process playing two matches at once, under the scheme's first name
    assert "local-1-" in log and "2 process(es)" in log, log[-2000:]
    assert not (run_dir / "logs" / "worker-2.log").exists()

    other = write_config(tmp_path / "other", "standby", entrants=4, games_per_pairing=2)
    refused = tourney("run", other, "--run-dir", run_dir, "--no-progress", cwd=tmp_path)
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert_nothing_left([str(tmp_path)])  # no standby waiting for a worker's command line


def test_a_broken_config_leaves_no_standby(tmp_path: Path) -> None:
    config = tmp_path / "broken.yaml"
    config.write_text("name: broken\ngame: mnk\nentries: [\n")
    done = tourney("run", config, "--no-progress", cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "standby" not in done.stdout + done.stderr
    assert_nothing_left([str(tmp_path)])


def test_a_local_worker_that_keeps_dying_stops_the_run_which_resumes_later(tmp_path: Path) -> None:
    """A worker that cannot start here (its CPU list is unusable) dies at once, every time:
    the coordinator restarts it a few times, then stops the run with a clear error (exit 3);
    the same command, with the machine fixed, finishes it."""
    config = write_config(tmp_path, "dying", entrants=3, games_per_pairing=2)
    run_dir = tmp_path / "runs" / "dying"
    broken = {"TOURNEY_WORKER_CPUS": "not-a-cpu-list"}
    done = tourney(
        "run", config, "--workers", "2", "--no-progress", cwd=tmp_path, extra_env=broken, timeout=120
    )
    assert done.returncode == 3, done.stdout + done.stderr
    assert "the local worker keeps dying" in done.stderr
    assert f"resume with: tourney run {config}" in done.stderr
    with RunStore.open(run_dir) as store:
        restarts = [e.detail for e in store.events("worker_restarted")]
    assert len(restarts) == 3, restarts  # the budget: three restarts within a minute, then stop
    assert (
        restarts[0].startswith("local worker local-1-") and "(exit code 2); started local-2-" in restarts[0]
    )
    assert "cannot pin this worker" in (run_dir / "logs" / "worker-4.log").read_text(errors="replace")
    assert_nothing_left([str(tmp_path)])

    again = tourney("run", config, "--workers", "2", "--no-progress", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    reference = write_config(tmp_path / "ref", "dying", entrants=3, games_per_pairing=2)
    ref = tourney(
        "run", reference, "--inline", "--no-progress", "--run-dir", tmp_path / "ref-run", cwd=tmp_path
    )
    assert ref.returncode == 0, ref.stderr
    assert standings(run_dir) == standings(tmp_path / "ref-run")
    assert json.dumps(standings(run_dir))  # something to compare: the run has its standings


def test_a_failing_health_check_stops_the_run_before_any_match(tmp_path: Path) -> None:
    """The local health check runs beside the run's set-up, but is joined before the first
    dispatch: a sandbox that cannot work here (its launcher cannot be built) is exit 3 with
    the sandbox's own line, no match played, nothing left running."""
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bwrap sandbox unavailable: {problem}")
    config = write_config(tmp_path, "unfit", entrants=3, sandbox="bwrap", games_per_pairing=2)
    broken = {"CC": "/bin/false", "TOURNEY_CACHE_DIR": str(tmp_path / "empty-cache")}
    done = tourney("run", config, "--workers", "2", "--no-progress", cwd=tmp_path, extra_env=broken)
    assert done.returncode == 3, done.stdout + done.stderr
    assert "cannot build the sandbox launcher" in done.stderr, done.stderr
    with RunStore.open(tmp_path / "runs" / "unfit") as store:
        rows = store.match_rows()
    assert not [r for r in rows if r.state != "pending" or r.attempt > 0], rows  # nothing dispatched
    assert_nothing_left([str(tmp_path)])
