"""Permutations (seed 002 stage 2): N-player games in every one of the N! seat orders.

One match per seat order and board, holding ``games_per_order`` games in that
order; orders are enumerated lexicographically over the entrants' seed
order. More entrants than ``max_entrants`` (or than the game seats) would
mean an unreasonable number of games: the stage is then skipped with a note
and the ranking passes through unchanged.
"""

from __future__ import annotations

from itertools import permutations

from runner.config import PermutationsStage
from runner.scoring import rank_entries
from runner.stages.base import PlannedMatch
from runner.stages.common import Results, StageContext, StageOutcome, one_round_outcome


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, PermutationsStage)
    limit = min(st.max_entrants, ctx.max_players)
    if len(entrants) > limit:
        ranking = rank_entries(entrants, {}, ["seed"])
        return StageOutcome(
            matches=[],
            rounds=[],
            done=True,
            standings=[],
            ranking=ranking,
            notes=[f"{len(entrants)} entrants exceed the limit of {limit} for N! orders; stage skipped"],
            skipped=True,
        )
    boards = ctx.boards_for_round(1)
    matches: list[PlannedMatch] = []
    for order in permutations(entrants):
        for board in boards:
            orders = (tuple(order),) * st.games_per_order
            matches.append(PlannedMatch(st.name, 1, "", len(matches), tuple(entrants), board, orders))
    return one_round_outcome(ctx, entrants, matches, results)
