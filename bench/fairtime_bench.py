"""Fair timing (issue 14, item 5): an entry's move times in a full tournament
against its move times alone, with ``timing.exclusive_cores`` on and off.

The entry (``bench/entries/fixed-work``, native) does a fixed amount of
CPU-bound work every move, so its move time measures how much CPU it got.
Every run is a real ``tourney run`` (embedded Redis, local workers, the
sandbox); the move times are the runner's own (``MoveRecord.wall_ms``):

* alone: two copies, one local worker: one match at a time, nothing else
  of the tournament running;
* full: ``2C`` copies in a round robin (``C`` = usable cores here) with
  ``--workers 2C`` asked for: with exclusive cores the run lowers that to
  ``C`` workers (``C - 1`` with ``reserved_cores: 1``, used from 4 cores up),
  each match pinned to a core of its own; without, ``2C``
  workers share the ``C`` cores; and without, at the default one worker per
  core (``C`` workers, unpinned).

The runs alternate, alone then full, for 3 rounds (1 with ``--quick``), and
each full run is divided by the alone run of its round and kind. Printed, per
condition, the median over the rounds of the median (and 90th percentile) move
time under the full tournament divided by the median alone:
``fair timing: move time full / alone, exclusive cores: R`` (the issue's
target ``R <= 1.10``), then the same for shared cores. The load average of
the machine is printed too: other users' processes are not ours to pin, and
on a shared machine they show in every figure.
"""

from __future__ import annotations

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from runner.storage.store import RunStore
from workers.sandbox.cores import CORES_DIR_ENV

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "bench" / "entries" / "fixed-work"
BOARD = "7 7 7"  # first-empty play by columns: long games, every move the same work


@dataclass(frozen=True)
class Played:
    """The move times of one run and how it was played."""

    wall_ms: list[float]
    cpu_ms: list[float]
    workers: int  # distinct workers that played its matches
    exclusive: int  # matches played on a core of their own
    matches: int
    elapsed_s: float

    def median(self) -> float:
        return statistics.median(self.wall_ms)

    def p90(self) -> float:
        return statistics.quantiles(self.wall_ms, n=10)[-1]


def fixed_work_config(
    directory: Path,
    name: str,
    *,
    entrants: int,
    exclusive: bool,
    work: int,
    sandbox: str,
    reserved: int,
    board: str = BOARD,
    games: int = 2,
) -> Path:
    """A round robin of ``entrants`` copies of the fixed-work entry (``work`` million steps of
    computing a move, then the first empty cell) on ``board``, ``games`` a pair."""
    config = {
        "name": name,
        "seed": 14,
        "game": "mnk",
        "sandbox": sandbox,
        "limits": {"move_wall_s": 10.0},  # never the limit: the move times are what is measured
        "timing": {"exclusive_cores": exclusive, "reserved_cores": reserved if exclusive else 0},
        "boards": {"b": {"text": board}},
        "entries": [
            {"path": str(ENTRY), "variants": {"count": entrants, "prefix": "fw", "args": [str(work)]}}
        ],
        "stages": [{"name": "rr", "planner": "round_robin", "boards": ["b"], "games_per_pairing": games}],
    }
    path = directory / f"{name}.yaml"
    path.write_text(json.dumps(config, indent=2))
    return path


def _run(directory: Path, config: Path, workers: int) -> Played:
    run_dir = directory / config.stem
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    env[CORES_DIR_ENV] = str(directory / "cores")  # this benchmark's leases only
    argv = [sys.executable, "-m", "runner.cli", "run", str(config), "--run-dir", str(run_dir)]
    argv += ["--workers", str(workers), "--no-progress"]
    t0 = time.perf_counter()
    done = subprocess.run(argv, cwd=directory, env=env, capture_output=True, text=True, timeout=1800)
    elapsed = time.perf_counter() - t0
    if done.returncode != 0:
        raise RuntimeError(f"tourney run failed ({done.returncode}): {done.stderr[-2000:]}")
    wall: list[float] = []
    cpu: list[float] = []
    names: set[str] = set()
    exclusive = matches = 0
    with RunStore.open(run_dir) as store:
        for row in store.match_rows():
            if row.result is None:
                continue
            matches += 1
            names.add(row.result.worker)
            exclusive += 1 if row.result.timing is not None and row.result.timing.exclusive else 0
            for game in row.result.games:
                for m in game.moves:
                    wall.append(m.wall_ms)
                    if m.cpu_ms is not None:
                        cpu.append(m.cpu_ms)
    return Played(wall, cpu, len(names), exclusive, matches, elapsed)


