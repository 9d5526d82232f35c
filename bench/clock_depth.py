"""Depth at equal clock against fastchess (issue 35, item 2): does a clock buy the engine the
same search under tourney as under fastchess?

Stockfish against itself at ``tc 1+0.01`` (the engine bench's time-loss clock), 2 games at
once, the same openings, played by ``tourney run`` (sandbox on, the engine bench's config:
engines kept for a worker's matches as fastchess keeps them) and by fastchess, in rounds that
alternate which side goes first (outside load hits both alike). Each side's moves give:

* the mean depth of the search the engine reported with its move (tourney: the move's
  ``search.depth``; fastchess: its PGN comment ``{score/depth time}``), over every move, and
  over each game's first ``EARLY_MOVES`` moves after the book (the same openings: positions
  alike on both sides, so less of the games' own content in the figure);
* the mean time a move was charged (the clock's own measure);
* how much of its thinking time the engines had a CPU for: their CPU (read from ``/proc``
  for the whole run) over the sum of their moves' charged times. A driver that takes CPU
  from its engines, or charges time they did not have, lowers it.

Printed: each round's figures and ``depth at tc 1+0.01 (first 20 moves of each game),
tourney / fastchess: T / F, difference D`` (medians over rounds; target: D >= -0.5), with the
load average before and after. The headline is over each game's first moves: the mean over
every move swings by two plies or more between two rounds of the same side (fastchess 9.75
and 12.90 in one run), as one long endgame, searched 20 plies deep, weighs in it. Skipped, with a line, where
stockfish or fastchess (``FASTCHESS=path``) is missing.
"""

from __future__ import annotations

import argparse
import io
import os
import re
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import chess.pgn

from bench.bare_uci import EngineLimit, GamePlan
from bench.engine_bench import (
    ENGINE_COMMS,
    ROOT,
    TIME_CONTROL,
    TIME_FORFEIT,
    book_lines,
    chess_known,
    find_fastchess,
    find_stockfish,
    opening_fens,
    plan_games,
    play_fastchess,
    tourney_config,
)
from bench.tree_cpu import run_measured

GAMES, GAMES_QUICK = 20, 10
ROUNDS, ROUNDS_QUICK = 3, 1
#: a game's first moves after the book: positions alike on both sides
EARLY_MOVES = 20
#: the target: tourney's depth at most this far below fastchess's
TARGET_PLY = 0.5
#: fastchess's move comment: ``+0.31/9 0.045s`` (score/depth, then the move's time)
_COMMENT = re.compile(r"/(\d+) (\d+(?:\.\d+)?)s")


@dataclass(frozen=True)
class Searched:
    """One side's round: the reported depth and charged time of every move, game by game."""

    games: list[list[tuple[int | None, float]]]  # per game, per move: (depth, charged ms)
    engine_cpu_s: float
    time_losses: int
    wall_s: float

    def depth(self, early: bool = False) -> float:
        depths = [d for g in self.games for d, _ in (g[:EARLY_MOVES] if early else g) if d is not None]
        return statistics.mean(depths) if depths else float("nan")

    @property
    def moves(self) -> int:
        return sum(len(g) for g in self.games)

    @property
    def move_ms(self) -> float:
        return statistics.mean(ms for g in self.games for _, ms in g)

    @property
    def cpu_share(self) -> float:
        """The engines' CPU over their moves' charged time."""
        thinking_s = sum(ms for g in self.games for _, ms in g) / 1000.0
        return self.engine_cpu_s / thinking_s if thinking_s else float("nan")


def run_fastchess_side(
    fastchess: str, stockfish: str, fens: Sequence[str], games: int, tmp: Path
) -> Searched:
    ran = play_fastchess(fastchess, stockfish, fens, games, TIME_CONTROL, tmp)
    played: list[list[tuple[int | None, float]]] = []
    flags = 0
    stream = io.StringIO(ran.pgn)
    while (game := chess.pgn.read_game(stream)) is not None:
        moves: list[tuple[int | None, float]] = []
        for node in game.mainline():
            found = _COMMENT.search(node.comment)
            if found:  # book moves carry no comment
                moves.append((int(found.group(1)), float(found.group(2)) * 1000.0))
        played.append(moves)
        flags += game.headers.get("Termination", "") == TIME_FORFEIT
    return Searched(played, ran.cpu.of(*ENGINE_COMMS), flags, ran.wall_s)


