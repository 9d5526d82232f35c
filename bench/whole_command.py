"""fastchess's speed as a user runs it (issue 35, item 8): the whole ``tourney run`` command on a
default config against the whole fastchess command, in rounds that alternate which goes first.

Both play stockfish against itself at 2,000 nodes a move, 20 games (10 openings, each twice with
colours swapped), 2 at once. Tourney's side is the command a user types, ``tourney run
CONFIG`` (the venv's ``tourney`` script; ``--run-dir`` only to keep the run in a scratch
directory), on a config that sets only what the games need: the game, two entries, the nodes,
the book, a round robin of 2 games an opening. Everything else is the default: the sandbox,
``openings.per_match: auto`` (here 2 matches of 5 openings' pairs, the engines kept across
each match's 10 games), the local workers (one per core), the embedded Redis, the
engine probe before the run, the report and the PGN at its end. fastchess's side is its
command line for the same games (``-concurrency 2``, ``-pgnout``). Each side is timed from
its command's start to its exit, and its process tree's CPU is read from ``/proc`` as it
runs (``bench/tree_cpu.py``: every process the command starts, engines included).

Printed, medians over the rounds (each round's ratio from its own pair of runs):

* ``engine plies per second, whole command, default config, tourney / fastchess: R``
  (target >= 0.9);
* ``tourney's own CPU a ply / fastchess's own: R``: the CPU of everything each command ran
  (its own processes and its engines), a ply (target <= 1.2: the machine's other jobs get
  what a command does not use, so a command that needs more CPU a ply falls behind when the
  machine is shared); and, to say where it goes, each side's CPU a ply outside its engines.

Fixed nodes with one thread play the same game whoever drives the engines: the two sides'
ply counts must agree, and the line that prints them says when they do not.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from bench.bare_uci import EngineLimit
from bench.e2e_bench import run_timing
from bench.engine_bench import (
    ENGINE_COMMS,
    book_line,
    book_lines,
    chess_known,
    count_pgn,
    find_fastchess,
    find_stockfish,
    opening_fens,
    play_fastchess,
    stockfish_entries,
)
from bench.tree_cpu import TreeCpu, run_measured

NODES = 2000
GAMES = 20
ROUNDS, ROUNDS_QUICK = 5, 1
TARGET_RATE, TARGET_CPU = 0.9, 1.2


@dataclass(frozen=True)
class Command:
    """One side's whole command: its wall seconds, the plies it played, its tree's CPU."""

    wall_s: float
    plies: int
    games: int
    cpu: TreeCpu
    #: tourney: seconds from the command's start to its first match's, and from its last
    #: match's end to its exit (the run store's times)
    before_first_s: float | None = None
    after_last_s: float | None = None

    @property
    def rate(self) -> float:
        return self.plies / self.wall_s

    def cpu_ms_a_ply(self, engines: bool | None = None) -> float:
        """CPU of every process a ply (None), of its engines (True), of the rest (False)."""
        engine = self.cpu.of(*ENGINE_COMMS)
        total = {None: self.cpu.total_s, True: engine, False: self.cpu.total_s - engine}[engines]
        return 1000.0 * total / max(1, self.plies)


def tourney_program() -> list[str]:
    """The ``tourney`` a user runs: the venv's script beside this Python, else ``-m runner.cli``."""
    script = Path(sys.executable).with_name("tourney")
    return [str(script)] if script.exists() else [sys.executable, "-m", "runner.cli"]


def default_config(tmp: Path, stockfish: str, fens: Sequence[str], per_match: int | None = None) -> Path:
    """A config with only what the games need (module doc); the rest is tourney's default.
    ``per_match``: ``openings.per_match`` (not the default config: what K openings a match give)."""
    entries = stockfish_entries(tmp, stockfish)
    book = tmp / "book.epd"
    book.write_text("".join(book_line(fen) + "\n" for fen in fens))
    config = {
        "name": "whole-command",
        "game": "chess",
        "each": {"nodes": NODES},
        "openings": {"file": str(book), "order": "sequential"}
        | ({"per_match": per_match} if per_match else {}),
        "entries": entries,
        "stages": [
            {"name": "games", "planner": "round_robin", "games_per_pairing": 2, "boards": ["openings"]}
        ],
    }
    path = tmp / "whole-command.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def run_tourney(config: Path, tmp: Path, tree: Path | None = None) -> Command:
    """``tourney run CONFIG``; ``tree``: another source tree's tourney instead (``--before``)."""
    from runner.storage.store import RunStore

    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=tmp)) / "run"
    env = None
    program = tourney_program()
    if tree is not None:
        env = dict(os.environ, PYTHONPATH=str(tree) + os.pathsep + os.environ.get("PYTHONPATH", ""))
        program = [sys.executable, "-m", "runner.cli"]
    argv = [*program, "run", str(config), "--run-dir", str(run_dir)]
    launched = time.time()
    done, cpu = run_measured(argv, cwd=tmp, timeout=3600, env=env)
    exited = time.time()
    wall = exited - launched
    if done.returncode != 0:
        raise RuntimeError(f"tourney run failed ({done.returncode}): {done.stderr[-2000:]}")
    games = plies = 0
    with RunStore.open(run_dir) as store:
        for row in store.match_rows():
            for game in row.result.games if row.result is not None else []:
                games += 1
                plies += len(game.moves)
    if not (run_dir / "report.html").exists():
        raise RuntimeError(f"tourney run wrote no report in {run_dir}")
    timing = run_timing(run_dir, launched, exited)
    return Command(wall, plies, games, cpu, timing.first_started - launched, exited - timing.last_finished)


