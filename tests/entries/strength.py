"""Play the sample entries against each other and print who beats whom.

    .venv/bin/python -m tests.entries.strength [--games 20] [--game boxing ...]

Not part of the test suite (it takes minutes): it checks that each stronger
sample entry beats the next weaker one in at least 70% of the games, seats
alternated (boxing: sprague > greedy > random; pousse: searcher > greedy >
random; mnk: lookahead > greedy > random; gomoku: threats > randomish). Entries that accept ``--seed`` get
a different seed every game, so that deterministic players still meet in
different games.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

from runner.games import get_game
from tests.entries.harness import (
    GameResult,
    Player,
    play_boxing,
    play_gomocup,
    play_mnk,
    play_pousse,
    players,
    with_args,
)

SEEDED = {"random", "greedy", "randomish"}  # base entries that take --seed N


@dataclass(frozen=True)
class Pairing:
    game: str  # entry folder: boxing, pousse, mnk, gomoku
    strong: str  # entry or variant name
    weak: str
    board: str  # what the row says about the board
    play: Callable[[Sequence[Player], int], GameResult]  # (seats, game index) -> result
    strong_args: tuple[str, ...] = ()


def boxing_board(index: int) -> str:
    rng = random.Random(1994 + index)
    return get_game("boxing").generate_board(rng, blocked=rng.randint(0, 20))


PAIRINGS = [
    Pairing(
        "boxing", "sprague", "greedy", "32x16, 0-20 random o", lambda s, i: play_boxing(s, boxing_board(i))
    ),
    Pairing(
        "boxing", "greedy", "random", "32x16, 0-20 random o", lambda s, i: play_boxing(s, boxing_board(i))
    ),
    Pairing(
        "pousse",
        "searcher",
        "greedy",
        "6x6, searcher 100 ms",
        lambda s, i: play_pousse(s, 6),
        ("--budget-ms", "100"),
    ),
    Pairing("pousse", "greedy", "random", "6x6", lambda s, i: play_pousse(s, 6)),
    Pairing("mnk", "lookahead", "greedy", "7x7 K=4", lambda s, i: play_mnk(s, 7, 7, 4)),
    Pairing("mnk", "greedy", "random", "7x7 K=4", lambda s, i: play_mnk(s, 7, 7, 4)),
    Pairing("mnk", "lookahead", "greedy", "10x10 K=5", lambda s, i: play_mnk(s, 10, 10, 5)),
    Pairing("mnk", "greedy", "random", "10x10 K=5", lambda s, i: play_mnk(s, 10, 10, 5)),
    Pairing("gomoku", "threats", "randomish", "15x15 five", lambda s, i: play_gomocup(s, 15, 5)),
]

# How the variants of one program compare (--variants): no threshold applies.
VARIANT_PAIRINGS = [
    Pairing(
        "boxing",
        "sprague",
        "sprague-l1",
        "32x16, 0-20 random o",
        lambda s, i: play_boxing(s, boxing_board(i)),
    ),
    Pairing(
        "boxing",
        "sprague",
        "sprague-fast",
        "32x16, 0-20 random o",
        lambda s, i: play_boxing(s, boxing_board(i)),
    ),
    Pairing("pousse", "searcher-fast", "searcher-d2", "6x6", lambda s, i: play_pousse(s, 6)),
    Pairing("mnk", "lookahead", "lookahead-f2", "10x10 K=5", lambda s, i: play_mnk(s, 10, 10, 5)),
    Pairing("mnk", "lookahead", "lookahead-scan", "10x10 K=5", lambda s, i: play_mnk(s, 10, 10, 5)),
    Pairing("mnk", "lookahead-f2", "lookahead-f1", "10x10 K=5", lambda s, i: play_mnk(s, 10, 10, 5)),
]


def seeded(player: Player, base: str, index: int) -> Player:
    return with_args(player, "--seed", str(index)) if base in SEEDED else player


def run_pairing(p: Pairing, roster: dict[str, Player], games: int, pool: ThreadPoolExecutor) -> str:
    strong = with_args(roster[p.strong], *p.strong_args)

    def one(i: int) -> tuple[int, GameResult]:
        s = seeded(strong, p.strong, 1000 + i)
        w = seeded(roster[p.weak], p.weak, i)
        seats = (s, w) if i % 2 == 0 else (w, s)
        result = p.play(seats, i)
        strong_seat = 0 if i % 2 == 0 else 1
        return strong_seat, result

    started = time.monotonic()
    wins = losses = draws = 0
    slowest = [0.0, 0.0]
    for strong_seat, r in pool.map(one, range(games)):
        if r.winner is None:
            draws += 1
        elif r.winner == strong_seat:
            wins += 1
        else:
            losses += 1
        slowest[0] = max(slowest[0], r.max_wall_s[strong_seat])
        slowest[1] = max(slowest[1], r.max_wall_s[1 - strong_seat])
    took = time.monotonic() - started
    rate = 100.0 * wins / games
    return (
        f"| {p.game} | {p.board} | {p.strong} vs {p.weak} | {wins}-{losses}-{draws} | {rate:.0f}% "
        f"| {slowest[0] * 1000:.0f} / {slowest[1] * 1000:.0f} ms | {took:.0f} s |"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--games", type=int, default=20)
    ap.add_argument("--game", action="append", help="only these entry folders (repeatable)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--variants", action="store_true", help="compare variants of one program instead")
    args = ap.parse_args(argv)
    pool_of = VARIANT_PAIRINGS if args.variants else PAIRINGS
    wanted = [p for p in pool_of if not args.game or p.game in args.game]
    print(
        "| game | board | pairing | W-L-D (stronger first) | win rate | slowest move (strong / weak) | time |"
    )
    print("|---|---|---|---|---|---|---|")
    with (
        tempfile.TemporaryDirectory(prefix="entries-strength-") as tmp,
        ThreadPoolExecutor(args.jobs) as pool,
    ):
        rosters: dict[str, dict[str, Player]] = {}
        for p in wanted:
            if p.game not in rosters:
                rosters[p.game] = players(p.game, Path(tmp))
            print(run_pairing(p, rosters[p.game], args.games, pool), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
