"""End to end against a bare script (issue 13, item 1; re-targeted by issue 27, item 7): the
whole ``tourney run`` against the least a script could do to play the same games.

Native mnk entries (``entries/mnk/greedy`` built with ``cc -O2``, one variant per
seed), a round robin on one board, on two configs: the small one (12 entries, 264
games, a few seconds) and a long one (40 entries, 3,120 games: its bare script takes
20 s or more on the 2-core development machine). Each side is timed by the wall
clock, fixed costs included:

* ``tourney run``: the CLI in a subprocess, as a user runs it (embedded Redis,
  one local worker playing ``W`` matches at once, its builds, the store, the report);
* the bare script: one build, then the same games (the seat orders the run
  played) with the same referee (``runner.domain.games``' mnk rules) by
  ``subprocess.run`` of the entry once per move, spread over ``W`` processes;
  no sandbox, no broker, no store, no report.

``W`` is the number of cores. Each round of the small config runs ``tourney run``
with ``sandbox: bwrap`` (when available here), with ``sandbox: none`` and the bare
script; each round of the long one runs the first sandbox alone and the bare script;
the order rotates from round to round (one round of each by default, ``--rounds N``
for more). A ratio printed is the median over rounds of a run against that round's
bare script.

The small config's ratio is dominated by what a run costs whatever its size, so it
is printed with that cost and the per-match cost apart, both read from the run
itself (``split_run``):

* start-up ``S``: the run's fixed seconds, from the command's launch to the first
  match started (``started_at`` in the run store: the coordinator's clock on
  receiving the worker's start note) plus from the last match finished to the
  command's exit (the report, the stop);
* per-match overhead ``M``: the run's play span (first match started to last
  finished) less the bare script's (its wall time less its build), divided by the
  matches played: the extra wall time each match adds with ``W`` played at once.

So ``tourney run = S + bare play span + matches x M`` and ``bare script = bare
build + bare play span``; as the matches grow the ratio tends to the play spans'
ratio, which the long config measures: ``end-to-end ratio, long config (tourney
run / bare script): R``, target ``R <= 1.15`` with the sandbox on.

The greedy entry's move is little more than a process start (docs/benchmarks.md), so
those ratios weigh the runner's cost a move against almost nothing. A third config
weighs it against a move that costs something: 12 copies of ``bench/entries/fixed-work``
(4 million steps of computing a move, about 6 ms here, then the first empty cell), 264
games, bare script 30 s or more: ``end-to-end ratio, entries that think (tourney run /
bare script): R``, printed for what it shows, with no target of its own.

Also printed for the small config: how much of a run's wall time is spent outside
its play loop (start, builds, report, stop; from the run's own session timer). For both
configs: the CPU the whole machine used while each side ran (``/proc/stat``, every
core's busy time, so meant for an otherwise idle machine) and how many of its cores that
kept busy on average. On ``W`` busy cores the wall ratio cannot go much below that CPU
ratio, so it says how much of the gap is work rather than waiting. (The machine's
count, not ``getrusage``: a run's local worker and its pool processes are never waited
for by the command, so their CPU, and that of the sandboxes under them, never reaches
its children's usage.)
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from bench.fairtime_bench import ENTRY as THINKING_ENTRY
from bench.fairtime_bench import fixed_work_config
from bench.throughput_bench import ENTRY, greedy_mnk_config
from runner.domain.games import get_game
from runner.domain.match_record import MatchRecord
from runner.storage.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
BOARD = "9 9 5"
#: the issue's target for the long config, sandbox on (issue 27, item 7)
LONG_TARGET = 1.15


@dataclass(frozen=True)
class RunTiming:
    """One ``tourney run`` by the wall clock (``time.time()``, the run store's clock)."""

    launched: float
    exited: float
    first_started: float
    last_finished: float
    matches: int
    moves: int

    @property
    def wall_s(self) -> float:
        return self.exited - self.launched

    @property
    def span_s(self) -> float:
        """First match started to last match finished: what grows with the matches."""
        return self.last_finished - self.first_started

    @property
    def start_up_s(self) -> float:
        """What the run costs whatever its size: before its first match and after its last."""
        return (self.first_started - self.launched) + (self.exited - self.last_finished)


@dataclass(frozen=True)
class BareTiming:
    wall_s: float
    build_s: float
    moves: int

    @property
    def span_s(self) -> float:
        return self.wall_s - self.build_s


@dataclass(frozen=True)
class Split:
    """A run against the bare script that played the same games."""

    ratio: float
    start_up_s: float
    per_match_overhead_ms: float


def split_run(run: RunTiming, bare: BareTiming) -> Split:
    """The ratio of the wall times, the run's fixed seconds, and the extra wall time per
    match of its play span over the bare script's (see the module docstring)."""
    if run.matches <= 0:
        raise ValueError("a run that played no match has no per-match overhead")
    overhead_ms = (run.span_s - bare.span_s) / run.matches * 1000.0
    return Split(run.wall_s / bare.wall_s, run.start_up_s, overhead_ms)


def run_timing(run_dir: Path, launched: float, exited: float) -> RunTiming:
    """``launched`` and ``exited`` around the command, the rest from its run store."""
    with RunStore.open(run_dir) as store:
        played = [row for row in store.match_rows() if row.result is not None]
    return timing_of(played, launched, exited)


def timing_of(played: list[MatchRecord], launched: float, exited: float) -> RunTiming:
    starts = [row.started_at for row in played if row.started_at is not None]
    ends = [row.finished_at for row in played if row.finished_at is not None]
    if not starts or not ends:
        raise RuntimeError("the run store has no start or finish time of any match played")
    moves = sum(len(game.moves) for row in played if row.result for game in row.result.games)
    return RunTiming(launched, exited, min(starts), max(ends), len(played), moves)


_TICK = os.sysconf("SC_CLK_TCK")


def _machine_busy_s() -> float:
    """CPU seconds every core of the machine has been busy so far (``/proc/stat``: all but
    idle and iowait); a side's CPU is the difference around it."""
    with open("/proc/stat") as stat:
        ticks = [int(x) for x in stat.readline().split()[1:]]
    return (sum(ticks) - ticks[3] - ticks[4]) / _TICK


def tourney_run(config: Path, run_dir: Path, workers: int) -> RunTiming:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    argv = [sys.executable, "-m", "runner.cli", "run", str(config), "--run-dir", str(run_dir)]
    argv += ["--workers", str(workers), "--no-progress"]
    launched = time.time()
    done = subprocess.run(argv, cwd=run_dir.parent, env=env, capture_output=True, text=True, timeout=3600)
    exited = time.time()
    if done.returncode != 0:
        raise RuntimeError(f"tourney run failed ({done.returncode}): {done.stderr[-2000:]}")
    return run_timing(run_dir, launched, exited)


def _orders(run_dir: Path) -> list[list[str]]:
    """The seat orders of every game the run played."""
    with RunStore.open(run_dir) as store:
        return [list(game.order) for row in store.match_rows() if row.result for game in row.result.games]


def _bare_game(build: str, order: list[str], args: tuple[str, ...] | None) -> int:
    """One game with the mnk referee, each move a ``subprocess.run`` of the entry; its move count.
    ``args``: every variant's arguments, or None for the greedy entry's ``--seed`` from its name."""
    game = get_game("mnk")
    state = game.new_game(BOARD, 2)
    history: list[str] = []
    while game.outcome(state) is None:
        seat = game.to_move(state)
        argv = ["./a.out", *(args if args is not None else ("--seed", order[seat].rsplit("-", 1)[1]))]
        stdin = "\n".join([BOARD, *history]) + "\n"
        out = subprocess.run(argv, input=stdin.encode(), cwd=build, capture_output=True, check=True)
        move = game.parse_move(out.stdout.decode().strip())
        state = game.play(state, move)
        history.append(game.format_move(move))
    return len(history)


def _bare_script(
    orders: list[list[str]], workers: int, entry: Path = ENTRY, args: tuple[str, ...] | None = None
) -> BareTiming:
    t0 = time.perf_counter()
    build = Path(tempfile.mkdtemp(prefix="tourney-bare-"))
    try:
        shutil.copytree(entry, build / "e")
        subprocess.run(["cc", "-O2", "-o", "a.out", "main.c"], cwd=build / "e", check=True)
        built = time.perf_counter()
        n = len(orders)
        with ProcessPoolExecutor(workers) as pool:
            moves = sum(pool.map(_bare_game, [str(build / "e")] * n, orders, [args] * n, chunksize=1))
        return BareTiming(time.perf_counter() - t0, built - t0, moves)
    finally:
        shutil.rmtree(build, ignore_errors=True)


def _session_s(run_dir: Path) -> float:
    """How long the run's play loop took (the rest of its wall time is fixed cost)."""
    with RunStore.open(run_dir) as store:
        return float(store.meta()["last_session"]["elapsed_s"])


@dataclass
class Rounds:
    """Every round's measurements of one config, by side (a sandbox or ``bare``)."""

    runs: dict[str, list[RunTiming]]
    fixed: dict[str, list[float]]  # wall time outside the run's own session timer
    bares: list[BareTiming]
    cpus: dict[str, list[float]]

    def splits(self, sandbox: str) -> list[Split]:
        return [split_run(run, bare) for run, bare in zip(self.runs[sandbox], self.bares, strict=True)]


def _play_rounds(
    tmp: Path,
    configs: dict[str, Path],
    rounds: int,
    workers: int,
    *,
    warm_up: bool,
    bare_entry: Path = ENTRY,
    bare_args: tuple[str, ...] | None = None,
) -> Rounds:
    """``rounds`` rounds of one ``tourney run`` per sandbox and one bare script, in an order
    that rotates every round (outside load hits every side alike). The bare script plays
    the seat orders of a run of the same config (the same for every sandbox and round): a
    warm-up run's when ``warm_up``, else the first round's first run (a sandbox's, as the
    rotation starts with the sandboxes)."""
    tmp.mkdir(parents=True, exist_ok=True)
    sandboxes = list(configs)
    orders: list[list[str]] | None = None
    if warm_up:
        first = tmp / "orders-run"
        tourney_run(configs[sandboxes[0]], first, workers)
        orders = _orders(first)
    sides = [*sandboxes, "bare"]
    out = Rounds({s: [] for s in sandboxes}, {s: [] for s in sandboxes}, [], {side: [] for side in sides})
    for r in range(rounds):
        for side in sides[r % len(sides) :] + sides[: r % len(sides)]:
            cpu0 = _machine_busy_s()
            if side == "bare":
                if orders is None:
                    raise RuntimeError("the bare script came before any run of its config")
                out.bares.append(_bare_script(orders, workers, bare_entry, bare_args))
            else:
                run_dir = tmp / f"run-{side}-{r}"
                run = tourney_run(configs[side], run_dir, workers)
                out.runs[side].append(run)
                out.fixed[side].append(run.wall_s - _session_s(run_dir))
                if orders is None:
                    orders = _orders(run_dir)
            out.cpus[side].append(_machine_busy_s() - cpu0)
    return out


def _cpu_line(measured: Rounds, sandbox: str) -> str:
    """The machine's CPU while each side ran, and the cores it kept busy: on W busy cores the
    wall ratio cannot fall far below the CPU ratio, so this is its floor."""
    med = statistics.median
    run_cpu, bare_cpu = med(measured.cpus[sandbox]), med(measured.cpus["bare"])
    run_wall = med(run.wall_s for run in measured.runs[sandbox])
    bare_wall = med(bare.wall_s for bare in measured.bares)
    return (
        f"CPU of the machine, tourney run / bare script: {run_cpu / bare_cpu:.2f} "
        f"({run_cpu:.2f} s vs {bare_cpu:.2f} s; cores busy {run_cpu / run_wall:.2f} vs "
        f"{bare_cpu / bare_wall:.2f} of {os.cpu_count()})"
    )


def _print_small(measured: Rounds, sandboxes: list[str], rounds: int) -> None:
    med = statistics.median
    walls = {s: [run.wall_s for run in measured.runs[s]] for s in sandboxes}
    bare_walls = [bare.wall_s for bare in measured.bares]
    ratios = {s: [split.ratio for split in measured.splits(s)] for s in sandboxes}
    fixed = measured.fixed
    bare_moves = measured.bares[-1].moves
    print(f"  bare script: {med(bare_walls):.2f} s ({bare_moves} moves); medians of {rounds} round(s)")
    for sandbox in sandboxes:
        shown = ", ".join(f"{x:.2f}" for x in ratios[sandbox])
        run_moves = measured.runs[sandbox][-1].moves
        print(
            f"  sandbox {sandbox}: tourney run {med(walls[sandbox]):.2f} s ({run_moves} moves), "
            f"of which {med(fixed[sandbox]):.2f} s outside the play loop (start, builds, report, stop); "
            f"ratios {shown}"
        )
    for sandbox in sandboxes:
        # the play loop alone (first dispatch to last result) against the whole bare script
        loops = [w - f for w, f in zip(walls[sandbox], fixed[sandbox], strict=True)]
        loop_ratio = med([loop / bare for loop, bare in zip(loops, bare_walls, strict=True)])
        print(f"  sandbox {sandbox}: play loop / bare script: {loop_ratio:.2f}")
    for sandbox in sandboxes:
        print(f"  sandbox {sandbox}: {_cpu_line(measured, sandbox)}")
    for sandbox in sandboxes:
        splits = measured.splits(sandbox)
        print(
            f"  sandbox {sandbox}: end-to-end ratio, small config: {med(s.ratio for s in splits):.2f} "
            f"(start-up {med(s.start_up_s for s in splits):.2f} s, "
            f"per-match overhead {med(s.per_match_overhead_ms for s in splits):.1f} ms)"
        )


def _print_long(measured: Rounds, sandbox: str, rounds: int, entrants: int, games: int) -> None:
    med = statistics.median
    splits = measured.splits(sandbox)
    runs, bares = measured.runs[sandbox], measured.bares
    print(
        f"  long config ({entrants} entries, {games} games per pair): "
        f"bare script {med(b.wall_s for b in bares):.2f} s ({bares[-1].moves} moves), "
        f"sandbox {sandbox}: tourney run {med(r.wall_s for r in runs):.2f} s ({runs[-1].moves} moves, "
        f"{runs[-1].matches} matches; start-up {med(s.start_up_s for s in splits):.2f} s, per-match "
        f"overhead {med(s.per_match_overhead_ms for s in splits):.1f} ms); ratios "
        + ", ".join(f"{s.ratio:.2f}" for s in splits)
        + f"; medians of {rounds} round(s)"
    )
    print(f"  long config, sandbox {sandbox}: {_cpu_line(measured, sandbox)}")
    print(
        f"  sandbox {sandbox}: end-to-end ratio, long config (tourney run / bare script): "
        f"{med(s.ratio for s in splits):.2f} (target <= {LONG_TARGET})"
    )


def _print_thinking(
    measured: Rounds, sandbox: str, rounds: int, entrants: int, work: int, workers: int
) -> None:
    med = statistics.median
    splits = measured.splits(sandbox)
    bares = measured.bares
    # a move's cost to the bare script: its whole wall time on ``workers`` processes, a move
    move_ms = med(b.wall_s * workers / b.moves * 1000.0 for b in bares)
    print(
        f"  entries that think ({entrants} fixed-work entries, {work}M steps a move, about "
        f"{move_ms:.1f} ms a move in the bare script): bare script {med(b.wall_s for b in bares):.2f} s "
        f"({bares[-1].moves} moves), sandbox {sandbox}: tourney run "
        f"{med(r.wall_s for r in measured.runs[sandbox]):.2f} s; ratios "
        + ", ".join(f"{s.ratio:.2f}" for s in splits)
        + f"; medians of {rounds} round(s)"
    )
    print(f"  entries that think, sandbox {sandbox}: {_cpu_line(measured, sandbox)}")
    print(
        f"  sandbox {sandbox}: end-to-end ratio, entries that think (tourney run / bare script): "
        f"{med(s.ratio for s in splits):.2f}"
    )


def main(quick: bool = False, rounds: int = 1) -> None:
    from bench.throughput_bench import _sandbox

    workers = os.cpu_count() or 1
    # the small config: 12 native entries, 66 pairings x 4 games = 264 games (about
    # 4,900 moves); the long one: 40 entries, 780 pairings x 4 games = 3,120 games (about
    # 56,000 moves), the same kind of match, twelve times as many: its bare script takes 20 s
    # even in a fast hour of the development machine (the small one's took 2.1-3.5 s)
    entrants, games = (4, 2) if quick else (12, 4)
    long_entrants, long_games = (6, 2) if quick else (40, 4)
    sandboxes = list(dict.fromkeys([_sandbox(), "none"]))
    load = os.getloadavg()
    print(
        f"end to end: {entrants} native mnk entries ({BOARD}), {games} games per pair, round robin; "
        f"{workers} workers / bare processes; sandboxes {', '.join(sandboxes)} side by side; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    )
    tmp = Path(tempfile.mkdtemp(prefix="tourney-e2e-"))
    try:
        configs = {
            sandbox: greedy_mnk_config(
                tmp,
                name=f"e2e-{sandbox}",
                seed=13,
                board=BOARD,
                entrants=entrants,
                games=games,
                sandbox=sandbox,
            )
            for sandbox in sandboxes
        }
        _print_small(_play_rounds(tmp / "small", configs, rounds, workers, warm_up=True), sandboxes, rounds)
        long_config = greedy_mnk_config(
            tmp,
            name=f"e2e-long-{sandboxes[0]}",
            seed=13,
            board=BOARD,
            entrants=long_entrants,
            games=long_games,
            sandbox=sandboxes[0],
        )
        # no warm-up run: the small config's runs warmed the caches, and a long one is costly
        measured = _play_rounds(tmp / "long", {sandboxes[0]: long_config}, rounds, workers, warm_up=False)
        _print_long(measured, sandboxes[0], rounds, long_entrants, long_games)
        # the long config's entries are process starts (docs/benchmarks.md); these think about
        # 6 ms a move, as a real contest's do at the least: the same runner cost, weighed
        # against a move that costs something (its bare script takes 30 s or more here)
        think_entrants, think_work = (4, 1) if quick else (12, 4)
        thinking = fixed_work_config(
            tmp,
            f"e2e-thinking-{sandboxes[0]}",
            entrants=think_entrants,
            exclusive=False,
            work=think_work,
            sandbox=sandboxes[0],
            reserved=0,
            board=BOARD,
            games=long_games,
        )
        measured = _play_rounds(
            tmp / "thinking",
            {sandboxes[0]: thinking},
            rounds,
            workers,
            warm_up=False,
            bare_entry=THINKING_ENTRY,
            bare_args=(str(think_work),),
        )
        _print_thinking(measured, sandboxes[0], rounds, think_entrants, think_work, workers)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(
        prog="python -m bench.e2e_bench", description="end to end against a bare script"
    )
    parser.add_argument("--quick", action="store_true", help="smaller configs (a smoke run)")
    parser.add_argument("--rounds", type=int, default=1, help="rounds of each config (default 1)")
    cli = parser.parse_args()
    if cli.rounds < 1:
        parser.error(f"--rounds: {cli.rounds} is not a number of rounds; expected 1 or more")
    main(cli.quick, cli.rounds)
