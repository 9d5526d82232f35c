"""Scale figures for the pure parts (issue 13, items 3 and 4): ``make bench-scale``.

Each case runs in a fresh subprocess so that its peak resident memory
(``ru_maxrss``) is its own; wall time is the case's own work, inputs made
beforehand. Instant matches (results decided by a hash of the match id) stand
in for games: this measures the planners and the ratings, not play.

* ``swiss``: 10,000 entrants, 10 rounds, planned round by round as the
  coordinator does (each call replays the stage from the results so far);
* ``knockout``: 10,000 entrants to a champion, round by round;
* ``round_robin``: the first plan of a 10,000-entrant round robin (49,995,000
  pairings): planned lazily, it holds a window of ``round_robin.WINDOW``
  matches, not every pairing (issue 13, item 3);
* ``ratings``: Elo with error bars for 10,000 entries and 50,000 games
  (issue target: under 10 s);
* ``coordinator_swiss``, ``coordinator_knockout``, ``coordinator_potm``: the
  whole coordinator (``runner.orchestration.coordinator``, a real SQLite run
  store, every result re-judged) runs a tournament of 10,000 instant entries
  to its end (``bench.instant``: games played at once in-process, no worker
  processes): a swiss of 10 rounds, a knockout, a potm_elimination (k=2).
  Printed: wall, the coordinator's CPU per match (the instant games' own play
  taken out) and peak RSS (issue 13, item 3: under 2 GB).
* ``coordinator_round_robin``: the same for a round robin of ``--rr-entries``
  instant entries (default 400: 79,800 matches, 7 to 9 minutes on the shared
  2-core machine; 1,000 entries, 499,500 matches, would take about an hour
  there at the same 3 to 7 ms of wall per match), planned lazily; also
  printed: the most matches the store held unplayed while it ran, and the
  resident memory it grew by per match played (what ``MAX_STAGE_GAMES``, the
  limit ``tourney validate`` enforces, is derived from).

``--round-robin`` runs the two round robin cases only.
"""

from __future__ import annotations

import json
import os
import random
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CASES = (
    "ratings",
    "swiss",
    "knockout",
    "round_robin",
    "coordinator_knockout",
    "coordinator_swiss",
    "coordinator_potm",
    "coordinator_round_robin",
)
ROUND_ROBIN_CASES = ("round_robin", "coordinator_round_robin")
COORDINATOR_STAGES: dict[str, dict[str, object]] = {
    "coordinator_swiss": {"name": "sw", "planner": "swiss", "rounds": 10},
    "coordinator_knockout": {"name": "ko", "planner": "knockout"},
    "coordinator_potm": {"name": "el", "planner": "potm_elimination", "k": 2},
}


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def _instant(m: object) -> list[object]:
    from runner.domain.match_values import GameRecord, MatchPlan, Verdict, VerdictKind

    assert isinstance(m, MatchPlan)
    upset = int(m.match_id[:2], 16) < 80
    out: list[object] = []
    for order in m.orders:
        a, b = sorted(order)
        w = b if upset else a
        out.append(GameRecord(list(order), w, {w: 1}, Verdict(VerdictKind.NORMAL, None, ""), []))
    return out


def _stage_case(stage: dict[str, object], n: int, max_calls: int) -> dict[str, float]:
    from runner.config import TournamentConfig
    from runner.domain.stages import PLANNERS
    from runner.domain.stages.common import StageContext

    cfg = TournamentConfig.model_validate(
        {
            "name": "scale",
            "seed": 1,
            "game": "boxing",
            "boards": {"arena": {"generate": {"blocked": 10}, "per_round": True}},
            "entries": [{"path": "unused"}],
            "stages": [stage],
        }
    )
    st = cfg.stages[0]
    ctx = StageContext(stage=st, seed=cfg.seed, boards=cfg.boards)
    entrants = [f"e{i:05d}" for i in range(1, n + 1)]
    plan = PLANNERS.get(st.planner)
    results: dict[str, list[object]] = {}
    t0 = time.perf_counter()
    calls = 0
    matches = 0
    for _ in range(max_calls):
        out = plan(ctx, entrants, results)  # type: ignore[arg-type]
        calls += 1
        matches = len(out.matches)
        if out.done:
            break
        fresh = {m.match_id: _instant(m) for m in out.matches if m.match_id not in results}
        if not fresh:
            break
        results.update(fresh)
    wall = time.perf_counter() - t0
    return {"wall_s": wall, "plan_calls": calls, "matches": matches, "done": float(out.done)}


def _ratings_case() -> dict[str, float]:
    from runner.domain.match_values import GameRecord, Verdict, VerdictKind
    from runner.domain.ratings import elo_ratings

    rng = random.Random(5)
    names = [f"e{i:05d}" for i in range(10_000)]
    truth = {n: rng.gauss(0.0, 200.0) for n in names}
    normal = Verdict(VerdictKind.NORMAL, None, "")
    games = []
    for _ in range(50_000):
        a, b = rng.sample(names, 2)
        p = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
        r = rng.random()
        winner = a if r < 0.9 * p else (None if r < 0.9 * p + 0.1 else b)
        games.append(GameRecord([a, b], winner, {}, normal, []))
    t0 = time.perf_counter()
    ratings = elo_ratings(games)
    wall = time.perf_counter() - t0
    widest = max(r.ci95 for r in ratings)
    return {"wall_s": wall, "entries": len(ratings), "games": len(games), "widest_ci95": widest}


