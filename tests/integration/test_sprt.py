"""An SPRT stage through the real coordinator: real workers (Celery over the embedded Redis)
or inline, the real sandbox, real entry processes (m,n,k sample entries)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from runner.domain.stages.base import StageState, TournamentState
from runner.domain.stages.tournament import advance
from runner.storage.run_dir import load_run_config
from runner.storage.store import RunStore
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import ROOT, assert_nothing_left, assert_one_official_result_per_match, tourney

MAX_PAIRS = 200


def _config(directory: Path, name: str, stage: dict[str, Any]) -> Path:
    """greedy (wins now, else blocks) and random, each seeded per game ({seed})."""
    config = {
        "name": name,
        "seed": 3,
        "game": "mnk",
        "sandbox": "bwrap",
        "limits": {"move_wall_s": 5.0},
        "boards": {"b": {"text": "5 5 4"}},
        "entries": [
            {
                "path": str(ROOT / "entries" / "mnk" / "greedy"),
                "include": ["greedy"],
                "variants": {"count": 1, "prefix": "greedy", "args": ["--seed", "{seed}"]},
            },
            {
                "path": str(ROOT / "entries" / "mnk" / "random"),
                "include": ["random"],
                "variants": {"count": 1, "prefix": "random", "args": ["--seed", "{seed}"]},
            },
        ],
        "stages": [{"name": "test", "planner": "sprt", "boards": ["b"], "max_pairs": MAX_PAIRS, **stage}],
    }
    path = directory / f"{name}.yaml"
    path.write_text(json.dumps(config, indent=2))
    return path


def _stage(run_dir: Path) -> tuple[TournamentState, StageState]:
    config = load_run_config(run_dir)
    with RunStore.open(run_dir) as store:
        results = store.official_results()
    state = advance(config, results)
    assert state.finished
    return state, state.stages[0]


@pytest.fixture
def sandbox() -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bwrap sandbox unavailable: {problem}")


@pytest.mark.usefixtures("sandbox")
def test_sprt_accepts_h1_for_the_stronger_engine_on_real_workers(tmp_path: Path) -> None:
    config = _config(tmp_path, "sprt-h1", {"elo0": 0, "elo1": 50, "model": "normalized"})
    run_dir = tmp_path / "runs" / "sprt-h1"
    done = tourney("run", config, "--workers", "2", "--no-progress", cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_nothing_left([str(run_dir)])
    assert_one_official_result_per_match(run_dir)
    state, st = _stage(run_dir)
    assert st.notes[0].startswith(
        "SPRT (normalized Elo, elo0=0, elo1=50, alpha=0.05, beta=0.05): H1 accepted"
    )
    decided = int(st.notes[0].rsplit("after ", 1)[1].split()[0])
    assert decided < MAX_PAIRS
    # two slots: the pair in flight beside the deciding one is played and kept, nothing more
    assert len(state.matches) == decided + 1
    assert all(m.orders == (("greedy-1", "random-1"), ("random-1", "greedy-1")) for m in state.matches)
    rows = {r.entry: r for r in st.standings}
    assert rows["greedy-1"].games == 2 * len(state.matches)
    assert rows["greedy-1"].status == "engine: H1 accepted"
    assert sum(rows["greedy-1"].extra[c] for c in ("LL", "LD", "DD+WL", "WD", "WW")) == len(state.matches)
    # the terminal standings and the HTML report show the decision, the LLR and the pentanomial
    assert "H1 accepted, LLR +" in done.stdout and "pentanomial [LL, LD, DD+WL, WD, WW]" in done.stdout
    html = (run_dir / "report.html").read_text()
    assert "SPRT H1 accepted: LLR +" in html and '<th class="num">DD+WL</th>' in html


@pytest.mark.usefixtures("sandbox")
def test_sprt_accepts_h0_when_the_engine_is_the_weaker_inline(tmp_path: Path) -> None:
    stage = {"elo0": 0, "elo1": 50, "model": "logistic", "engine": "random-1", "baseline": "greedy-1"}
    config = _config(tmp_path, "sprt-h0", stage)
    # plain progress (stdout is a pipe), a line every 0.1 s: the live LLR is in them
    every = {"TOURNEY_PROGRESS_EVERY_S": "0.1"}
    done = tourney("run", config, "--inline", cwd=tmp_path, timeout=300, extra_env=every)
    assert done.returncode == 0, done.stdout + done.stderr
    assert re.search(
        r"stage test \d+/\d+ \| SPRT running: LLR [-+]\d\.\d\d in \[-2\.94, 2\.94\]", done.stdout
    )
    state, st = _stage(tmp_path / "runs" / "sprt-h0")
    assert "H0 accepted" in st.notes[0]
    decided = int(st.notes[0].rsplit("after ", 1)[1].split()[0])
    assert len(state.matches) == decided < MAX_PAIRS  # one slot: nothing in flight at the decision
    assert state.matches[0].orders[0] == ("random-1", "greedy-1")
