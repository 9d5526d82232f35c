"""One command on one machine: embedded Redis, local Celery workers, the real sandbox."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from runner.storage.store import RunStore
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import (
    assert_nothing_left,
    assert_one_official_result_per_match,
    standings,
    tourney,
    unique,
    write_config,
)


def test_embedded_run_matches_inline_and_leaves_nothing_behind(tmp_path: Path) -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bwrap sandbox unavailable: {problem}")
    tag = unique("local")
    config = write_config(tmp_path, "local", entrants=4, sandbox="bwrap", sleep=0.02, tag=tag, final_top=2)

    inline = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "inline", cwd=tmp_path
    )
    assert inline.returncode == 0, inline.stderr

    run_dir = tmp_path / "runs" / "local"
    # default run dir; a fresh interpreter, with a hash seed of its own (tests/forked_cli.py)
    done = tourney("run", config, "--workers", "2", "--no-progress", cwd=tmp_path, fork=False)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_nothing_left([str(run_dir), tag])  # the embedded Redis's command line names the run dir

    assert standings(run_dir) == standings(tmp_path / "inline")
    assert_one_official_result_per_match(run_dir)
    assert "p-" in done.stdout  # the final standings are printed
    with RunStore.open(run_dir) as store:
        meta = store.meta()
        workers = {r.worker for r in store.match_rows()}
    assert meta["sandbox"] == "bwrap" and meta["finished"]
    # one local worker process (two matches at once), and both its pool processes played
    # this machine's enrolled key (local@HOST), the first worker process
    assert len(workers) == 1 and "/local-1-" in next(iter(workers)), workers
    log = (run_dir / "logs" / "worker-1.log").read_text(errors="replace")
    players = set(re.findall(r"(ForkPoolWorker-\d+)\] played", log))
    assert players == {"ForkPoolWorker-1", "ForkPoolWorker-2"}, log[-3000:]
    assert (run_dir / "config.yaml").read_bytes() == config.read_bytes()
    assert (run_dir / "redis" / "appendonly.aof").exists() or (run_dir / "redis" / "appendonlydir").exists()
    assert list((run_dir / "artifacts").glob("*.tar.gz"))


def test_sandbox_none_is_announced_and_recorded(tmp_path: Path) -> None:
    config = write_config(tmp_path, "plain", entrants=3, games_per_pairing=2)
    done = tourney("run", config, "--inline", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "warning: sandbox: none: entries run " in done.stderr
    with RunStore.open(tmp_path / "runs" / "plain") as store:
        assert store.meta()["sandbox"] == "none"


def test_same_config_resumes_other_config_is_refused(tmp_path: Path) -> None:
    config = write_config(tmp_path, "guard", entrants=3)
    first = tourney("run", config, "--inline", "--no-progress", cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    again = tourney("run", config, "--inline", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert "is complete: nothing left to play" in again.stdout  # tests/integration/test_run_messages.py

    other = write_config(tmp_path / "other", "guard", entrants=4)
    refused = tourney("run", other, "--inline", cwd=tmp_path)
    assert refused.returncode == 2
    assert "holds a run of another config" in refused.stderr and "--run-dir" in refused.stderr
    # the keys that differ (4 entrants, not 3: the variants' count), and where the frozen copy is
    assert "entries[0].variants.count: 3 -> 4" in refused.stderr, refused.stderr
    assert f"frozen copy {tmp_path / 'runs' / 'guard' / 'config.yaml'}" in refused.stderr


def test_run_refuses_broker_without_password(tmp_path: Path) -> None:
    config = write_config(tmp_path, "nopw", entrants=2)
    done = tourney("run", config, "--broker", "redis://127.0.0.1:1/0", cwd=tmp_path)
    assert done.returncode == 2
    assert "password" in done.stderr
