"""Round robin: every pair of entrants plays on every board of the stage.

One match per pair and board (the unit a worker plays and a rerun repeats),
with ``games_per_pairing`` games: the better seed first in the first game,
then alternating, so every entry moves first in exactly half of its games.
All matches exist at once (one round). Seed 000's final, seed 002's stage 1
and both ICFP'98 phases are round robins with different boards and tables.
"""

from __future__ import annotations

from itertools import combinations

from runner.config import RoundRobinStage
from runner.domain.contracts import MatchPlan
from runner.domain.stages.common import (
    Results,
    StageContext,
    StageOutcome,
    one_round_outcome,
    two_player_orders,
)


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, RoundRobinStage)
    boards = ctx.boards_for_round(1)
    matches: list[MatchPlan] = []
    for a, b in combinations(entrants, 2):
        for board in boards:
            orders = two_player_orders(a, b, st.games_per_pairing)
            matches.append(MatchPlan(st.name, 1, "", len(matches), (a, b), board, orders))
    return one_round_outcome(ctx, entrants, matches, results)
