"""Engine testing on many machines (docs/benchmarks.md, "Engines on many machines"; issue 39,
item 7): stockfish games at a time control, played by 1 worker and by 4 workers, each worker
a separate "machine" (its own network namespace reaching Redis over a veth link, its own
work directory and build cache, concurrency 1), the coordinator and Redis on the host.

Printed:

* ``engine games per hour, 4 workers / 1 worker: R`` (target >= 3.5): games of stockfish
  against itself at a clock (``tc``), in pairs of runs alternating which goes first, over
  the coordinator's play loop. On this 2-core host four workers have only two cores between
  them: each engine then searches less per move, but a game at a clock lasts as long as the
  clocks say whatever the engine finds in that time, so the games' wall time, and the rate,
  scale with the workers. That is what this measures: the runner's dispatch and per-match
  costs across machines, not the engines' strength per core (on real machines each worker
  has cores of its own). The load average is printed with each run.
* an SPRT (the ``sprt`` stage, docs/config.md) of stockfish at 4,000 nodes a move against
  itself at 1,000 on 4 workers and on 1: both decisions, which must be the same (the test
  decides on the leading run of pairs in pair order, and a game at fixed nodes is the same
  game on any worker).
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
STOCKFISH = Path("/usr/games/stockfish")
BOOK = ROOT / "configs" / "openings.epd"


def _engine_entries(directory: Path, names: list[str]) -> list[Path]:
    """Entry directories for stockfish under ``names``: the shipped entry, renamed."""
    text = (ROOT / "entries" / "chess" / "stockfish" / "entry.yaml").read_text()
    paths = []
    for name in names:
        entry = directory / name
        entry.mkdir(parents=True, exist_ok=True)
        (entry / "entry.yaml").write_text(text.replace("name: stockfish", f"name: {name}"))
        paths.append(entry)
    return paths


def clocked_config(directory: Path, *, tc: str, entrants: int, openings: int, max_moves: int) -> Path:
    """A round robin of ``entrants`` copies of stockfish at ``tc`` over ``openings`` book
    openings (one colour-swapped pair a match). No resign or draw adjudication, and a cap of
    ``max_moves`` moves: the games are near one length, so the last matches do not leave
    workers idle."""
    paths = _engine_entries(directory, [f"sf-{chr(ord('a') + i)}" for i in range(entrants)])
    config = {
        "name": "engine-scale",
        "seed": 39,
        "game": "chess",
        "sandbox": _sandbox(),
        "each": {"tc": tc, "options": {"Hash": 16, "Threads": 1}},
        # one opening's pair a match, so that the matches outnumber the workers: the default
        # (per_match auto) would make 2 openings a match here, half as many matches as the
        # run has openings times pairings, and leave workers idle at 4 workers
        "openings": {"file": str(BOOK), "order": "sequential", "count": openings, "per_match": 1},
        "adjudication": {"maxmoves": max_moves},
        "entries": [{"path": str(p)} for p in paths],
        "stages": [
            {"name": "league", "planner": "round_robin", "boards": ["openings"], "games_per_pairing": 2}
        ],
    }
    path = directory / "engine-scale.yaml"
    path.write_text(json.dumps(config, indent=2))
    return path


def sprt_config(directory: Path, *, workers: int, max_pairs: int) -> Path:
    """stockfish at 4,000 nodes a move against itself at 1,000: the sprt stage as
    tests/integration/test_engine_tournaments.py plays it, ``workers`` pairs in flight."""
    strong, weak = _engine_entries(directory, ["sf4000", "sf1000"])
    config = {
        "name": f"engine-scale-sprt-{workers}",
        "seed": 7,
        "game": "chess",
        "sandbox": _sandbox(),
        "openings": {"file": str(BOOK), "order": "random"},
        "adjudication": {"resign": {"movecount": 3, "score": 800}, "maxmoves": 120},
        "entries": [
            {"path": str(strong), "engine": {"nodes": 4000}},
            {"path": str(weak), "engine": {"nodes": 1000}},
        ],
        "stages": [
            {
                "name": "test",
                "planner": "sprt",
                "boards": ["openings"],
                "elo0": 0,
                "elo1": 50,
                "model": "normalized",
                "engine": "sf4000",
                "baseline": "sf1000",
                "max_pairs": max_pairs,
                "concurrency": workers,  # the workers are remote (--no-local-workers): say how many
            }
        ],
    }
    path = directory / f"sprt-{workers}.yaml"
    path.write_text(json.dumps(config, indent=2))
    return path


def _sandbox() -> str:
    from bench.throughput_bench import _sandbox

    return _sandbox()


def time_losses(run_dir: Path) -> int:
    from runner.domain.match_values import VerdictKind
    from runner.storage.store import RunStore

    with RunStore.open(run_dir) as store:
        games = [g for row in store.match_rows() if row.result is not None for g in row.result.games]
    return sum(1 for g in games if g.verdict.kind is VerdictKind.TIMEOUT)


def sprt_decision(run_dir: Path) -> str:
    """The sprt stage's note: its decision, LLR, bounds and the pairs it was decided on."""
    from runner.domain.stages.tournament import advance
    from runner.storage.run_dir import load_run_config
    from runner.storage.store import RunStore

    config = load_run_config(run_dir)
    with RunStore.open(run_dir) as store:
        results = store.official_results()
    state = advance(config, results)
    notes = state.stages[0].notes
    return notes[0] if notes else "no decision"


