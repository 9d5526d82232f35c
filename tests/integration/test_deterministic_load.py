"""The same contest gives the same games on a busy machine (issue 38, item 1).

The TRYST'98 look-ahead (seed 004) bounds its search by work, not time (entries/mnk/lookahead,
docs/config.md "Seed 004"), and configs/tryst98.yaml's limits stay far above what that work
costs: so a run with every core of the machine kept busy by CPU burners gives the same
transcripts, move for move, as another such run. With the former 800 ms clock the look-ahead
played foresight 2 instead of 3 under load, and the champion changed.

The run is a reduced copy of configs/tryst98.yaml (its entries, boards, limits and stages,
fewer entrants and one playoff match on the 9x9 board, where the search is deepest), played
by real local workers in the real sandbox.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml

from runner.report.loader import load_report_data
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import ROOT, tourney

TRYST = ROOT / "configs" / "tryst98.yaml"


def reduced_tryst(directory: Path) -> Path:
    """configs/tryst98.yaml with three entrants, its 3x3 group and a 9x9 final of the top two."""
    config = yaml.safe_load(TRYST.read_text())
    config["name"] = "tryst98-load"
    config["entries"] = [
        {"path": str(ROOT / "entries" / "mnk" / "lookahead"), "include": ["lookahead", "lookahead-f2"]},
        {"path": str(ROOT / "entries" / "mnk" / "greedy"), "include": ["greedy"]},
    ]
    groups, playoff = config["stages"]
    groups["boards"] = ["classic"]
    groups["advance"] = {"top": 2}
    playoff["boards"] = ["nine"]
    config["stages"] = [groups, playoff]
    path = directory / "tryst98-load.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


@contextmanager
def cpu_burners() -> Iterator[list[subprocess.Popen[bytes]]]:
    """One busy loop per CPU this process may use, stopped (by pid) when the block ends."""
    burners: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(len(os.sched_getaffinity(0))):
            burners.append(subprocess.Popen([sys.executable, "-c", "while True: pass"]))
        yield burners
    finally:
        for p in burners:
            p.kill()
        for p in burners:
            p.wait(timeout=30)


def transcripts(run_dir: Path) -> list[dict[str, Any]]:
    """Every game as the rules saw it, from the run's store: who moved what, how it ended, what
    the entries wrote on stderr (a budget cut says so there); not how long moves took."""
    games = []
    for m, k, g in load_report_data(run_dir).games():
        games.append(
            {
                "match_id": m.match_id,
                "game": k,
                "board_id": m.board_id,
                "order": g.order,
                "winner": g.winner,
                "scores": g.scores,
                "verdict": (g.verdict.kind.value, g.verdict.player, g.verdict.detail),
                "moves": [(mv.player, mv.move) for mv in g.moves],
                "stderr": g.stderr,
            }
        )
    return sorted(games, key=lambda g: (g["match_id"], g["game"]))


def test_tryst98_gives_the_same_games_with_every_core_busy(tmp_path: Path) -> None:
    why = bwrap_problem()
    if why:
        pytest.skip(f"the real sandbox cannot run here: {why}")
    config = reduced_tryst(tmp_path)
    runs = [tmp_path / "runs" / "a", tmp_path / "runs" / "b"]
    with cpu_burners() as burners:
        for run_dir in runs:
            # the second in a fresh interpreter (a hash seed of its own), the first forked
            # (tests/forked_cli.py): nothing may depend on the order of a set
            fork = run_dir == runs[0]
            done = tourney("run", config, "--run-dir", run_dir, cwd=tmp_path, timeout=900, fork=fork)
            assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
        assert all(p.poll() is None for p in burners)  # the machine was busy throughout
    first, second = (transcripts(r) for r in runs)
    assert len(first) == 3 * 2 + 2  # the groups' 3 pairings twice, then the final's game pair
    assert first == second
    # the look-ahead searched to its foresight in every move (no budget cut, no clock verdict)
    assert all(g["verdict"][0] == "normal" for g in first)
    notes = [line for g in first for lines in g["stderr"].values() for line in lines]
    assert not any("cut the search" in line for line in notes), notes  # the 800 ms clock cut it here
    a, b = (json.loads((r / "standings.json").read_text()) for r in runs)
    assert a["finished"] and (a["final_ranking"], a["stages"]) == (b["final_ranking"], b["stages"])
    nine = [g for g in first if g["board_id"] == "nine"]
    assert nine and all(len(g["moves"]) >= 9 for g in nine)  # real 9x9 games, not a forfeit
