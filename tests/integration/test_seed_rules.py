"""Seed rules through real runs (`tourney run --inline`, real entries, the real sandbox when there
is one): a tie that survives seed 002's N! games is a shared place, reported with its rule; the
final ranking is titled by the contest's rule, ratings beside it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import tourney

ROOT = Path(__file__).resolve().parents[2]


def test_identical_programs_share_first_place_after_the_permutations(tmp_path: Path) -> None:
    # three copies of one deterministic program: every game is decided by the seat alone, so
    # neither the all-play-all nor all 3! orders can separate them: "award duplicate prizes"
    config = {
        "name": "triplets",
        "seed": 3,
        "game": "boxing",
        "sandbox": "bwrap" if bwrap_problem() is None else "none",
        "game_params": {"max_box": 16},
        "limits": {"move_wall_s": 2.0},
        "boards": {"X": {"generate": {"width": 12, "height": 6, "blocked": 6}}},
        "entries": [
            {
                "path": str(ROOT / "entries" / "boxing" / "greedy"),
                "include": ["greedy"],
                "variants": {"prefix": "copy", "count": 3, "args": []},
            }
        ],
        "stages": [
            {"name": "all-play-all", "planner": "round_robin", "boards": ["X"], "rank_by": ["wins", "score"]},
            {
                "name": "permutations",
                "planner": "permutations",
                "when": "tied_for_first",
                "boards": ["X"],
                "rank_by": ["wins", "score"],
            },
        ],
    }
    path = tmp_path / "triplets.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    run_dir = tmp_path / "run"
    done = tourney("run", path, "--inline", "--no-progress", "--run-dir", run_dir, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    rule = (
        "the contest's rule: stage all-play-all by wins, score; "
        "a tie for first then goes to stage permutations by wins, score"
    )
    assert rule in out
    assert "=1 shared by copy-1, copy-2, copy-3: tied on wins, score in stage permutations" in out, out
    assert "rating: Elo" in out or "rating: openskill" in out

    shown = tourney("standings", run_dir, "--json", cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    perm = next(s for s in doc["stages"] if s["name"] == "permutations")
    assert perm["status"] == "done" and "all 3! = 6 seat orders of 3 entrants" in perm["notes"]
    assert [p["label"] for p in doc["final_places"]] == ["=1", "=1", "=1"]
    assert all(p["stage"] == "permutations" and p["tie_rule"] for p in doc["final_places"])

    csv_path = tmp_path / "standings.csv"
    assert tourney("standings", run_dir, "--csv", csv_path, cwd=tmp_path).returncode == 0
    rows = csv_path.read_text().splitlines()
    assert "final_place" in rows[0] and all(",=1," in r for r in rows[1:]), rows
