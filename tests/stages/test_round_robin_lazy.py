"""A round robin planned lazily (issue 13, item 3) plans exactly what the full enumeration does.

The reference here is an independent eager enumeration (``itertools.combinations``
of the seed order, every board, seats alternating), not the planner's own
arithmetic: ids, pairing numbers, seats and boards must be the ones runs
started before lazy planning stored, and the standings must be the same.
"""

from __future__ import annotations

import json
import random
from itertools import combinations

import pytest

from runner.config import TournamentConfig
from runner.domain.match_values import GameRecord, MatchPlan, Verdict, VerdictKind
from runner.domain.stages import round_robin
from runner.domain.stages.common import StageContext, StageOutcome, completed, one_round_outcome
from runner.domain.stages.round_robin import RoundRobinWindow, plan_window
from runner.domain.stages.tournament import advance, standings_document
from tests.stages.sim import make_config

NORMAL = Verdict(VerdictKind.NORMAL, None, "")
BOARDS = {
    "X": {"text": "-" * 8 + "\n"},
    "Y": {"generate": {"blocked": 5}, "per_round": True},
    "Z": {"text": "--\n"},
}


def _config(n: int, boards: list[str], games: int) -> TournamentConfig:
    stage = {"name": "rr", "planner": "round_robin", "boards": boards, "games_per_pairing": games}
    return make_config([stage], n, boards=BOARDS)


def _ctx(cfg: TournamentConfig) -> StageContext:
    return StageContext(stage=cfg.stages[0], seed=cfg.seed, boards=cfg.boards)


def eager(ctx: StageContext, entrants: list[str]) -> list[MatchPlan]:
    """The plan as the planner made it before it was lazy: every pair, every board, at once."""
    boards = ctx.boards_for_round(1)
    games = ctx.stage.games_per_pairing  # type: ignore[union-attr]
    out: list[MatchPlan] = []
    for a, b in combinations(entrants, 2):
        for board in boards:
            orders = tuple((a, b) if g % 2 == 0 else (b, a) for g in range(games))
            out.append(MatchPlan("rr", 1, "", len(out), (a, b), board, orders))
    return out


def _play(m: MatchPlan, rng: random.Random) -> list[GameRecord]:
    games = []
    for order in m.orders:
        roll = rng.random()
        winner = None if roll < 0.2 else order[0] if roll < 0.6 else order[1]
        scores = {p: rng.randint(0, 9) for p in order}
        games.append(GameRecord(list(order), winner, scores, NORMAL, []))
    return games


def _same_plans(lazy: list[MatchPlan], full: list[MatchPlan]) -> None:
    assert lazy == full[: len(lazy)]


def _doc(out: StageOutcome) -> str:
    rows = [r.to_dict() for r in out.standings]
    return json.dumps(
        {"rows": rows, "order": out.ranking.order, "groups": out.ranking.groups}, sort_keys=True
    )


CASES = [
    (2, ["X"], 2, 1),
    (5, ["X"], 2, 3),
    (7, ["X", "Y", "Z"], 2, 4),
    (9, ["Y", "X"], 4, 10),
    (12, ["X"], 2, 7),
    (13, ["Z", "Y"], 2, 2000),  # a window wider than the stage: everything at once, as before
]


@pytest.mark.parametrize(("n", "boards", "games", "window"), CASES)
def test_lazy_plan_gives_the_full_enumerations_matches_and_standings(
    n: int, boards: list[str], games: int, window: int
) -> None:
    cfg = _config(n, boards, games)
    ctx = _ctx(cfg)
    entrants = list(cfg.entry_specs())
    full = eager(ctx, entrants)
    rng = random.Random(n * 31 + window)
    results: dict[str, list[GameRecord]] = {}
    for _ in range(len(full) + 1):
        out = plan_window(ctx, entrants, results, window)
        _same_plans(out.matches, full)
        unplayed = [m for m in out.matches if completed(results, m) is None]
        assert len(unplayed) <= window
        assert len(unplayed) == window or len(out.matches) == len(full)
        assert (out.window is None) == (len(out.matches) == len(full))
        if out.done:
            break
        # results arrive in any order, a few at a time
        for m in rng.sample(unplayed, min(len(unplayed), rng.randint(1, 3))):
            results[m.match_id] = _play(m, rng)
    assert out.done and len(out.matches) == len(full)
    reference = one_round_outcome(ctx, entrants, full, results)
    assert _doc(out) == _doc(reference)