def _coordinator_case(stage: dict[str, object], n: int) -> dict[str, float]:
    from bench.coordinator_bench import run_session

    s = run_session(n, dict(stage))
    return {"wall_s": s.wall_s, "matches": s.matches, "cpu_ms_per_match": s.cpu_per_match_ms}


def _round_robin_plan_case(n: int) -> dict[str, float]:
    """The first plan of an ``n``-entrant round robin, as the coordinator's first ``advance``."""
    from bench.instant import instant_config
    from runner.domain.stages import round_robin
    from runner.domain.stages.tournament import advance

    config = instant_config(n, {"name": "rr", "planner": "round_robin"})
    t0 = time.perf_counter()
    state = advance(config, {})
    wall = time.perf_counter() - t0
    return {
        "entries": n,
        "pairings": n * (n - 1) // 2,
        "planned": len(state.matches),
        "window": round_robin.WINDOW,
        "wall_s": wall,
    }


def _coordinator_round_robin_case(n: int) -> dict[str, float]:
    """A whole round robin of ``n`` instant entries through the coordinator (module doc)."""
    from bench import coordinator_bench
    from runner.orchestration.dispatcher import InboxNote

    base_mb = _peak_mb()
    most_unplayed = 0

    class Watching(coordinator_bench._TimedInstant):
        polls = 0

        def poll(self, timeout: float) -> list[InboxNote]:
            nonlocal most_unplayed
            self.polls += 1
            if self.polls % 200 == 1 and self.store is not None:  # a look now and then (a scan)
                counts = self.store.counts()
                most_unplayed = max(most_unplayed, sum(v for k, v in counts.items() if k != "done"))
            return super().poll(timeout)

    s = coordinator_bench.run_session(n, {"name": "rr", "planner": "round_robin"}, dispatcher_type=Watching)
    grown = max(_peak_mb() - base_mb, 0.0)
    return {
        "wall_s": s.wall_s,
        "matches": s.matches,
        "cpu_ms_per_match": s.cpu_per_match_ms,
        "most_unplayed_stored": most_unplayed,
        "kb_per_match": 1024.0 * grown / max(s.matches, 1),
    }


def run_case(name: str, entries: int = 10_000, rr_entries: int = 400) -> dict[str, float]:
    if name == "coordinator_round_robin":
        out = _coordinator_round_robin_case(rr_entries)
    elif name in COORDINATOR_STAGES:
        out = _coordinator_case(COORDINATOR_STAGES[name], entries)
    elif name == "ratings":
        out = _ratings_case()
    elif name == "swiss":
        out = _stage_case({"name": "sw", "planner": "swiss", "rounds": 10}, 10_000, 12)
    elif name == "knockout":
        out = _stage_case({"name": "ko", "planner": "knockout"}, 10_000, 16)
    else:
        out = _round_robin_plan_case(10_000)
    out["peak_rss_mb"] = _peak_mb()
    return out


def main(
    quick: bool = False, only: list[str] | None = None, entries: int = 10_000, rr_entries: int = 400
) -> None:
    load = os.getloadavg()
    loads = f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f}"
    print(f"scale: planners and ratings at 10,000 entries; load average {loads}")
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    cases = only or (("ratings", "knockout", "coordinator_knockout") if quick else CASES)
    for name in cases:
        done = subprocess.run(
            [
                *(sys.executable, "-m", "bench.scale_bench", "--case", name),
                *("--entries", str(entries), "--rr-entries", str(rr_entries)),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=3600,
        )
        if done.returncode != 0:
            print(f"  {name}: FAILED ({done.returncode}): {done.stderr[-1500:]}")
            continue
        figures = json.loads(done.stdout.strip().splitlines()[-1])
        shown = ", ".join(f"{k} {v:.2f}" if isinstance(v, float) else f"{k} {v}" for k, v in figures.items())
        print(f"  {name}: {shown}", flush=True)


def _cli(argv: list[str]) -> None:
    import argparse

    parser = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m bench.scale_bench", description=__doc__
    )
    parser.add_argument("names", nargs="*", help=f"cases: {', '.join(CASES)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="ratings and the knockouts only")
    parser.add_argument("--case", help="run one case in this process and print its figures as JSON")
    parser.add_argument("--entries", type=int, default=10_000, help="entries of the coordinator cases")
    parser.add_argument(
        "--rr-entries", type=int, default=400, help="entries of coordinator_round_robin (default 400)"
    )
    parser.add_argument("--round-robin", action="store_true", help="the round robin cases only")
    args = parser.parse_args(argv)
    unknown = [n for n in args.names if n not in CASES]
    if unknown:
        parser.error(f"unknown case(s): {', '.join(unknown)}; known: {', '.join(CASES)}")
    if args.case:
        print(json.dumps(run_case(args.case, args.entries, args.rr_entries)))
    else:
        only = list(ROUND_ROBIN_CASES) if args.round_robin else args.names or None
        main(args.quick, only, args.entries, args.rr_entries)


if __name__ == "__main__":
    _cli(sys.argv[1:])
