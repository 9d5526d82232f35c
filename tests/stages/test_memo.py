"""StageMemo re-plans a stage only when one of its matches got a result, and gives the
very state a full re-plan gives; round-based planners add no match before their round is in."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from runner.domain.match_values import GameRecord, MatchPlan
from runner.domain.stages.memo import StageMemo
from runner.domain.stages.tournament import advance, standings_document
from tests.stages.sim import make_config, random_game

SWISS_THEN_KNOCKOUT = [
    {"name": "sw", "planner": "swiss", "rounds": 4, "advance": {"top": 8}},
    {"name": "ko", "planner": "knockout", "games_per_pairing": 2},
]
ROUND_ROBIN_THEN_ELIMINATION = [
    {"name": "rr", "planner": "round_robin", "boards": ["arena"]},
    {"name": "el", "planner": "potm_elimination", "k": 2},
]


def _doc(state: Any) -> str:
    return json.dumps(
        {"doc": standings_document(state), "ids": [m.match_id for m in state.matches]}, sort_keys=True
    )


@pytest.mark.parametrize("stages", [SWISS_THEN_KNOCKOUT, ROUND_ROBIN_THEN_ELIMINATION])
@pytest.mark.parametrize("seed", range(3))
def test_a_memo_gives_the_state_a_full_replan_gives(stages: list[dict[str, Any]], seed: int) -> None:
    config = make_config(stages, 17)
    rng = random.Random(seed)
    make = random_game()
    memo = StageMemo()
    results: dict[str, list[GameRecord]] = {}
    for _ in range(2000):
        state = advance(config, results, memo)
        assert _doc(state) == _doc(advance(config, results))
        pending = [m for m in state.matches if m.match_id not in results]
        if not pending:
            break
        # results arrive a few at a time, as from workers: most passes complete no round
        batch = rng.sample(pending, min(len(pending), rng.randint(1, 3)))
        for m in batch:
            results[m.match_id] = [make(m, o, rng) for o in m.orders]
        if len(batch) < len(pending) and state.waits_for_every_result:
            # a result that leaves the round open cannot add a match
            after = advance(config, results, memo)
            assert [m.match_id for m in after.matches] == [m.match_id for m in state.matches]
    assert state.finished
    assert memo.reused > 0  # the finished first stage was not planned again


def test_a_result_replaced_by_a_new_one_is_planned_again() -> None:
    config = make_config([{"name": "ko", "planner": "knockout"}], 4)
    make = random_game(tie_rate=0.0)
    rng = random.Random(1)
    memo = StageMemo()
    results: dict[str, list[GameRecord]] = {}
    first = advance(config, results, memo)
    for m in first.matches:
        results[m.match_id] = [make(m, o, rng) for o in m.orders]
    semi = advance(config, results, memo)
    final: MatchPlan = semi.matches[-1]
    # an accepted rerun: the first semi-final's result is now the other winner's
    m0 = first.matches[0]
    old = results[m0.match_id]
    loser = next(p for p in m0.players if p != old[0].winner)
    results[m0.match_id] = [
        GameRecord(list(g.order), loser, {p: (5 if p == loser else 0) for p in g.order}, g.verdict, [])
        for g in old
    ]
    planned_before = memo.planned
    again = advance(config, results, memo)
    assert memo.planned == planned_before + 1
    assert loser in again.matches[-1].players and loser not in final.players
    assert _doc(again) == _doc(advance(config, results))
