"""Fair timing through a real run (issue 14, item 5): ``timing.exclusive_cores`` caps the
local workers at the usable cores, every match holds a core of its own, and the
terminal, the report and the JSON standings state the timing conditions."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from runner.storage.store import RunStore
from tests.integration.helpers import tourney, write_config


def _exclusive(config: Path) -> Path:
    raw = json.loads(config.read_text())
    raw["timing"] = {"exclusive_cores": True}
    config.write_text(json.dumps(raw, indent=2))
    return config


def test_exclusive_cores_cap_the_workers_pin_every_match_and_are_reported(tmp_path: Path) -> None:
    cores = sorted(os.sched_getaffinity(0))
    config = _exclusive(write_config(tmp_path, "fair", entrants=3, games_per_pairing=2))
    asked = len(cores) + 2
    done = tourney("run", config, "--workers", str(asked), cwd=tmp_path, timeout=300)  # log lines too
    assert done.returncode == 0, done.stdout + done.stderr
    capped = (
        f"timing.exclusive_cores: the local worker plays {len(cores)} match(es) at once, "
        f"one per usable core, not {asked}"
    )
    assert capped in done.stdout
    assert "Timing: exclusive cores (one CPU per match, never shared)" in done.stdout
    assert "3 of 3 match(es) on a core of their own" in done.stdout

    run_dir = tmp_path / "runs" / "fair"
    with RunStore.open(run_dir) as store:
        meta = store.meta()
        results = [r.result for r in store.match_rows() if r.result is not None]
    assert meta["timing"]["exclusive_cores"] is True
    assert len(results) == 3 and len({r.worker for r in results}) <= len(cores)
    for r in results:
        assert r.timing is not None and r.timing.exclusive
        assert len(r.timing.cpus) == 1 and r.timing.cpus[0] in cores
        # one local worker process, playing one match per core at once
        assert (r.timing.worker_cores, r.timing.worker_concurrency) == (len(cores), len(cores))

    report = (run_dir / "report.html").read_text()
    assert 'id="timing">exclusive cores' in report and "on a core of their own" in report


def test_without_the_option_the_run_says_its_moves_shared_the_machine(tmp_path: Path) -> None:
    config = write_config(tmp_path, "shared", entrants=2, games_per_pairing=2)
    done = tourney("run", config, "--workers", "1", "--no-progress", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Timing: shared cores" in done.stdout and "0 of 1 match(es) on a core of their own" in done.stdout


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs a CPU to reserve and one to play on")
def test_reserved_cores_keep_the_runner_off_the_cores_matches_play_on(tmp_path: Path) -> None:
    cores = sorted(os.sched_getaffinity(0))
    config = write_config(tmp_path, "reserved", entrants=3, games_per_pairing=2)
    raw = json.loads(config.read_text())
    raw["timing"] = {"exclusive_cores": True, "reserved_cores": 1}
    config.write_text(json.dumps(raw))
    done = tourney("run", config, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    rest = ",".join(map(str, cores[1:]))
    assert f"timing: CPUs {cores[0]} for the runner, {rest} for matches" in done.stdout
    assert f"playing with 1 local worker ({len(cores) - 1} match(es) at once)" in done.stdout
    with RunStore.open(tmp_path / "runs" / "reserved") as store:
        results = [r.result for r in store.match_rows() if r.result is not None]
    assert len(results) == 3
    for r in results:
        assert r.timing is not None and r.timing.exclusive
        assert r.timing.cpus[0] in cores[1:] and r.timing.worker_cores == len(cores) - 1


def test_reserving_every_core_is_refused_before_anything_runs(tmp_path: Path) -> None:
    config = write_config(tmp_path, "greedy", entrants=2)
    raw = json.loads(config.read_text())
    raw["timing"] = {"exclusive_cores": True, "reserved_cores": len(os.sched_getaffinity(0))}
    config.write_text(json.dumps(raw))
    done = tourney("run", config, cwd=tmp_path, timeout=120)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "leaves none to play matches on" in done.stderr
    assert not (tmp_path / "runs" / "greedy").exists()