@pytest.mark.parametrize(("n", "boards", "games", "window"), CASES[1:5])
def test_the_window_fed_one_result_at_a_time_plans_what_planning_again_would(
    n: int, boards: list[str], games: int, window: int
) -> None:
    cfg = _config(n, boards, games)
    ctx = _ctx(cfg)
    entrants = list(cfg.entry_specs())
    full = eager(ctx, entrants)
    rng = random.Random(n)
    results: dict[str, list[GameRecord]] = {}
    first = plan_window(ctx, entrants, results, window)
    lazy = first.window
    assert isinstance(lazy, RoundRobinWindow)
    planned = list(first.matches)
    failed = full[0].match_id  # a system error first: the match stays unplayed, nothing moves
    while lazy.unplayed:
        mid = rng.choice(sorted(lazy.unplayed))
        m = next(p for p in planned if p.match_id == mid)
        games_ = _play(m, rng)
        if mid == failed and results.get(mid) is None:
            broken = [
                GameRecord(list(m.orders[0]), None, {}, Verdict(VerdictKind.SYSTEM_ERROR, None, "x"), [])
            ]
            results[mid] = broken
            assert lazy.on_result(mid, broken) == []
        results[mid] = games_
        planned.extend(lazy.on_result(mid, games_))
        again = plan_window(ctx, entrants, results, window)
        assert [p.match_id for p in planned] == [p.match_id for p in again.matches]
        assert lazy.unplayed == {p.match_id for p in again.matches if completed(results, p) is None}
        if lazy.complete:
            break
    _same_plans(planned, full)


@pytest.mark.parametrize("window", [1, 4, 50])
def test_a_resumed_stage_plans_from_its_stored_results_alone(
    monkeypatch: pytest.MonkeyPatch, window: int
) -> None:
    """Results played in any order up to a crash: planning again from them alone gives the
    prefix the running plan had, and the whole tournament (``advance``) ends as the eager one."""
    monkeypatch.setattr(round_robin, "WINDOW", window)
    cfg = _config(10, ["X", "Y"], 2)
    ctx = _ctx(cfg)
    entrants = list(cfg.entry_specs())
    full = eager(ctx, entrants)
    rng = random.Random(window)
    results: dict[str, list[GameRecord]] = {}
    state = advance(cfg, results)
    before = None
    while not state.finished:
        pending = [m for m in state.matches if m.match_id not in results]
        for m in rng.sample(pending, min(len(pending), 2)):
            results[m.match_id] = _play(m, rng)
        state = advance(cfg, results)
        if before is None and len(results) > len(full) // 2:
            before = [m.match_id for m in state.matches]
            resumed = advance(cfg, dict(results))  # a fresh coordinator: only what was stored
            assert [m.match_id for m in resumed.matches] == before
    assert list(state.matches) == list(full)
    reference = one_round_outcome(ctx, entrants, full, results)
    assert [r.to_dict() for r in state.stages[0].standings] == [r.to_dict() for r in reference.standings]
    assert standings_document(state)["final_ranking"] == reference.ranking.order


def test_the_pairing_order_is_the_combinations_order_at_any_size() -> None:
    for n in [*range(2, 30), 1000, 4471, 10_000]:
        cfg = _config(n, ["X"], 2)
        order = round_robin.RoundRobinOrder(_ctx(cfg), list(range(n)))  # type: ignore[arg-type]
        if n < 30:
            assert [order.pair(p) for p in range(order.pairs)] == list(combinations(range(n), 2))
        else:  # the rows' edges, where integer rounding can go wrong
            for i in [0, 1, n // 3, n - 3, n - 2]:
                start = i * (2 * n - i - 1) // 2
                assert order.pair(start) == (i, i + 1)
                assert order.pair(start + n - i - 2) == (i, n - 1)
            assert order.pair(order.pairs - 1) == (n - 2, n - 1)


def test_a_window_must_hold_a_match() -> None:
    cfg = _config(4, ["X"], 2)
    with pytest.raises(ValueError, match="at least one"):
        plan_window(_ctx(cfg), list(cfg.entry_specs()), {}, 0)
