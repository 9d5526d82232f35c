"""Paired end-to-end figure of one speed trick's switch (docs/benchmarks.md, "Speed tricks and
their switches"): ``tourney run``'s wall time on the e2e bench's small config with the trick on
(its variable unset) and off (set to ``0``), interleaved (on, off, then off, on, ...) after one
warm-up run, so that a machine whose speed drifts weighs on both sides alike.

    python -m bench.switch_pair TOURNEY_BEGIN_SCRIPT 8 [bwrap|none] [ENTRANTS]

Prints each pair and the median of wall(off) / wall(on): a trick is kept only if that is at
least 1.03 (issue 27's bar).
"""

from __future__ import annotations

import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

from bench.e2e_bench import BOARD, tourney_run
from bench.throughput_bench import greedy_mnk_config


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print(__doc__.strip().splitlines()[4].strip(), file=sys.stderr)
        return 2
    variable, pairs = argv[0], int(argv[1])
    sandbox = argv[2] if len(argv) > 2 else "none"
    entrants = int(argv[3]) if len(argv) > 3 else 12
    workers = os.cpu_count() or 1
    tmp = Path(tempfile.mkdtemp(prefix="tourney-switch-pair-"))
    try:
        config = greedy_mnk_config(
            tmp, name="pair", seed=13, board=BOARD, entrants=entrants, games=4, sandbox=sandbox
        )
        print(f"{variable}: {pairs} pairs, sandbox {sandbox}, {entrants} entrants, load {os.getloadavg()}")
        tourney_run(config, tmp / "warm-up", workers)
        ratios: list[float] = []
        for i in range(pairs):
            wall: dict[str, float] = {}
            for side in ("on", "off") if i % 2 == 0 else ("off", "on"):
                if side == "off":
                    os.environ[variable] = "0"
                else:
                    os.environ.pop(variable, None)
                wall[side] = tourney_run(config, tmp / f"r{i}-{side}", workers).wall_s
            os.environ.pop(variable, None)
            ratios.append(wall["off"] / wall["on"])
            print(
                f"pair {i}: on {wall['on']:.2f} s, off {wall['off']:.2f} s, off/on {ratios[-1]:.3f}",
                flush=True,
            )
        print(
            f"{variable}: median paired ratio off/on {statistics.median(ratios):.3f} "
            f"(min {min(ratios):.3f}, max {max(ratios):.3f}); load {os.getloadavg()}"
        )
    finally:
        os.environ.pop(variable, None)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