def _games_per_hour(tmp: Path, config: Path, workers: int, use_netns: bool) -> tuple[float, dict[str, Any]]:
    from bench.throughput_bench import _play

    load = os.getloadavg()[0]
    _, session = _play(tmp, config, workers, use_netns)
    session["load_start"], session["load_end"] = load, os.getloadavg()[0]
    session["time_losses"] = time_losses(tmp / f"run-{workers}")
    return session["games"] * 3600.0 / session["elapsed_s"], session


def main(quick: bool = False, rounds: int | None = None) -> None:
    from bench.netns import netns_problem
    from bench.throughput_bench import _play

    if not STOCKFISH.exists():
        print(f"engine-scale: skipped ({STOCKFISH} is not installed: apt-get install stockfish)")
        return
    problem = netns_problem()
    use_netns = problem is None
    many = 4
    # The clocks must be long enough that a game lasts well beyond a match's fixed costs
    # (the engines' starts, the sandbox): at shorter clocks the ratio measures CPU, not
    # machines. quick: a smoke run,
    # 4 matches of 20 moves; full: 3 copies over 4 openings, 12 matches (3 a worker of 4) of
    # 40 moves, 2 pairs of runs
    if quick:
        tc, entrants, openings, max_moves, pairs, max_pairs = "6+0.06", 2, 4, 20, 1, 60
    else:
        tc, entrants, openings, max_moves, pairs, max_pairs = "10+0.1", 3, 4, 40, 2, 100
    pairs = rounds or pairs  # --rounds N: N pairs of runs (a full run's pair is about 15 minutes)
    matches = entrants * (entrants - 1) // 2 * openings
    print(
        f"engine-scale: a round robin of {entrants} copies of {STOCKFISH} at tc {tc}, {openings} openings "
        f"x 2 colours ({matches} matches, {2 * matches} games a run, capped at {max_moves} moves), "
        f"1 worker and {many} workers "
        f"(concurrency 1 each), medians of {pairs} pair(s) of runs; sandbox {_sandbox()}; "
        f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}"
    )
    if not use_netns:
        print(f"  (no network namespaces: {problem}; workers run as plain local processes)")
    tmp = Path(tempfile.mkdtemp(prefix="tourney-engine-scale-"))
    try:
        config = clocked_config(
            tmp / "config", tc=tc, entrants=entrants, openings=openings, max_moves=max_moves
        )
        rates: dict[int, list[float]] = {1: [], many: []}
        ratios: list[float] = []
        for r in range(pairs):
            pair: dict[int, float] = {}
            for workers in (1, many) if r % 2 == 0 else (many, 1):
                rate, s = _games_per_hour(tmp / f"r{r}", config, workers, use_netns)
                pair[workers] = rate
                rates[workers].append(rate)
                print(
                    f"  {workers} worker(s): {s['games']} games in {s['elapsed_s']:.1f} s, "
                    f"{rate:.0f} games/hour, {s['time_losses']} lost on time; "
                    f"busy {s['busy_share']:.0%} of the span; "
                    f"load average {s['load_start']:.2f} -> {s['load_end']:.2f}",
                    flush=True,
                )
            ratios.append(pair[many] / pair[1])
        ratio = statistics.median(ratios)
        shown = ", ".join(f"{x:.2f}" for x in ratios)
        print(
            f"engine games per hour, {many} workers / 1 worker: {ratio:.2f} (pairs {shown}; at tc {tc} the "
            f"clocks set a game's wall time, so on these {os.cpu_count()} shared cores the rate scales with "
            f"the workers while each engine searches less; load average {os.getloadavg()[0]:.2f})"
        )
        decisions = {}
        for workers in (many, 1):
            sprt = sprt_config(tmp / f"sprt-{workers}", workers=workers, max_pairs=max_pairs)
            _, session = _play(tmp / f"sprt-{workers}", sprt, workers, use_netns)
            decisions[workers] = sprt_decision(tmp / f"sprt-{workers}" / f"run-{workers}")
            print(
                f"  SPRT sf4000 vs sf1000 on {workers} worker(s), {session['elapsed_s']:.1f} s: "
                f"{decisions[workers].split('; ')[0]}",
                flush=True,
            )
        same = _decision(decisions[many]) == _decision(decisions[1])
        print(
            f"SPRT stockfish 4000 vs 1000 nodes, {many} workers: {_decision(decisions[many])}; "
            f"1 worker: {_decision(decisions[1])}; same decision: {'yes' if same else 'NO'}"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _decision(note: str) -> str:
    for words in ("H1 accepted", "H0 accepted", "inconclusive"):
        if words in note:
            return words
    return note


if __name__ == "__main__":
    main("--quick" in sys.argv)
