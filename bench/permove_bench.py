"""The cost of a move inside a match (issue 13, item 1): milliseconds per move when
``workers.executor.execute_match`` plays whole matches in this process, against a bare
script that plays the same games with the same referee by ``subprocess.run``.

The e2e bench (``bench/e2e_bench.py``) compares whole runs; this one takes the broker,
the store and the report away and looks at the referee loop alone: the same native
entry (``entries/mnk/greedy``, one variant per seed) on the e2e board, each pairing a
two-game match (each side first once), played by the executor with each sandbox
(``bwrap`` when available here, and ``none``) and by the bare loop, in rounds whose
order rotates (outside load hits every side alike). Builds happen once, before the clock.

Printed per sandbox: ``ms per move in a match`` (wall of the matches / moves) and the
bare script's, and their ratio ``per-move ratio (match / bare script)``; ``--profile``
also prints a cProfile of the matches (sandbox given by ``--sandbox``).

Run: ``.venv/bin/python -m bench.permove_bench [--quick] [--profile] [--sandbox none]``.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import os
import pstats
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from runner.domain.entries import EntrySpec, load_entry
from runner.domain.games import get_game
from runner.domain.match_values import Limits, MatchSpec, stable_id
from workers.artifacts import local_fetch
from workers.executor import execute_match

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "entries" / "mnk" / "greedy"
BOARD = "9 9 5"
LIMITS = Limits(move_wall_s=2.0)


def _variants() -> list[EntrySpec]:
    return [s for s in load_entry(ENTRY) if s.name != "greedy"]


def _specs(sandbox: str, variants: list[EntrySpec], repeats: int) -> list[MatchSpec]:
    specs = []
    for rep, (a, b) in itertools.product(range(repeats), itertools.combinations(variants, 2)):
        refs = {a.name: a.ref(), b.name: b.ref()}
        specs.append(
            MatchSpec.of(
                match_id=stable_id("permove", sandbox, a.name, b.name, rep),
                game="mnk",
                board_id=stable_id(BOARD),
                board_text=BOARD,
                orders=[[a.name, b.name], [b.name, a.name]],
                entries=refs,
                limits=LIMITS,
                seed=13,
                sandbox=sandbox,
                stage="permove",
            )
        )
    return specs


def _own_cpu_s() -> float:
    """CPU time of this process alone (the referee's; not the entries', which are children)."""
    t = os.times()
    return t.user + t.system


def _matches(specs: list[MatchSpec], cache_root: Path, variants: list[EntrySpec]) -> tuple[float, float, int]:
    """Wall seconds, this process's CPU seconds and moves of playing ``specs`` with the
    executor in this process."""
    fetch = local_fetch({v.digest: v.path for v in variants})
    moves = 0
    c0, t0 = _own_cpu_s(), time.perf_counter()
    for spec in specs:
        result = execute_match(spec, fetch, cache_root, worker="permove")
        for game in result.games:
            if game.verdict.kind.value != "normal":
                raise RuntimeError(f"{spec.match_id}: {game.verdict}")
            moves += len(game.moves)
    return time.perf_counter() - t0, _own_cpu_s() - c0, moves


def _bare(specs: list[MatchSpec], build: Path, variants: list[EntrySpec]) -> tuple[float, float, int]:
    """The same games, each move a ``subprocess.run`` of the built entry (no sandbox)."""
    args = {v.name: v.ref().args for v in variants}
    game = get_game("mnk")
    moves = 0
    c0, t0 = _own_cpu_s(), time.perf_counter()
    for spec in specs:
        for order in spec.orders:
            state = game.new_game(BOARD, 2)
            history: list[str] = []
            while game.outcome(state) is None:
                seat = game.to_move(state)
                stdin = "\n".join([BOARD, *history]) + "\n"
                out = subprocess.run(
                    ["./a.out", *args[order[seat]]],
                    input=stdin.encode(),
                    cwd=build,
                    capture_output=True,
                    check=True,
                )
                move = game.parse_move(out.stdout.decode().strip())
                state = game.play(state, move)
                history.append(game.format_move(move))
            moves += len(history)
    return time.perf_counter() - t0, _own_cpu_s() - c0, moves


def _profile(sandbox: str, specs: list[MatchSpec], cache_root: Path, variants: list[EntrySpec]) -> None:
    prof = cProfile.Profile(time.process_time)  # CPU: what the referee itself costs the machine
    prof.enable()
    wall, _, moves = _matches(specs, cache_root, variants)
    prof.disable()
    print(f"profile, sandbox {sandbox}: {1000 * wall / moves:.3f} ms per move ({moves} moves)")
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.sort_stats("cumulative").print_stats(45)
    stats.sort_stats("tottime").print_stats(30)
    print(out.getvalue())


def main(argv: list[str] | None = None) -> None:
    from bench.throughput_bench import _sandbox

    parser = argparse.ArgumentParser(allow_abbrev=False, prog="bench.permove_bench")
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--profile", action="store_true", help="print a cProfile of the matches")
    parser.add_argument("--sandbox", help="only this sandbox (bwrap or none)")
    parser.add_argument("--rounds", type=int)
    parser.add_argument("--repeats", type=int, help="each pairing's match this many times")
    args = parser.parse_args(argv)
    sandboxes = [args.sandbox] if args.sandbox else list(dict.fromkeys([_sandbox(), "none"]))
    rounds = args.rounds or (1 if args.quick else 3)
    repeats = args.repeats or (1 if args.quick else 4)
    variants = _variants()
    tmp = Path(tempfile.mkdtemp(prefix="tourney-permove-"))
    try:
        build = tmp / "bare"
        shutil.copytree(ENTRY, build)
        subprocess.run(["cc", "-O2", "-o", "a.out", "main.c"], cwd=build, check=True)
        specs = {s: _specs(s, variants, repeats) for s in sandboxes}
        caches = {s: tmp / f"cache-{s}" for s in sandboxes}
        for s in sandboxes:  # build once per sandbox, and warm a reused sandbox pool
            _matches(specs[s][:1], caches[s], variants)
        if args.profile:
            for s in sandboxes:
                _profile(s, specs[s], caches[s], variants)
            return
        sides = [*sandboxes, "bare"]
        ms: dict[str, list[float]] = {side: [] for side in sides}
        cpu: dict[str, list[float]] = {side: [] for side in sides}
        ratios: dict[str, list[float]] = {s: [] for s in sandboxes}
        counts: dict[str, int] = {}
        load = os.getloadavg()
        print(
            f"per move in a match: {len(variants)} greedy mnk variants ({BOARD}), {len(specs[sides[0]])} "
            f"two-game matches per side, {rounds} round(s); load average {load[0]:.2f}"
        )
        for r in range(rounds):
            now: dict[str, float] = {}
            for side in sides[r % len(sides) :] + sides[: r % len(sides)]:
                if side == "bare":
                    wall, own, counts[side] = _bare(specs[sides[0]], build, variants)
                else:
                    wall, own, counts[side] = _matches(specs[side], caches[side], variants)
                now[side] = 1000 * wall / counts[side]
                ms[side].append(now[side])
                cpu[side].append(1000 * own / counts[side])
            for s in sandboxes:
                ratios[s].append(now[s] / now["bare"])
        med = statistics.median
        print(
            f"  bare script: {med(ms['bare']):.3f} ms per move, its own CPU {med(cpu['bare']):.3f} ms "
            f"per move ({counts['bare']} moves)"
        )
        for s in sandboxes:
            print(
                f"  sandbox {s}: {med(ms[s]):.3f} ms per move in a match, the referee's own CPU "
                f"{med(cpu[s]):.3f} ms per move ({counts[s]} moves)"
            )
        for s in sandboxes:
            shown = ", ".join(f"{x:.2f}" for x in ratios[s])
            print(f"  sandbox {s}: per-move ratio (match / bare script): {med(ratios[s]):.2f} ({shown})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
