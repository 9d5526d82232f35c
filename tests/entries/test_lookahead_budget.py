"""TRYST'98 (seed 004): the look-ahead plays a fixed foresight; its clock is a safety net
derived from the contest's own move limit, so configs/tryst98.yaml and the code cannot disagree."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from runner.config import load_config
from runner.domain.placeholders import fill
from tests.entries.harness import build_copy

ROOT = Path(__file__).resolve().parents[2]


def test_tryst98_move_limit_sets_the_lookahead_budget(tmp_path: Path) -> None:
    config = load_config(ROOT / "configs" / "tryst98.yaml")
    spec = config.entry_specs()["lookahead"]
    limit = config.limits_obj.move_wall_s
    argv = fill([*spec.run, *spec.args], mark="X", move_time=limit, seed=1)
    assert argv[argv.index("--move-time-ms") + 1] == str(round(limit * 1000))
    built = build_copy(spec.path, tmp_path)
    # foresight 4 on 20x20 cannot finish in time: the safety net fires at 80% of the config's limit
    done = subprocess.run(
        [*argv, "--foresight", "4"], cwd=built, input=b"20 20 5\n10 10\n11 11\n", capture_output=True, timeout=30
    )
    assert done.returncode == 0 and re.fullmatch(rb"\d+ \d+\n", done.stdout)
    budget_ms = round(0.8 * limit * 1000)
    assert re.search(
        rf"lookahead: the {budget_ms} ms time budget cut the search: played foresight [0-3] of 4",
        done.stderr.decode(),
    ), done.stderr
    # the C default (used when no limit is given) is the same value for tryst98's 1 s
    source = (spec.path / "main.c").read_text()
    assert "#define BUDGET_SHARE 0.8" in source and f"budget_s = {0.8 * limit:g};" in source
