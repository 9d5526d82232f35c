"""Permutations (seed 002 stage 2): every seat order exactly once."""

from __future__ import annotations

import math
from collections import Counter
from itertools import permutations

import pytest

from runner.domain.stages.tournament import advance
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


@pytest.mark.parametrize("n", [4, 7, 9, 10])
def test_beyond_max_entrants_a_balanced_design_is_played(n: int) -> None:
    """Seed 002 wants every order; past max_entrants every entry still takes every seat equally
    often and follows every other entry equally often (a Williams design), never a silent skip."""
    cfg = make_config([{"name": "perm", "planner": "permutations", "max_entrants": 3}], n)
    state = advance(cfg, {})
    orders = [o for m in state.matches for o in m.orders]
    assert len(orders) == (n if n % 2 == 0 else 2 * n)
    assert len(set(orders)) == len(orders)
    seats = Counter((e, i) for o in orders for i, e in enumerate(o))
    assert len(seats) == n * n and len(set(seats.values())) == 1
    follows = Counter((o[i], o[i + 1]) for o in orders for i in range(n - 1))
    assert len(follows) == n * (n - 1) and len(set(follows.values())) == 1
    assert state.stages[0].status == "running"
    note = state.stages[0].notes[-1]
    assert "beyond max_entrants=3" in note and f"Williams design of {len(orders)} orders" in note


def test_all_orders_note_gives_the_count() -> None:
    cfg = make_config([{"name": "perm", "planner": "permutations"}], 4)
    assert advance(cfg, {}).stages[0].notes == ["all 4! = 24 seat orders of 4 entrants"]


def test_more_entrants_than_seats_skip_with_a_note() -> None:
    # pousse seats two: the only case the stage cannot play (validate warns beforehand)
    cfg = make_config([{"name": "perm", "planner": "permutations"}], 3, game="pousse", boards={})
    state = advance(cfg, {})
    assert state.matches == [] and state.finished
    assert state.stages[0].status == "skipped"
    assert "exceed the 2 players a game can seat" in state.stages[0].notes[0]
    assert [p.label for p in state.final_places] == ["=1", "=1", "=1"]
