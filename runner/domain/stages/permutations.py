"""Permutations (seed 002 stage 2): N-player games in every one of the N! seat orders.

Seed 002: "If there are N entries left at this stage, I will run a game that
allows all N to play in sequence. In fact, I will run N! (N factorial) such
games so that every possible order of play is accounted for."

One match per seat order and board, holding ``games_per_order`` games in that
order; orders are enumerated lexicographically over the entrants' seed
order. While N is at most ``max_entrants`` (default 6: 720 orders) every
one of the N! orders is played, and a note says how many.

Beyond that, N! is out of reach (9! = 362,880 games per board), so the stage
plays a balanced design instead, never skipping silently: a Williams design
(a balanced Latin square), whose orders put every entry in every seat
equally often and, for each pair of entries, each directly after the other
equally often (who moves after whom matters in a multi-player game). It
takes N orders for an even N and 2N for an odd N (the square and its mirror
image). A note names the design and its size.

Only when N exceeds what the game seats in one game can the stage not play
at all; it is then skipped with a note, and ``tourney validate`` warns
beforehand that the tie could stay unbroken.
"""

from __future__ import annotations

import math
from itertools import permutations

from runner.domain.match_values import MatchPlan
from runner.domain.scoring import rank_entries
from runner.domain.stage_models import PermutationsStage
from runner.domain.stages.common import Results, StageContext, StageOutcome, one_round_outcome


def williams_orders(n: int) -> list[tuple[int, ...]]:
    """A Williams design over seats 0..n-1: each index in each position equally often, and each
    ordered pair (a directly before b) equally often; n orders for an even n, 2n for an odd n."""
    if n == 1:
        return [(0,)]
    first = [0]
    lo, hi = 1, n - 1
    while len(first) < n:
        first.append(lo)
        lo += 1
        if len(first) < n:
            first.append(hi)
            hi -= 1
    rows = [tuple((x + i) % n for x in first) for i in range(n)]
    if n % 2:
        rows += [tuple(reversed(r)) for r in rows]
    return rows


def seat_orders(entrants: list[str], all_orders_up_to: int) -> tuple[list[tuple[str, ...]], str]:
    """The seat orders the stage plays, and a note saying which design and how many."""
    n = len(entrants)
    if n <= all_orders_up_to:
        return list(permutations(entrants)), f"all {n}! = {math.factorial(n)} seat orders of {n} entrants"
    rows = williams_orders(n)
    orders = [tuple(entrants[i] for i in row) for row in rows]
    return orders, (
        f"{n} entrants: {n}! = {math.factorial(n)} orders is beyond max_entrants={all_orders_up_to}; "
        f"playing a balanced Williams design of {len(orders)} orders instead (every entry in every "
        f"seat {len(orders) // n} time(s), and directly after every other entry equally often)"
    )


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, PermutationsStage)
    if len(entrants) > ctx.max_players:
        ranking = rank_entries(entrants, {}, ["seed"])
        return StageOutcome(
            matches=[],
            rounds=[],
            done=True,
            standings=[],
            ranking=ranking,
            notes=[
                f"{len(entrants)} entrants exceed the {ctx.max_players} players a game can seat; "
                "stage skipped, the tie stays"
            ],
            skipped=True,
        )
    orders, note = seat_orders(entrants, st.max_entrants)
    boards = ctx.boards_for_round(1)
    matches: list[MatchPlan] = []
    for order in orders:
        for board in boards:
            games = (tuple(order),) * st.games_per_order
            matches.append(MatchPlan(st.name, 1, "", len(matches), tuple(entrants), board, games))
    out = one_round_outcome(ctx, entrants, matches, results)
    out.notes.append(note)
    return out
