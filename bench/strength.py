"""Play the sample entries against each other and print who beats whom (the README's table).

    .venv/bin/python -m bench.strength [--games 20] [--game boxing ...] [--sandbox bwrap|none]

Not part of the test suite (it takes minutes). Every game is one match played
by ``workers.executor.execute_match``, the same function a worker runs: the
entries are packed and built through the artifact cache, run by the real
hosts and spoken to by the real protocol adapters (``workers.protocols``),
and judged by the referee loop. So the table measures what a tournament
would see, protocol bugs included.

It checks that each stronger sample entry beats the next weaker one in at
least 70% of the games, seats alternated (boxing: sprague > greedy > random;
pousse: searcher > greedy > random; mnk: lookahead > greedy > random; gomoku:
threats > randomish). Entries that accept ``--seed`` get a different seed
every game, so that deterministic players still meet in different games.
A game an entry forfeits (a verdict other than ``normal``) counts for the
other side and is listed in the last column.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

from runner.domain.entries import load_entry
from runner.domain.games import get_game
from runner.domain.match_values import EntryRef, GameRecord, Limits, MatchSpec, VerdictKind, stable_id
from runner.domain.wire import to_builtins
from workers.artifacts import local_fetch
from workers.executor import execute_match

REPO = Path(__file__).resolve().parents[1]
ENTRIES = REPO / "entries"
#: generous: the table is about strength, not speed (the searchers budget their own time)
STRENGTH_LIMITS = Limits(move_wall_s=10.0)
SEEDED = {"random", "greedy", "randomish"}  # base entries that take --seed N


@dataclass(frozen=True)
class Contestant:
    """One entry or variant as a match needs it: its ref, and the directory its artifact is packed from."""

    ref: EntryRef
    path: Path

    @property
    def name(self) -> str:
        return self.ref.name

    def with_args(self, *args: str) -> Contestant:
        return replace(self, ref=replace(self.ref, args=[*self.ref.args, *args]))


def entry_dirs(folder: str) -> list[Path]:
    return sorted(p for p in (ENTRIES / folder).iterdir() if (p / "entry.yaml").is_file())


def roster(folder: str) -> dict[str, Contestant]:
    """Every entry and variant under ``entries/<folder>``, by name."""
    return {
        spec.name: Contestant(spec.ref(), spec.path) for d in entry_dirs(folder) for spec in load_entry(d)
    }


def play_game(
    game: str,
    board_text: str,
    seats: Sequence[Contestant],
    *,
    cache_root: Path,
    sandbox: str = "none",
    limits: Limits = STRENGTH_LIMITS,
    seed: int = 0,
) -> GameRecord:
    """One game, seats in order (seat 0 moves first), played as a one-game match by the executor."""
    refs = {c.name: c.ref for c in seats}
    if len(refs) != len(seats):
        raise ValueError(f"two seats with one name: {[c.name for c in seats]}")
    spec = MatchSpec.of(
        match_id=stable_id("strength", game, board_text, to_builtins([c.ref for c in seats]), seed),
        game=game,
        board_id=stable_id(board_text),
        board_text=board_text,
        orders=[[c.name for c in seats]],
        entries=refs,
        limits=limits,
        seed=seed,
        sandbox=sandbox,
        stage="strength",
    )
    fetch = local_fetch({c.ref.digest: c.path for c in seats})
    (record,) = execute_match(spec, fetch, cache_root, worker="strength").games
    return record


@dataclass(frozen=True)
class Pairing:
    folder: str  # entry folder, named after its game: boxing, pousse, mnk, gomoku
    strong: str  # entry or variant name
    weak: str
    board: str  # what the row says about the board
    board_text: Callable[[int], str]  # game index -> board
    strong_args: tuple[str, ...] = ()


def boxing_board(index: int) -> str:
    rng = random.Random(1994 + index)
    return get_game("boxing").generate_board(rng, blocked=rng.randint(0, 20))


def fixed(text: str) -> Callable[[int], str]:
    return lambda _: text


PAIRINGS = [
    Pairing("boxing", "sprague", "greedy", "32x16, 0-20 random o", boxing_board),
    Pairing("boxing", "greedy", "random", "32x16, 0-20 random o", boxing_board),
    Pairing("pousse", "searcher", "greedy", "6x6, searcher 100 ms", fixed("6"), ("--budget-ms", "100")),
    Pairing("pousse", "greedy", "random", "6x6", fixed("6")),
    Pairing("mnk", "lookahead", "greedy", "7x7 K=4", fixed("7 7 4")),
    Pairing("mnk", "greedy", "random", "7x7 K=4", fixed("7 7 4")),
    Pairing("mnk", "lookahead", "greedy", "10x10 K=5", fixed("10 10 5")),
    Pairing("mnk", "greedy", "random", "10x10 K=5", fixed("10 10 5")),
    Pairing("gomoku", "threats", "randomish", "15x15 five", fixed("15 15 5")),
]

# How the variants of one program compare (--variants): no threshold applies.
VARIANT_PAIRINGS = [
    Pairing("boxing", "sprague", "sprague-l1", "32x16, 0-20 random o", boxing_board),
    Pairing("boxing", "sprague", "sprague-fast", "32x16, 0-20 random o", boxing_board),
    Pairing("pousse", "searcher-fast", "searcher-d2", "6x6", fixed("6")),
    Pairing("mnk", "lookahead", "lookahead-f2", "10x10 K=5", fixed("10 10 5")),
    Pairing("mnk", "lookahead", "lookahead-scan", "10x10 K=5", fixed("10 10 5")),
    Pairing("mnk", "lookahead-f2", "lookahead-f1", "10x10 K=5", fixed("10 10 5")),
]


def seeded(c: Contestant, base: str, index: int) -> Contestant:
    return c.with_args("--seed", str(index)) if base in SEEDED else c


def slowest_ms(record: GameRecord, player: str) -> float:
    return max((m.wall_ms for m in record.moves if m.player == player), default=0.0)


def run_pairing(
    p: Pairing,
    entries: dict[str, Contestant],
    games: int,
    pool: ThreadPoolExecutor,
    *,
    cache_root: Path,
    sandbox: str,
) -> str:
    strong = entries[p.strong].with_args(*p.strong_args)

    def one(i: int) -> GameRecord:
        s = seeded(strong, p.strong, 1000 + i)
        w = seeded(entries[p.weak], p.weak, i)
        seats = (s, w) if i % 2 == 0 else (w, s)
        return play_game(p.folder, p.board_text(i), seats, cache_root=cache_root, sandbox=sandbox, seed=i)

    started = time.monotonic()
    wins = losses = draws = 0
    slowest = [0.0, 0.0]
    forfeits: Counter[str] = Counter()
    for record in pool.map(one, range(games)):
        if record.verdict.kind is VerdictKind.SYSTEM_ERROR:
            raise RuntimeError(f"{p.strong} vs {p.weak}: the runner failed: {record.verdict.detail}")
        if record.verdict.kind is not VerdictKind.NORMAL:
            forfeits[f"{record.verdict.kind.value} ({record.verdict.player})"] += 1
        if record.winner is None:
            draws += 1
        elif record.winner == p.strong:
            wins += 1
        else:
            losses += 1
        slowest[0] = max(slowest[0], slowest_ms(record, p.strong))
        slowest[1] = max(slowest[1], slowest_ms(record, p.weak))
    took = time.monotonic() - started
    rate = 100.0 * wins / games
    faults = ", ".join(f"{n} {what}" for what, n in sorted(forfeits.items())) or "none"
    return (
        f"| {p.folder} | {p.board} | {p.strong} vs {p.weak} | {wins}-{losses}-{draws} | {rate:.0f}% "
        f"| {slowest[0]:.0f} / {slowest[1]:.0f} ms | {took:.0f} s | {faults} |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--game", action="append", help="only these entry folders (repeatable)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument(
        "--sandbox", choices=["bwrap", "none"], default="bwrap", help="the entries' host (default: bwrap)"
    )
    ap.add_argument("--variants", action="store_true", help="compare variants of one program instead")
    args = ap.parse_args(argv)
    pool_of = VARIANT_PAIRINGS if args.variants else PAIRINGS
    wanted = [p for p in pool_of if not args.game or p.folder in args.game]
    print(
        "| game | board | pairing | W-L-D (stronger first) | win rate | slowest move (strong / weak) "
        "| time | forfeits |"
    )
    print("|---|---|---|---|---|---|---|---|")
    with (
        tempfile.TemporaryDirectory(prefix="entries-strength-") as tmp,
        ThreadPoolExecutor(args.jobs) as pool,
    ):
        rosters: dict[str, dict[str, Contestant]] = {}
        for p in wanted:
            if p.folder not in rosters:
                rosters[p.folder] = roster(p.folder)
            row = run_pairing(
                p, rosters[p.folder], args.games, pool, cache_root=Path(tmp), sandbox=args.sandbox
            )
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