def _describe(label: str, p: Played) -> None:
    cpu = f", cpu median {statistics.median(p.cpu_ms):.1f} ms" if p.cpu_ms else ""
    print(
        f"  {label}: {len(p.wall_ms)} moves, {p.matches} matches ({p.exclusive} on a core of their own) "
        f"by {p.workers} worker(s) in {p.elapsed_s:.1f}s; move wall median {p.median():.1f} ms, "
        f"p90 {p.p90():.1f} ms{cpu}",
        flush=True,
    )


def main(quick: bool = False) -> None:
    from bench.throughput_bench import _sandbox

    cores = len(os.sched_getaffinity(0))
    sandbox = _sandbox()
    work, rounds = (10, 1) if quick else (30, 3)
    entrants = max(4, 2 * cores)
    # a CPU for the coordinator and Redis where that still leaves several to play on
    reserved = 1 if cores >= 4 else 0
    load = os.getloadavg()
    print(
        f"fair timing: fixed-work native mnk entry ({work}M steps per move, {BOARD}), sandbox {sandbox}, "
        f"{cores} usable core(s), reserved_cores {reserved} with exclusive cores; "
        f"full = {entrants} entries round robin with --workers {2 * cores}; "
        f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        flush=True,
    )
    tmp = Path(tempfile.mkdtemp(prefix="tourney-fairtime-"))

    def play(name: str, entries: int, exclusive: bool, workers: int) -> Played:
        config = fixed_work_config(
            tmp, name, entrants=entries, exclusive=exclusive, work=work, sandbox=sandbox, reserved=reserved
        )
        played = _run(tmp, config, workers)
        _describe(f"{name} (--workers {workers})", played)
        return played

    conditions = [
        # (label, exclusive, entries, workers asked); each full run against the alone run of its kind
        ("exclusive cores", True, entrants, 2 * cores),
        (f"shared cores, {2 * cores} workers", False, entrants, 2 * cores),
        (f"shared cores, {cores} workers", False, entrants, cores),
    ]
    ratios: dict[str, list[tuple[float, float]]] = {label: [] for label, *_ in conditions}
    alones: list[Played] = []
    try:
        for r in range(rounds):
            # alone and full alternate, round after round: the machine's other load drifts
            alone = {
                flag: play(f"alone-{'exclusive' if flag else 'shared'}-{r}", 2, flag, 1)
                for flag in (True, False)
            }
            alones += alone.values()
            for i, (label, exclusive, entries, workers) in enumerate(conditions):
                full = play(f"full-{i}-{r}", entries, exclusive, workers)
                base = alone[exclusive].median()
                ratios[label].append((full.median() / base, full.p90() / base))
        for label, pairs in ratios.items():
            target = " (target <= 1.10)" if label == "exclusive cores" else ""
            median = statistics.median(m for m, _ in pairs)
            p90 = statistics.median(p for _, p in pairs)
            each = ", ".join(f"{m:.3f}" for m, _ in pairs)
            print(
                f"fair timing: move time full / alone, {label}: {median:.3f}{target} "
                f"(rounds {each}); p90 / alone median {p90:.3f}"
            )
        load = os.getloadavg()
        print(f"  load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
        # alone, a move's wall time is its CPU time plus the runner's few ms: far more means
        # other processes of the machine took the core, and the ratios above measure them
        busy = max(statistics.median(a.wall_ms) / statistics.median(a.cpu_ms) for a in alones if a.cpu_ms)
        print(f"fair timing: alone, move wall / move cpu (1 on an idle machine): {busy:.2f}")
        if busy > 1.5:
            print(
                "  WARNING: this machine is busy with processes that are not the benchmark's; no pinning can"
            )
            print(
                "  keep them off an entry's core, so the ratios above say more about them than about tourney"
            )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main("--quick" in sys.argv)
