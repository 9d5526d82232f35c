"""End to end against a bare script (issue 13, item 1): the whole ``tourney run``
against the least a script could do to play the same games.

One fixed config: native mnk entries (``entries/mnk/greedy`` built with
``cc -O2``, one variant per seed), a round robin on one board. Each side is
timed by the wall clock, fixed costs included:

* ``tourney run``: the CLI in a subprocess, as a user runs it (embedded Redis,
  one local worker playing ``W`` matches at once, its builds, the store, the report);
* the bare script: one build, then the same games (the seat orders the run
  played) with the same referee (``runner.domain.games``' mnk rules) by
  ``subprocess.run`` of the entry once per move, spread over ``W`` processes;
  no sandbox, no broker, no store, no report.

``W`` is the number of cores. Each round runs ``tourney run`` with ``sandbox:
bwrap`` (when available here), with ``sandbox: none`` and the bare script, in
an order that rotates from round to round; the ratio printed per sandbox is
the median over rounds of its run against that round's bare script. Printed:
``end-to-end ratio (tourney run / bare script): R`` (the issue's target
``R <= 1.25`` with the sandbox on), how much of a run's wall time is spent
outside its play loop (start, builds, report, stop), and the CPU all of each
side's processes used: on ``W`` busy cores the wall ratio cannot go much below
that CPU ratio, so it says how much of the gap is work rather than waiting.
"""

from __future__ import annotations

import os
import resource
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


def _cpu_s() -> float:
    """CPU used so far by this process and its reaped descendants (a side's CPU is the
    difference around it: every process either side starts is waited for before it ends)."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


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


def _session_s(run_dir: Path) -> float:
    """How long the run's play loop took (the rest of its wall time is fixed cost)."""
    with RunStore.open(run_dir) as store:
        return float(store.meta()["last_session"]["elapsed_s"])


def _compare(tmp: Path, sandboxes: list[str], entrants: int, games: int, rounds: int, workers: int) -> None:
    """``rounds`` rounds of one ``tourney run`` per sandbox and one bare script, in an order
    that rotates every round (outside load hits every side alike); each sandbox's ratio is
    the median over rounds of its run against the same round's bare script."""
    configs = {
        sandbox: greedy_mnk_config(
            tmp, name=f"e2e-{sandbox}", seed=13, board=BOARD, entrants=entrants, games=games, sandbox=sandbox
        )
        for sandbox in sandboxes
    }
    # the seat orders the bare script plays: the run's own (the same for every sandbox)
    first = tmp / "orders-run"
    _tourney_run(configs[sandboxes[0]], first, workers)
    orders, _ = _played(first)
    sides = [*sandboxes, "bare"]
    walls: dict[str, list[float]] = {side: [] for side in sides}
    fixed: dict[str, list[float]] = {sandbox: [] for sandbox in sandboxes}
    ratios: dict[str, list[float]] = {sandbox: [] for sandbox in sandboxes}
    moves: dict[str, int] = {}
    cpus: dict[str, list[float]] = {side: [] for side in sides}
    for r in range(rounds):
        times: dict[str, float] = {}
        for side in sides[r % len(sides) :] + sides[: r % len(sides)]:
            cpu0 = _cpu_s()
            if side == "bare":
                times[side], moves[side] = _bare_script(orders, workers)
            else:
                run_dir = tmp / f"run-{side}-{r}"
                times[side] = _tourney_run(configs[side], run_dir, workers)
                _, moves[side] = _played(run_dir)
                fixed[side].append(times[side] - _session_s(run_dir))
            cpus[side].append(_cpu_s() - cpu0)
        for side, t in times.items():
            walls[side].append(t)
        for sandbox in sandboxes:
            ratios[sandbox].append(times[sandbox] / times["bare"])
    med = statistics.median
    print(f"  bare script: {med(walls['bare']):.2f} s ({moves['bare']} moves); medians of {rounds} round(s)")
    for sandbox in sandboxes:
        shown = ", ".join(f"{x:.2f}" for x in ratios[sandbox])
        print(
            f"  sandbox {sandbox}: tourney run {med(walls[sandbox]):.2f} s ({moves[sandbox]} moves), "
            f"of which {med(fixed[sandbox]):.2f} s outside the play loop (start, builds, report, stop); "
            f"ratios {shown}"
        )
    for sandbox in sandboxes:
        # the play loop alone (first dispatch to last result) against the whole bare script
        loops = [w - f for w, f in zip(walls[sandbox], fixed[sandbox], strict=True)]
        loop_ratio = med([loop / bare for loop, bare in zip(loops, walls["bare"], strict=True)])
        print(f"  sandbox {sandbox}: play loop / bare script: {loop_ratio:.2f}")
    for sandbox in sandboxes:
        # on W busy cores the wall ratio cannot fall far below the CPU ratio: this is its floor
        run_cpu, bare_cpu = med(cpus[sandbox]), med(cpus["bare"])
        print(
            f"  sandbox {sandbox}: CPU of all processes, tourney run / bare script: "
            f"{run_cpu / bare_cpu:.2f} ({run_cpu:.2f} s vs {bare_cpu:.2f} s)"
        )
    for sandbox in sandboxes:
        print(
            f"  sandbox {sandbox}: end-to-end ratio (tourney run / bare script): {med(ratios[sandbox]):.2f}"
        )


def main(quick: bool = False) -> None:
    from bench.throughput_bench import _sandbox

    workers = os.cpu_count() or 1
    # the config: 12 native entries, 66 pairings x 4 games = 264 games (about 4,900 moves)
    entrants, games, rounds = (4, 2, 1) if quick else (12, 4, 3)
    sandboxes = list(dict.fromkeys([_sandbox(), "none"]))
    load = os.getloadavg()
    print(
        f"end to end: {entrants} native mnk entries ({BOARD}), {games} games per pair, round robin; "
        f"{workers} workers / bare processes; sandboxes {', '.join(sandboxes)} side by side; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    tmp = Path(tempfile.mkdtemp(prefix="tourney-e2e-"))
    try:
        _compare(tmp, sandboxes, entrants, games, rounds, workers)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main("--quick" in sys.argv)
