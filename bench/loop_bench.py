"""The play loop without its delivery (issue 13, item 1): the games of one ``tourney run``
played by the executor in ``W`` plain processes (no Celery, no Redis, no coordinator, no
store), against the e2e bare script on the same games, side by side in rotating rounds.

``bench/e2e_bench.py`` compares whole runs; its play loop also holds the workers' start,
their builds, Celery's hops and the coordinator. This bench takes all of that away but
the executor (``workers.executor.execute_match``: the artifact cache and one build per
process, the sandboxes and their reuse, the referee loop), so the two together tell
whether what is left of the loop's gap is in the delivery or in playing itself.

Printed per sandbox: ``executor in W processes / bare script: R`` (median over rounds),
with each round's walls.

Run: ``.venv/bin/python -m bench.loop_bench [--quick]``.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench.e2e_bench import BOARD, _bare_script, _orders, tourney_run
from bench.throughput_bench import _sandbox, greedy_mnk_config
from runner.storage.store import RunStore


def _share(run_dir: str, sandbox: str, index: int, processes: int) -> int:
    """Play every ``processes``-th match of the run (from ``index``) with the executor; moves."""
    from workers.executor import execute_match

    artifacts = Path(run_dir) / "artifacts"
    with RunStore.open(Path(run_dir)) as store:
        specs = sorted(store.specs().values(), key=lambda s: s.match_id)
    cache = Path(tempfile.mkdtemp(prefix="tourney-loop-"))
    try:
        moves = 0
        for spec in specs[index::processes]:
            mine = dataclasses.replace(spec, sandbox=sandbox)
            result = execute_match(
                mine, lambda d: (artifacts / f"{d}.tar.gz").read_bytes(), cache, worker="loop"
            )
            moves += sum(len(g.moves) for g in result.games)
        return moves
    finally:
        from workers.sandbox.pool import close_idle_sandboxes

        close_idle_sandboxes()  # a pool process ends without atexit: its kept sandboxes go now
        shutil.rmtree(cache, ignore_errors=True)


def _executor(run_dir: Path, sandbox: str, processes: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    with ProcessPoolExecutor(processes) as pool:
        futures = [pool.submit(_share, str(run_dir), sandbox, i, processes) for i in range(processes)]
        moves = sum(f.result() for f in futures)
    return time.perf_counter() - t0, moves


def main(quick: bool = False) -> None:
    processes = os.cpu_count() or 1
    entrants, games, rounds = (4, 2, 1) if quick else (12, 4, 3)
    sandboxes = list(dict.fromkeys([_sandbox(), "none"]))
    print(
        f"play loop without delivery: {entrants} native mnk entries ({BOARD}), {games} games per pair; "
        f"executor in {processes} processes vs the bare script; load average {os.getloadavg()[0]:.2f}"
    )
    tmp = Path(tempfile.mkdtemp(prefix="tourney-loop-"))
    try:
        config = greedy_mnk_config(
            tmp, name="loop", seed=13, board=BOARD, entrants=entrants, games=games, sandbox=sandboxes[-1]
        )
        run_dir = tmp / "run"
        tourney_run(config, run_dir, processes)  # the specs and artifacts the sides play
        orders = _orders(run_dir)
        sides = [*sandboxes, "bare"]
        walls: dict[str, list[float]] = {side: [] for side in sides}
        for r in range(rounds):
            for side in sides[r % len(sides) :] + sides[: r % len(sides)]:
                if side == "bare":
                    bare = _bare_script(orders, processes)
                    wall, moves = bare.wall_s, bare.moves
                else:
                    wall, moves = _executor(run_dir, side, processes)
                walls[side].append(wall)
            shown = ", ".join(f"{side} {walls[side][-1]:.2f} s" for side in sides)
            print(f"  round {r + 1}: {shown} ({moves} moves); load average {os.getloadavg()[0]:.2f}")
        for sandbox in sandboxes:
            ratio = statistics.median(w / b for w, b in zip(walls[sandbox], walls["bare"], strict=True))
            print(f"  sandbox {sandbox}: executor in {processes} processes / bare script: {ratio:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main("--quick" in sys.argv)
