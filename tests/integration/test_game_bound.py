"""A configured game bound through a real run (`tourney run --inline`, real pousse entries, the real
sandbox when there is one): games stop at `bound.max_moves`, are adjudicated by pousse's rule (a
winner: seed 003 has no draw), pass the coordinator's re-judging, and `tourney matches`, the summary
and the JSON say so. Also: the launcher's exit grace holds through a whole run (issue 14 items 9, 10)."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import tourney

ROOT = Path(__file__).resolve().parents[2]


def test_a_move_bound_stops_and_adjudicates_every_game(tmp_path: Path) -> None:
    config = {
        "name": "bounded",
        "game": "pousse",
        "sandbox": "bwrap" if bwrap_problem() is None else "none",
        "limits": {"move_wall_s": 10.0},
        "bound": {"max_moves": 4},
        "boards": {"six": {"text": "6"}},
        "entries": [
            {"path": str(ROOT / "entries" / "pousse" / "random"), "include": ["random-s1", "random-s2"]},
            {"path": str(ROOT / "tests" / "fixtures" / "pousse" / "term_children")},
        ],
        "stages": [{"name": "rr", "planner": "round_robin", "boards": ["six"]}],
    }
    path = tmp_path / "bounded.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    run_dir = tmp_path / "run"
    done = tourney("run", path, "--inline", "--no-progress", "--run-dir", run_dir, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "6 games stopped at their bound (move bound 6)" in done.stdout, done.stdout
    listed = tourney("matches", run_dir, cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    rows = [line for line in listed.stdout.splitlines()[1:] if line.strip()]
    both = "game 1 stopped at max_moves, game 2 stopped at max_moves"
    assert len(rows) == 3 and all(both in r for r in rows)
    assert "left_processes" not in listed.stdout  # term-children's SIGTERMed searchers are never charged
    as_json = json.loads(tourney("matches", run_dir, "--json", cwd=tmp_path).stdout)
    games = [g for m in as_json for g in m["result"]["games"]]
    assert len(games) == 6
    for g in games:
        assert g["stopped_by"] == "max_moves" and g["moves"] == 4
        assert g["winner"] is not None  # pousse: "Draws are impossible."
        assert g["reason"].startswith("move bound reached (4 moves); adjudicated: ")
