"""``tourney run`` builds its entries into its local workers' caches while they start
(``runner.orchestration.prebuild``): real Redis, a real Celery worker, real builds in the
real sandbox. The worker's first match finds its entries built and builds nothing (its log
names every build it makes); the results are those of a run whose worker built them.
"""

from __future__ import annotations

import re
import shutil
import signal
from pathlib import Path
from typing import Any

import pytest

from runner.storage.store import RunStore
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import (
    SCAN,
    assert_nothing_left,
    assert_one_official_result_per_match,
    standings,
    start_tourney,
    tourney,
    unique,
    wait_for,
    write_config,
)
from workers.artifacts import PREBUILT_MARKER

#: a build in a worker's log (``workers.artifacts``: "built NAME (DIGEST) in 0.2s: ok")
WORKER_BUILD = re.compile(r"\] built \S+ \([0-9a-f]+\) in ")
COORDINATOR_BUILD = re.compile(r"tourney\.artifacts: built \S+ \([0-9a-f]+\) ahead of the workers in ")
NO_PREBUILD = {"TOURNEY_PREBUILD": "0"}


def _logs(run_dir: Path) -> tuple[str, str]:
    """The coordinator's log and its workers' logs, together."""
    logs = run_dir / "logs"
    workers = "".join(p.read_text(errors="replace") for p in sorted(logs.glob("worker-*.log")))
    return (logs / "coordinator.log").read_text(), workers


def _cgroups_of(pid: int) -> list[Path]:
    """Sandbox cgroups a process made that are still there (``workers.sandbox.cgroups``)."""
    from workers.sandbox.cgroups import PREFIX, shared_cgroups

    made = shared_cgroups()  # this test runs in the same cgroups as the coordinator it started
    parents = [made._v2_parent] if made._v2_parent is not None else list(made._v1_parents.values())
    return [d for parent in parents for d in parent.glob(f"{PREFIX}{pid}-*")]


def _games(run_dir: Path) -> list[tuple[str, int, str, str, str, str, str, list[Any]]]:
    """Every game's end and transcript: match, game, winner, reason, verdict (kind, player,
    detail with the run directory's path taken out) and moves."""
    with RunStore.open(run_dir) as store:
        rows = sorted(store.match_rows(), key=lambda r: r.match_id)
    out = []
    for r in rows:
        assert r.result is not None
        for k, g in enumerate(r.result.games):
            v = g.verdict
            detail = v.detail.replace(str(run_dir), "RUN")
            moves = [(m.player, m.move) for m in g.moves]
            out.append((r.match_id, k, str(g.winner), g.reason, v.kind.value, str(v.player), detail, moves))
    return out


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_the_local_worker_finds_its_entries_built(tmp_path: Path, sandbox: str) -> None:
    if sandbox == "bwrap" and (problem := bwrap_problem()) is not None:
        pytest.skip(f"bwrap sandbox unavailable: {problem}")
    tag = unique("prebuild")
    config = write_config(tmp_path, "pre", entrants=3, sandbox=sandbox, tag=tag)
    inline = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "inline", cwd=tmp_path
    )
    assert inline.returncode == 0, inline.stderr

    run_dir = tmp_path / "runs" / "pre"
    out = tmp_path / "run.out"
    coordinator_proc = start_tourney("run", config, "--workers", "1", "--no-progress", cwd=tmp_path, log=out)
    assert coordinator_proc.wait(180) == 0, out.read_text()
    assert_nothing_left([str(run_dir), tag])
    # the coordinator's build sandboxes took their cgroups with them (named after its pid)
    assert not _cgroups_of(coordinator_proc.pid)

    coordinator, worker = _logs(run_dir)
    assert len(COORDINATOR_BUILD.findall(coordinator)) == 1, coordinator  # three variants, one build
    assert "built ahead of the workers: 1 build(s), 0 left to them, in " in coordinator
    assert "received" in worker and not WORKER_BUILD.search(worker), worker  # it played, built nothing
    (built,) = (run_dir / "workers").glob(f"*/artifacts/*/{PREBUILT_MARKER}")
    assert (built.parent / "ready").exists() and (built.parent / "entry" / "scan").exists()
    assert not list((run_dir / "workers").glob("*/artifacts/.*"))  # no half-made build left
    assert standings(run_dir) == standings(tmp_path / "inline")
    assert_one_official_result_per_match(run_dir)