def run_fastchess(fastchess: str, stockfish: str, fens: Sequence[str], tmp: Path) -> Command:
    ran = play_fastchess(fastchess, stockfish, fens, GAMES, EngineLimit(nodes=NODES), tmp)
    games, plies, _ = count_pgn(ran.pgn)
    return Command(ran.wall_s, plies, games, ran.cpu)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _rounds(values: Sequence[float]) -> str:
    return ", ".join(f"{v:.2f}" for v in values)


def main(
    quick: bool = False, rounds: int | None = None, before: Path | None = None, per_match: int | None = None
) -> None:
    stockfish, fastchess = find_stockfish(), find_fastchess()
    if stockfish is None or fastchess is None or not chess_known():
        missing = (
            "stockfish"
            if stockfish is None
            else "fastchess (FASTCHESS=path)"
            if fastchess is None
            else "game: chess"
        )
        print(f"whole command bench skipped: {missing} is not here")
        return
    rounds = rounds or (ROUNDS_QUICK if quick else ROUNDS)
    source, epd = book_lines()
    fens = opening_fens(epd)[: GAMES // 2]
    print(
        f"whole command: {stockfish} vs itself, {NODES} nodes a move, {GAMES} games, 2 at once, openings "
        f"from {source}; `tourney run CONFIG` on a default config against fastchess, {rounds} round(s) "
        f"alternating; {os.cpu_count()} cores, load average {_load()}",
        flush=True,
    )
    tmp = Path(tempfile.mkdtemp(prefix="tourney-whole-command-"))
    sides: dict[str, list[Command]] = {"tourney": [], "fastchess": []}
    sides |= {"before": []} if before is not None else {}
    try:
        config = default_config(tmp, stockfish, fens, per_match)
        if per_match:
            print(f"  NOT the default config: openings.per_match {per_match}")
        for r in range(rounds):
            order = list(sides)  # rotated each round: outside load hits every side alike
            for side in order[r % len(order) :] + order[: r % len(order)]:
                load = _load()
                if side == "fastchess":
                    ran = run_fastchess(fastchess, stockfish, fens, tmp)
                else:
                    ran = run_tourney(config, tmp, before if side == "before" else None)
                sides[side].append(ran)
                phases = ""
                if ran.before_first_s is not None and ran.after_last_s is not None:
                    phases = f" ({ran.before_first_s:.2f} s to its first match, "
                    phases += f"{ran.after_last_s:.2f} s after its last)"
                print(
                    f"  round {r + 1}, {side}: {ran.games} games, {ran.plies} plies in "
                    f"{ran.wall_s:.2f} s{phases} "
                    f"({ran.rate:.1f} plies/s); CPU a ply {ran.cpu_ms_a_ply():.2f} ms, of which the engines "
                    f"{ran.cpu_ms_a_ply(True):.2f}; load {load} -> {_load()}",
                    flush=True,
                )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    pairs = list(zip(sides["tourney"], sides["fastchess"], strict=True))
    plies = {c.plies for c in sides["tourney"] + sides["fastchess"]}
    if len(plies) != 1:
        print(f"  NOT the same games: plies {sorted(plies)}")
    rates = [t.rate / f.rate for t, f in pairs]
    cpus = [t.cpu_ms_a_ply() / f.cpu_ms_a_ply() for t, f in pairs]
    own = {side: statistics.median(c.cpu_ms_a_ply(False) for c in runs) for side, runs in sides.items()}
    walls = {side: statistics.median(c.wall_s for c in runs) for side, runs in sides.items()}
    print(
        f"  wall, tourney / fastchess: {walls['tourney']:.2f} / {walls['fastchess']:.2f} s; "
        f"CPU a ply outside the engines: tourney {own['tourney']:.2f} ms, fastchess {own['fastchess']:.2f} ms"
    )
    if "before" in sides:
        after = [t.rate / b.rate for t, b in zip(sides["tourney"], sides["before"], strict=True)]
        cpu_after = [
            t.cpu_ms_a_ply() / b.cpu_ms_a_ply()
            for t, b in zip(sides["tourney"], sides["before"], strict=True)
        ]
        print(
            f"  tourney / tourney before ({before}): plies per second {statistics.median(after):.2f} (rounds "
            f"{_rounds(after)}), CPU a ply {statistics.median(cpu_after):.2f} (rounds {_rounds(cpu_after)})"
        )
    print(
        f"engine plies per second, whole command, default config, tourney / fastchess: "
        f"{statistics.median(rates):.2f} (rounds {_rounds(rates)}; target >= {TARGET_RATE})",
        flush=True,
    )
    print(
        f"tourney's own CPU a ply / fastchess's own: {statistics.median(cpus):.2f} (rounds {_rounds(cpus)}; "
        f"every process of each command, engines included; target <= {TARGET_CPU}); load average {_load()}",
        flush=True,
    )


if __name__ == "__main__":
    cli = argparse.ArgumentParser(prog="python -m bench.whole_command", description=__doc__)
    cli.add_argument("--quick", action="store_true", help=f"{ROUNDS_QUICK} round")
    cli.add_argument("--rounds", type=int, help=f"rounds (default {ROUNDS})")
    cli.add_argument("--before", type=Path, metavar="TREE", help="also run another source tree's tourney")
    cli.add_argument("--per-match", type=int, metavar="K", help="openings.per_match K (not the default)")
    args = cli.parse_args()
    main(args.quick, args.rounds, args.before, args.per_match)
