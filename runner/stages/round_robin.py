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
from runner.scoring import rank_entries, tally_matches
from runner.stages.base import PlannedMatch, RoundInfo
from runner.stages.common import (
    Results,
    StageContext,
    StageOutcome,
    completed,
    standing_rows,
    two_player_orders,
)


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, RoundRobinStage)
    boards = ctx.boards_for_round(1)
    matches: list[PlannedMatch] = []
    for a, b in combinations(entrants, 2):
        for board in boards:
            orders = two_player_orders(a, b, st.games_per_pairing)
            matches.append(PlannedMatch(st.name, 1, "", len(matches), (a, b), board, orders))
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
