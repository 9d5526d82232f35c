"""SPSA tuning of a real option with a known direction (docs/engines.md, "SPSA"): Debian's
stockfish tunes its own `Skill Level` from 5 through `tourney run` (the embedded Redis, real
Celery workers, the sandbox), and a higher skill plays better, so θ must rise.

The budget is small on purpose: 1,000 nodes a move (where one skill level is worth about
40-55 Elo here: 8 against 2 scored 14/16, 7 against 3 11.5/16), 32 game pairs in batches of
8, c_end 3 and r_end 0.06. The simulation of the same gains with 25 Elo a level (half what
was measured) ended above 6 in 60 of 60 seeds, median 10.9.

A second run is killed (SIGKILL, the coordinator and what it started) once a batch is in
and the next in flight, and resumed by the same command: the θ it had reached is the θ it
goes on from, and no pair already played is played again.
"""

from __future__ import annotations

import json
import shutil
import signal
from pathlib import Path
from typing import Any

import psutil
import pytest
import yaml

from runner.domain.spsa import TuningPath
from runner.domain.stages.base import TournamentState
from runner.domain.stages.tournament import advance
from runner.storage.run_dir import load_run_config
from runner.storage.store import RunStore
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import (
    ROOT,
    assert_nothing_left,
    assert_one_official_result_per_match,
    kill_all,
    start_tourney,
    store_rows,
    tourney,
    wait_for,
)

pytestmark = [
    pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}"),
    pytest.mark.skipif(
        shutil.which("stockfish", path="/usr/games") is None,
        reason="stockfish is not installed (apt-get install stockfish)",
    ),
]


def _config(directory: Path, name: str, pairs: int, batch: int) -> Path:
    """configs/spsa-skill.yaml with this test's budget."""
    config: dict[str, Any] = yaml.safe_load((ROOT / "configs" / "spsa-skill.yaml").read_text())
    config["name"] = name
    config["openings"]["file"] = str(ROOT / "configs" / "openings.epd")
    config["entries"] = [{"path": str(ROOT / "entries" / "chess" / "stockfish")}]
    stage = config["stages"][0]
    stage.update(pairs=pairs, batch=batch)
    assert stage["params"] == [
        {"name": "Skill Level", "start": 5, "min": 0, "max": 20, "c_end": 3, "r_end": 0.06}
    ]
    path = directory / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def _state(run_dir: Path) -> tuple[TournamentState, dict[str, Any]]:
    config = load_run_config(run_dir)
    with RunStore.open(run_dir) as store:
        results = store.official_results()
    return advance(config, results), results


def _tuning(state: TournamentState) -> TuningPath:
    tuning = state.stages[0].tuning
    assert tuning is not None
    return tuning


def _matches(run_dir: Path, cwd: Path) -> list[dict[str, Any]]:
    listed = tourney("matches", run_dir, "--json", cwd=cwd)
    assert listed.returncode == 0, listed.stderr
    return list(json.loads(listed.stdout))


def test_stockfish_skill_level_rises_from_5(tmp_path: Path) -> None:
    config = _config(tmp_path, "skill", pairs=32, batch=8)
    run_dir = tmp_path / "runs" / "skill"
    done = tourney("run", config, "--workers", "2", "--no-progress", cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_nothing_left([str(run_dir)])
    assert_one_official_result_per_match(run_dir)
    state, _ = _state(run_dir)
    assert state.finished and len(state.matches) == 32
    tuning = _tuning(state)
    assert tuning.pairs == (0, 8, 16, 24, 32)
    values = tuning.params[0].values
    assert values[0] == 5 and values[-1] > 6, values
    # the direction shows in the games themselves: the seat with the higher skill scored more
    higher = lower = 0.0
    for match in _matches(run_dir, tmp_path):
        skill = {o["player"]: o["value"] for o in match["seat_options"]}
        assert set(skill) == {"stockfish~plus", "stockfish~minus"} and all(
            0 <= v <= 20 for v in skill.values()
        )
        if skill["stockfish~plus"] == skill["stockfish~minus"]:
            continue
        better = max(skill, key=lambda p: skill[p])
        for game in match["result"]["games"]:
            assert game["verdict"]["kind"] == "normal", game
            points = 1.0 if game["winner"] == better else 0.5 if game["winner"] is None else 0.0
            higher, lower = higher + points, lower + 1 - points
    assert higher > lower, (higher, lower)
    # what the user sees: the tuned value in the standings and the notes, the path in the report
    tuned = f"{values[-1]:.2f}"
    assert f"tuned: Skill Level {tuned}" in done.stdout
    assert f"Skill Level: 5 -> {tuned} in [0, 20]" in done.stdout
    html = (run_dir / "report.html").read_text()
    assert "<h3>Tuned values</h3>" in html and f"<b>{tuned}</b>" in html
    assert html.count('<svg class="tuning"') == 1 and html.count("<circle ") == 5
    assert "engine options: stockfish~plus Skill Level=" in html


def test_a_killed_tuning_resumes_from_the_theta_it_had_reached(tmp_path: Path) -> None:
    config = _config(tmp_path, "resume", pairs=12, batch=4)
    run_dir = tmp_path / "runs" / "resume"
    log = tmp_path / "run.log"
    proc = start_tourney("run", config, "--workers", "2", "--no-progress", cwd=tmp_path, log=log)
    try:
        # the first batch in and the second being played: theta has moved once
        wait_for(
            lambda: (
                sum(r.state == "done" for r in store_rows(run_dir)) >= 5
                and any(r.state in ("queued", "running") for r in store_rows(run_dir))
            ),
            600,
            "a finished batch and a pair of the next in flight",
            every=0.2,
        )
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        helpers = [int((run_dir / "redis" / "redis.pid").read_text())]
        helpers += [int(p.read_text()) for p in (run_dir / "workers").glob("*/worker.pid")]
        wait_for(
            lambda: (
                not any(
                    psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE
                    for p in helpers
                )
            ),
            20,
            "the killed coordinator's Redis and workers to exit",
        )
        before, before_results = _state(run_dir)
        reached = _tuning(before)
        assert not before.finished and len(reached.pairs) >= 2 and reached.params[0].values[1] != 5
        played = {mid: [g.moves for g in games] for mid, games in before_results.items()}

        again = tourney("run", config, "--workers", "2", cwd=tmp_path, timeout=900)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "resuming" in again.stdout
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_all([str(run_dir)])
    assert_nothing_left([str(run_dir)])
    assert_one_official_result_per_match(run_dir)
    after, after_results = _state(run_dir)
    final = _tuning(after)
    assert after.finished and final.pairs == (0, 4, 8, 12)
    # the theta reached before the kill is where the resumed run went on from
    assert final.pairs[: len(reached.pairs)] == reached.pairs
    assert final.params[0].values[: len(reached.pairs)] == reached.params[0].values
    # every pair played before the kill kept its result (nothing replayed, nothing lost)
    for mid, moves in played.items():
        assert [g.moves for g in after_results[mid]] == moves
    assert {m.match_id for m in before.matches} <= {m.match_id for m in after.matches}