BROKEN = """\
name: broken
game: mnk
protocol: mnk
build: "echo 'start of the log'; echo 'x.c:2:1: error: no such thing' >&2; exit 2"
run: [./a.out]
"""


def test_a_failed_build_made_ahead_ends_the_games_as_the_workers_own(tmp_path: Path) -> None:
    """Same verdicts, standings and build log as a run whose worker built everything itself."""
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "entry.yaml").write_text(BROKEN)
    config = write_config(tmp_path, "fails", entrants=2, sandbox="none", entry=SCAN)
    text = config.read_text().replace('"entries": [', f'"entries": [{{"path": "{broken}"}}, ', 1)
    config.write_text(text)

    runs: dict[str, Path] = {}
    for name, extra in (("ahead", {}), ("own", NO_PREBUILD)):
        runs[name] = tmp_path / name
        done = tourney(
            "run",
            config,
            "--workers",
            "1",
            "--no-progress",
            "--run-dir",
            runs[name],
            cwd=tmp_path,
            extra_env=extra,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        assert_nothing_left([str(runs[name])])

    ahead_coordinator, ahead_worker = _logs(runs["ahead"])
    own_coordinator, own_worker = _logs(runs["own"])
    assert len(COORDINATOR_BUILD.findall(ahead_coordinator)) == 2 and not WORKER_BUILD.search(ahead_worker)
    assert len(WORKER_BUILD.findall(own_worker)) == 2 and not COORDINATOR_BUILD.search(own_coordinator)

    assert standings(runs["ahead"]) == standings(runs["own"])
    games = _games(runs["ahead"])
    assert games == _games(runs["own"])
    failed = [g for g in games if g[4] == "build_failed"]
    assert failed and all(g[5] == "broken" and "x.c:2:1: error: no such thing" in g[6] for g in failed)

    def build_log(run_dir: Path) -> str:
        shown = tourney("build-log", run_dir, "broken", cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        text = shown.stdout.replace(str(run_dir), "RUN")
        return re.sub(r"\d+\.\d s\]", "T s]", text)  # the build's own duration

    logged = build_log(runs["ahead"])
    assert "x.c:2:1: error: no such thing" in logged and logged == build_log(runs["own"])


def test_a_run_stopped_during_the_build_leaves_nothing_and_resumes(tmp_path: Path) -> None:
    """SIGTERM while the coordinator builds ahead: the build ends whole before the run stops
    (no sandbox, process, cgroup or half-made cache entry left), and the run resumes."""
    sandbox = "bwrap" if bwrap_problem() is None else "none"
    slow = tmp_path / "slow"
    shutil.copytree(SCAN, slow)
    yaml = (slow / "entry.yaml").read_text()
    (slow / "entry.yaml").write_text(yaml.replace("build: cc", "build: sleep 1.5; cc"))
    tag = unique("prebuild-stop")
    config = write_config(tmp_path, "stopped", entrants=3, sandbox=sandbox, tag=tag, entry=slow)
    run_dir = tmp_path / "runs" / "stopped"
    cache = run_dir / "workers" / "1" / "artifacts"

    out = tmp_path / "run.out"
    proc = start_tourney("run", config, "--workers", "1", "--no-progress", cwd=tmp_path, log=out)
    try:
        wait_for(lambda: any(p.is_dir() for p in cache.glob(".*")), 60, "the build ahead of the worker")
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(60) == 143, out.read_text()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert_nothing_left([str(run_dir), tag])
    assert not _cgroups_of(proc.pid)
    coordinator, _ = _logs(run_dir)
    assert COORDINATOR_BUILD.search(coordinator), coordinator  # it finished the build it had begun
    assert not [p for p in cache.iterdir() if p.name.startswith(".")]  # no half-made build
    (entry,) = [p for p in cache.iterdir() if p.is_dir()]
    assert (entry / "ready").exists() and (entry / PREBUILT_MARKER).exists()

    again = tourney("run", config, "--workers", "1", "--no-progress", cwd=tmp_path)
    assert again.returncode == 0, again.stdout + again.stderr
    assert_nothing_left([str(run_dir), tag])
    _, worker = _logs(run_dir)
    assert not WORKER_BUILD.search(worker), worker  # it took the build made before the stop
    assert_one_official_result_per_match(run_dir)
    with RunStore.open(run_dir) as store:
        # this machine's key (local@HOST), its local worker processes (local-N-PID@HOST)
        assert {r.worker.split("/")[1].split("-")[0] for r in store.match_rows()} == {"local"}
