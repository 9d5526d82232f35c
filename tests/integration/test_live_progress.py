"""Live progress through a real run (`tourney run` with a local Celery worker, real Redis, real
entries; and `--inline`): while matches run, the progress shows the entries being built and the
games in progress with their move counts, as the workers report them."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import tourney

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("mode", ["workers", "inline"])
def test_progress_shows_builds_and_move_counts_while_they_run(tmp_path: Path, mode: str) -> None:
    config = {
        "name": "live",
        "game": "pousse",
        "sandbox": "bwrap" if bwrap_problem() is None else "none",
        "limits": {"move_wall_s": 10.0},
        "bound": {"max_moves": 60},
        "boards": {"six": {"text": "6"}},
        "entries": [
            # two random players make games of dozens of moves (slow-build's T1 ends its own soon)
            {"path": str(ROOT / "entries" / "pousse" / "random"), "include": ["random-s1", "random-s2"]},
            {"path": str(ROOT / "tests" / "fixtures" / "pousse" / "slow_build")},
        ],
        "stages": [{"name": "rr", "planner": "round_robin", "boards": ["six"]}],
    }
    path = tmp_path / "live.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    fast = {"TOURNEY_PROGRESS_EVERY_S": "0.2", "TOURNEY_HEARTBEAT_S": "0.5"}
    how = ["--workers", "1"] if mode == "workers" else ["--inline"]
    run: list[str | Path] = ["run", path, *how, "--run-dir", tmp_path / "run"]
    done = tourney(*run, cwd=tmp_path, timeout=300, extra_env=fast)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if "in progress:" in line]
    if mode == "workers":  # inline, the coordinator redraws from the moves; a build has none
        assert any(re.search(r"slow-build.*: building slow-build", line) for line in lines), done.stdout
    moves = [int(n) for line in lines for n in re.findall(r"game \d/2, move (\d+)", line)]
    assert moves and max(moves) > 0, done.stdout
