"""End to end against a bare script (issue 13, item 1): the whole ``tourney run``
against the least a script could do to play the same games.

One fixed config: native mnk entries (``entries/mnk/greedy`` built with
``cc -O2``, one variant per seed), a round robin on one board. Each side is
timed by the wall clock, fixed costs included:

* ``tourney run``: the CLI in a subprocess, as a user runs it (embedded Redis,
  ``W`` local workers, one build per worker, the store, the report);
* the bare script: one build, then the same games (the seat orders the run
  played) with the same referee (``runner.domain.games``' mnk rules) by
  ``subprocess.run`` of the entry once per move, spread over ``W`` processes;
  no sandbox, no broker, no store, no report.

``W`` is the number of cores. Runs are paired (tourney then bare, then the
other way round) and the ratio printed is the median of the pairs' ratios,
for ``sandbox: bwrap`` (when available here) and ``sandbox: none``. Printed:
``end-to-end ratio (tourney run / bare script): R`` (the issue's target
``R <= 1.25`` with the sandbox on).
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

from bench.throughput_bench import ENTRY, greedy_mnk_config
from runner.domain.games import get_game
from runner.storage.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
BOARD = "9 9 5"


def _tourney_run(config: Path, run_dir: Path, workers: int) -> float:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    argv = [sys.executable, "-m", "runner.cli", "run", str(config), "--run-dir", str(run_dir)]
    argv += ["--workers", str(workers), "--no-progress"]
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=run_dir.parent, env=env, capture_output=True, text=True, timeout=1800)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"tourney run failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def _played(run_dir: Path) -> tuple[list[list[str]], int]:
    """The seat orders of every game the run played, and its move count."""
    orders: list[list[str]] = []
    moves = 0
    with RunStore.open(run_dir) as store:
        for row in store.match_rows():
            if row.result is None:
                continue
            for game in row.result.games:
                orders.append(list(game.order))
                moves += len(game.moves)
    return orders, moves


def _bare_game(build: str, order: list[str]) -> int:
    """One game with the mnk referee, each move a ``subprocess.run`` of the entry; its move count."""
    game = get_game("mnk")
    state = game.new_game(BOARD, 2)
    history: list[str] = []
    while game.outcome(state) is None:
        seat = game.to_move(state)
        seed = order[seat].rsplit("-", 1)[1]
        stdin = "\n".join([BOARD, *history]) + "\n"
        out = subprocess.run(
            ["./a.out", "--seed", seed], input=stdin.encode(), cwd=build, capture_output=True, check=True
        )
        move = game.parse_move(out.stdout.decode().strip())
        state = game.play(state, move)
        history.append(game.format_move(move))
    return len(history)


def _bare_script(orders: list[list[str]], workers: int) -> tuple[float, int]:
    t0 = time.perf_counter()
    build = Path(tempfile.mkdtemp(prefix="tourney-bare-"))
    try:
        shutil.copytree(ENTRY, build / "e")
        subprocess.run(["cc", "-O2", "-o", "a.out", "main.c"], cwd=build / "e", check=True)
        with ProcessPoolExecutor(workers) as pool:
            moves = sum(pool.map(_bare_game, [str(build / "e")] * len(orders), orders, chunksize=1))
        return time.perf_counter() - t0, moves
    finally:
        shutil.rmtree(build, ignore_errors=True)


def _compare(tmp: Path, sandbox: str, entrants: int, games: int, pairs: int, workers: int) -> None:
    config = greedy_mnk_config(
        tmp, name=f"e2e-{sandbox}", seed=13, board=BOARD, entrants=entrants, games=games, sandbox=sandbox
    )
    ratios: list[float] = []
    runs: list[float] = []
    bares: list[float] = []
    moves_run = moves_bare = 0
    for p in range(pairs):
        run_dir = tmp / f"run-{sandbox}-{p}"

        def tourney(run_dir: Path = run_dir) -> float:
            return _tourney_run(config, run_dir, workers)

        if p % 2 == 0:  # alternate which side goes first: outside load hits both alike
            t_run = tourney()
            orders, moves_run = _played(run_dir)
            t_bare, moves_bare = _bare_script(orders, workers)
        else:
            # the bare side needs the run's seat orders: take them from the first pair's run
            orders, _ = _played(tmp / f"run-{sandbox}-0")
            t_bare, moves_bare = _bare_script(orders, workers)
            t_run = tourney()
            _, moves_run = _played(run_dir)
        runs.append(t_run)
        bares.append(t_bare)
        ratios.append(t_run / t_bare)
    print(
        f"  sandbox {sandbox}: tourney run {statistics.median(runs):.2f} s ({moves_run} moves), "
        f"bare script {statistics.median(bares):.2f} s ({moves_bare} moves); medians of {pairs} pair(s)"
    )
    ratio = statistics.median(ratios)
    print(f"  sandbox {sandbox}: end-to-end ratio (tourney run / bare script): {ratio:.2f}")


def main(quick: bool = False) -> None:
    from bench.throughput_bench import _sandbox

    workers = os.cpu_count() or 1
    entrants, games, pairs = (4, 2, 1) if quick else (8, 4, 3)
    sandboxes = list(dict.fromkeys([_sandbox(), "none"]))
    load = os.getloadavg()
    print(
        f"end to end: {entrants} native mnk entries ({BOARD}), {games} games per pair, round robin; "
        f"{workers} workers / bare processes; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    tmp = Path(tempfile.mkdtemp(prefix="tourney-e2e-"))
    try:
        for sandbox in sandboxes:
            _compare(tmp, sandbox, entrants, games, pairs, workers)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main("--quick" in sys.argv)
