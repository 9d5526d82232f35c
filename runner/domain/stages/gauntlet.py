"""Gauntlet: every entrant plays each of the stage's opponents (seed programs).

One match per (entrant, opponent, board) with ``games_per_pairing`` games,
the entrant first in the first game, then alternating. Only entrants are
ranked, by the stage's ``rank_by`` over their own games.
"""

from __future__ import annotations

from runner.domain.match_values import MatchPlan
from runner.domain.stage_models import GauntletStage, SeedingStage
from runner.domain.stages.common import (
    Results,
    StageContext,
    StageOutcome,
    one_round_outcome,
    two_player_orders,
)


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, GauntletStage | SeedingStage)
    opponents = list(st.opponents) if st.opponents is not None else list(ctx.opponents)
    boards = ctx.boards_for_round(1)
    matches: list[MatchPlan] = []
    pairing = 0
    for e in entrants:
        for o in opponents:
            for board in boards:
                orders = two_player_orders(e, o, st.games_per_pairing)
                matches.append(MatchPlan(st.name, 1, "", pairing, (e, o), board, orders))
                pairing += 1
    return one_round_outcome(ctx, entrants, matches, results)
