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
from runner.scoring import rank_entries, tally_matches
from runner.stages.base import PlannedMatch, RoundInfo
from runner.stages.common import Results, StageContext, StageOutcome, completed, standing_rows


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
    played = [(m.players, g) for m in matches if (g := completed(results, m)) is not None]
    tallies = tally_matches(played, st.scoring, entrants)
    ranking = rank_entries(entrants, tallies, st.rank_by)
    return StageOutcome(
        matches=matches,
        rounds=[RoundInfo(1, "", tuple(m.match_id for m in matches), board_id=",".join(boards))],
        done=len(played) == len(matches),
        standings=standing_rows(ranking, tallies),
        ranking=ranking,
    )
