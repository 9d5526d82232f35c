"""Build checks (docs/engines.md, "Build checks"): an engine entry that declares ``bench: NODES``
has its real ``bench`` run by the worker in the sandbox after the build; a count that disagrees
refuses the build in one line naming both counts (OpenBench's "bad bench") and the engine plays
no move; the right count plays."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from runner.domain.bench import bench_nodes
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import assert_nothing_left, tourney

STOCKFISH = Path("/usr/games/stockfish")

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}"),
    pytest.mark.skipif(
        not STOCKFISH.is_file(), reason="stockfish is not installed (apt-get install stockfish)"
    ),
]


def entry(root: Path, name: str, bench: int | None) -> None:
    d = root / name
    d.mkdir()
    doc: dict[str, object] = {
        "name": name,
        "game": "chess",
        "protocol": "uci",
        "command": str(STOCKFISH),
        "options": {"Hash": 16},
    }
    if bench is not None:
        doc["bench"] = bench
    (d / "entry.yaml").write_text(yaml.safe_dump(doc))


def test_a_wrong_bench_is_refused_naming_both_counts_and_the_right_one_plays(tmp_path: Path) -> None:
    # the count this machine's stockfish prints (stderr: "Nodes searched  : N"), outside the sandbox
    ran = subprocess.run([STOCKFISH, "bench"], capture_output=True, text=True, timeout=300, check=True)
    nodes = bench_nodes(ran.stdout + ran.stderr)
    assert nodes is not None and nodes > 100_000, ran.stderr[-500:]
    entry(tmp_path, "right", nodes)
    entry(tmp_path, "wrong", nodes + 1)
    entry(tmp_path, "plain", None)
    config = {
        "name": "bench",
        "game": "chess",
        "each": {"nodes": 300},
        "limits": {"move_wall_s": 30},
        "entries": [{"path": "right"}, {"path": "wrong"}, {"path": "plain"}],
        "stages": [{"name": "league", "planner": "round_robin", "games_per_pairing": 2}],
    }
    (tmp_path / "t.yaml").write_text(yaml.safe_dump(config))
    done = tourney("run", "t.yaml", "--workers", "2", "--no-progress", cwd=tmp_path, timeout=900)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    run_dir = tmp_path / "runs" / "bench"
    assert_nothing_left([str(run_dir)])
    listed = tourney("matches", run_dir, "--json", cwd=tmp_path)
    games = [(m["players"], g) for m in json.loads(listed.stdout) for g in m["result"]["games"]]
    assert len(games) == 6
    for players, game in games:
        if "wrong" in players:
            assert game["verdict"]["kind"] == "build_failed"
            assert game["verdict"]["player"] == "wrong"
            assert game["verdict"]["detail"].startswith(f"bad bench: expected {nodes + 1}, got {nodes}")
            assert game["moves"] == 0  # never played
        else:
            assert game["verdict"]["kind"] == "normal", game["verdict"]
            assert game["moves"] > 10
