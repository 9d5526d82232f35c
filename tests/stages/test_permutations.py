"""Permutations (seed 002 stage 2): every seat order exactly once."""

from __future__ import annotations

import math
from itertools import permutations

import pytest

from runner.stages.tournament import advance
from tests.stages.sim import make_config, simulate


@pytest.mark.parametrize("n", [2, 3, 4, 5])
def test_every_order_exactly_once(n: int) -> None:
    cfg = make_config([{"name": "perm", "planner": "permutations", "boards": ["default"]}], n)
    state = advance(cfg, {})
    orders = [o for m in state.matches for o in m.orders]
    assert len(orders) == math.factorial(n)
    assert sorted(orders) == sorted(permutations(cfg.entry_specs()))
    assert all(len(m.orders) == 1 and m.board_id == "default" for m in state.matches)
    assert len({m.match_id for m in state.matches}) == len(state.matches)


def test_ranked_by_wins_then_score() -> None:
    cfg = make_config([{"name": "perm", "planner": "permutations"}], 4)
    state, _ = simulate(cfg, 5)
    rows = state.stages[0].standings
    keys = [(r.wins, r.score) for r in rows]
    assert keys == sorted(keys, reverse=True)


def test_too_many_entrants_skip_the_stage_with_a_note() -> None:
    cfg = make_config([{"name": "perm", "planner": "permutations", "max_entrants": 3}], 4)
    state = advance(cfg, {})
    assert state.matches == [] and state.finished
    assert state.stages[0].status == "skipped"
    assert "exceed the limit of 3" in state.stages[0].notes[0]
    assert state.final_ranking == list(cfg.entry_specs())
