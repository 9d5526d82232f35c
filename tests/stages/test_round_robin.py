"""Round robin: every pair meets the configured number of times, seats balanced."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import pytest

from runner.domain.stages.tournament import advance
from tests.stages.sim import make_config, simulate

BOARDS = {"X": {"text": "-" * 8 + "\n"}, "Y": {"generate": {"blocked": 5}}, "Z": {"generate": {"blocked": 9}}}


@pytest.mark.parametrize(("n", "games"), [(2, 2), (5, 2), (6, 4), (9, 2)])
def test_each_pair_meets_on_every_board_each_side_first_equally(n: int, games: int) -> None:
    cfg = make_config(
        [{"name": "rr", "planner": "round_robin", "boards": ["X", "Y", "Z"], "games_per_pairing": games}],
        n,
        boards=BOARDS,
    )
    state = advance(cfg, {})
    assert len(state.matches) == n * (n - 1) // 2 * 3  # one match per pair and board
    per_pair_board = Counter((frozenset(m.players), m.board_id) for m in state.matches)
    assert set(per_pair_board.values()) == {1}
    names = list(cfg.entry_specs())
    for a, b in combinations(names, 2):
        games_ab = [o for m in state.matches if set(m.players) == {a, b} for o in m.orders]
        assert len(games_ab) == 3 * games
        assert sum(o[0] == a for o in games_ab) == sum(o[0] == b for o in games_ab)
    firsts = Counter(o[0] for m in state.matches for o in m.orders)
    total = Counter(p for m in state.matches for o in m.orders for p in o)
    assert all(firsts[e] * 2 == total[e] for e in names)


def test_all_matches_exist_at_once_and_the_stage_finishes() -> None:
    cfg = make_config([{"name": "rr", "planner": "round_robin", "boards": ["X"]}], 7, boards=BOARDS)
    state, results = simulate(cfg, 3)
    assert state.finished and len(results) == 21
    rows = state.stages[0].standings
    assert [r.rank for r in rows] == list(range(1, 8))
    assert sum(r.games for r in rows) == 21 * 2 * 2
    assert sum(r.wins for r in rows) == sum(r.losses for r in rows)


def test_games_per_pairing_must_be_even() -> None:
    with pytest.raises(ValueError, match="even"):
        make_config([{"name": "rr", "planner": "round_robin", "games_per_pairing": 3}], 4)
