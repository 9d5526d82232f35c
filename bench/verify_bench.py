"""What re-judging results costs the coordinator (runner.domain.verify, docs/scale-out.md).

Runs ``configs/potm94.yaml`` with local Celery workers in a temporary run
directory and prints the share of the coordinator process's CPU time spent
replaying transcripts through the referee (measured by the coordinator
itself, kept in the run's metadata as ``verification``), then replays the
same official results offline to give the cost per move against the
coordinator's CPU per move.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import time
from pathlib import Path

from runner.domain.verify import verify_result
from runner.storage.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "configs" / "potm94.yaml"


def main(quick: bool) -> None:
    with tempfile.TemporaryDirectory(prefix="tourney-verify-bench-") as tmp:
        run_dir = Path(tmp) / "potm94"
        done = subprocess.run(
            [sys.executable, "-m", "runner.cli", "run", str(CONFIG), "--workers", "2", "--no-progress",
             "--run-dir", str(run_dir)],
            cwd=ROOT, capture_output=True, text=True, timeout=900,
        )  # fmt: skip
        if done.returncode != 0:
            print(f"potm94 run failed ({done.returncode}): {done.stderr[-2000:]}")
            return
        with RunStore.open(run_dir) as store:
            meta = store.meta()
            rows = [r for r in store.match_rows() if r.result is not None and r.spec is not None]
            specs = store.specs()
        v = meta["verification"]
        moves = sum(len(g.moves) for r in rows if r.result for g in r.result.games)
        print(
            f"potm94: referee replay {v['cpu_s']:.3f}s of the coordinator's "
            f"{v['coordinator_cpu_s']:.3f}s CPU = {100 * v['share']:.1f}% "
            f"({len(rows)} matches, {moves} moves)"
        )
        repeats = 3 if quick else 20
        t0 = time.process_time()
        for _ in range(repeats):
            for r in rows:
                assert r.result is not None
                verify_result(specs[r.match_id], r.result)
        per_move = (time.process_time() - t0) / repeats / max(moves, 1)
        coordinator_per_move = v["coordinator_cpu_s"] / max(moves, 1)
        print(
            f"offline replay: {per_move * 1e6:.1f} us CPU per move = "
            f"{per_move / coordinator_per_move:.3f} x the coordinator's CPU per move"
        )