def run_tourney_side(stockfish: str, plans: Sequence[GamePlan], sandbox: str, tmp: Path) -> Searched:
    from runner.domain.match_values import VerdictKind
    from runner.storage.store import RunStore

    config = tourney_config(tmp, stockfish, plans, TIME_CONTROL, sandbox)
    run_dir = Path(tempfile.mkdtemp(prefix="run-", dir=tmp)) / "run"
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    argv = [sys.executable, "-m", "runner.cli", "run", str(config), "--run-dir", str(run_dir)]
    argv += ["--workers", "2", "--no-progress"]
    started = time.perf_counter()
    done, cpu = run_measured(argv, cwd=tmp, env=env, timeout=3600)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"tourney run failed ({done.returncode}): {done.stderr[-2000:]}")
    played: list[list[tuple[int | None, float]]] = []
    flags = 0
    with RunStore.open(run_dir) as store:
        for row in store.match_rows():
            for game in row.result.games if row.result is not None else []:
                played.append([(m.search.depth if m.search else None, m.wall_ms) for m in game.moves])
                flags += game.verdict.kind is VerdictKind.TIMEOUT
    return Searched(played, cpu.of(*ENGINE_COMMS), flags, wall)


def _describe(name: str, s: Searched) -> str:
    return (
        f"{name}: {len(s.games)} games, {s.moves} moves, depth {s.depth():.2f} "
        f"(first {EARLY_MOVES} moves {s.depth(early=True):.2f}), {s.move_ms:.1f} ms a move, "
        f"engines' CPU {s.cpu_share:.2f} of their thinking time, {s.time_losses} lost on time"
    )


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def main(quick: bool = False, games: int | None = None, rounds: int | None = None) -> None:
    stockfish, fastchess = find_stockfish(), find_fastchess()
    if stockfish is None or fastchess is None or not chess_known():
        missing = (
            "stockfish"
            if stockfish is None
            else "fastchess (FASTCHESS=path)"
            if fastchess is None
            else "game: chess"
        )
        print(f"clock depth bench skipped: {missing} is not here")
        return
    from bench.throughput_bench import _sandbox

    sandbox = _sandbox()
    games = games or (GAMES_QUICK if quick else GAMES)
    rounds = rounds or (ROUNDS_QUICK if quick else ROUNDS)
    source, epd = book_lines()
    fens = opening_fens(epd)
    plans = plan_games(fens, games)
    limit: EngineLimit = TIME_CONTROL
    print(
        f"clock depth: {stockfish} vs itself at tc {limit.tc()}, {len(plans)} games a side a round, "
        f"2 at once, openings from {source}, sandbox {sandbox}, {rounds} round(s) alternating; "
        f"{os.cpu_count()} cores, load average {_load()}",
        flush=True,
    )
    tmp = Path(tempfile.mkdtemp(prefix="tourney-clock-depth-"))
    results: dict[str, list[Searched]] = {"tourney": [], "fastchess": []}
    try:
        for r in range(rounds):
            order = ["tourney", "fastchess"] if r % 2 == 0 else ["fastchess", "tourney"]
            for side in order:
                before = _load()
                if side == "tourney":
                    searched = run_tourney_side(stockfish, plans, sandbox, tmp)
                else:
                    searched = run_fastchess_side(fastchess, stockfish, fens, len(plans), tmp)
                results[side].append(searched)
                print(f"  round {r + 1}, {_describe(side, searched)}; load {before} -> {_load()}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    pairs = list(zip(results["tourney"], results["fastchess"], strict=True))
    early = [t.depth(early=True) - f.depth(early=True) for t, f in pairs]
    whole = [t.depth() - f.depth() for t, f in pairs]
    shares = [t.cpu_share / f.cpu_share for t, f in pairs]
    times = [t.move_ms / f.move_ms for t, f in pairs]
    t_depth = statistics.median(t.depth(early=True) for t in results["tourney"])
    f_depth = statistics.median(f.depth(early=True) for f in results["fastchess"])
    print(
        f"  every move's depth, tourney - fastchess: {statistics.median(whole):+.2f} "
        f"(rounds {', '.join(f'{d:+.2f}' for d in whole)}; the games' own lengths and endgames in it)"
    )
    print(
        f"  time a move, tourney / fastchess: {statistics.median(times):.2f}; engines' CPU share of "
        f"their thinking time, tourney / fastchess: {statistics.median(shares):.2f} "
        f"(rounds {', '.join(f'{x:.2f}' for x in shares)})"
    )
    print(
        f"depth at tc {limit.tc()} (first {EARLY_MOVES} moves of each game), tourney / fastchess: "
        f"{t_depth:.2f} / {f_depth:.2f}, difference {statistics.median(early):+.2f} (rounds "
        f"{', '.join(f'{d:+.2f}' for d in early)}; target >= -{TARGET_PLY}); load average {_load()}",
        flush=True,
    )


if __name__ == "__main__":
    cli = argparse.ArgumentParser(prog="python -m bench.clock_depth", description=__doc__)
    cli.add_argument("--quick", action="store_true", help=f"{GAMES_QUICK} games, {ROUNDS_QUICK} round")
    cli.add_argument("--games", type=int, help=f"games a side a round (default {GAMES})")
    cli.add_argument("--rounds", type=int, help=f"rounds (default {ROUNDS})")
    args = cli.parse_args()
    main(args.quick, args.games, args.rounds)
