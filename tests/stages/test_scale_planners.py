"""Pairing at scale: the iterative search gives the recursive one's pairs, and
swiss and knockout plan 10,000 entrants (pure planners, no processes)."""

from __future__ import annotations

import random

import pytest

from runner.domain.match_values import GameRecord, MatchPlan, Verdict, VerdictKind
from runner.domain.stages import knockout, swiss
from runner.domain.stages.common import StageContext, pair_off
from runner.domain.stages.pairing import ClosestInGroupFirst
from tests.stages.pairing_reference import reference_pair_off
from tests.stages.sim import make_config

NORMAL = Verdict(VerdictKind.NORMAL, None, "")


@pytest.mark.parametrize("seed", range(40))
def test_the_iterative_search_pairs_as_the_recursive_one(seed: int) -> None:
    rng = random.Random(seed)
    players = [f"p{i}" for i in range(rng.choice([2, 4, 6, 8, 10, 12]))]
    met = {frozenset(rng.sample(players, 2)) for _ in range(rng.randint(0, 3 * len(players)))}
    prefs = {p: rng.sample(players, len(players)) for p in players}

    def candidates(p: str, rest: list[str]) -> list[str]:
        return [x for x in prefs[p] if x in rest]

    def seen(a: str, b: str) -> bool:
        return frozenset((a, b)) in met

    assert pair_off(players, candidates, seen) == reference_pair_off(players, candidates, seen)


def test_a_search_over_budget_falls_back_to_greedy_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.domain.stages import common

    players = [f"p{i}" for i in range(12)]
    everyone_met = lambda a, b: True  # noqa: E731  (no pairing without repeats: a long search)
    monkeypatch.setattr(common, "PAIRING_SEARCH_BUDGET", 3)
    got = pair_off(players, lambda p, rest: list(reversed(rest)), everyone_met)
    assert got == reference_pair_off(players, lambda p, rest: list(reversed(rest)), everyone_met, budget=3)


@pytest.mark.parametrize("group", range(9))
def test_swiss_candidates_are_the_closest_in_group_first(group: int) -> None:
    remaining = list(range(10, 22))
    target = (group + 1) // 2 - 1
    by_closeness = sorted(range(group), key=lambda i: (abs(i - target), i))
    expected = [remaining[i] for i in by_closeness] + remaining[group:]
    assert list(ClosestInGroupFirst(remaining, group)) == expected


def instant_result(m: MatchPlan) -> list[GameRecord]:
    """The better seed (lower name) wins unless a hash of the match says otherwise."""
    upset = int(m.match_id[:2], 16) < 80  # about 31% upsets, deterministic
    out = []
    for order in m.orders:
        a, b = sorted(order)
        w = b if upset else a
        out.append(GameRecord(list(order), w, {w: 1}, NORMAL, []))
    return out


def context(stage: dict[str, object], n: int) -> tuple[StageContext, list[str]]:
    cfg = make_config([stage], 2)
    entrants = [f"e{i:05d}" for i in range(1, n + 1)]
    return StageContext(stage=cfg.stages[0], seed=cfg.seed, boards=cfg.boards), entrants


# 10,000-entrant plans take seconds each: the full suite runs them, the fast lane does not
@pytest.mark.integration
def test_a_swiss_of_10000_entrants_pairs_its_rounds_without_repeats() -> None:
    # four rounds keep the test short (each plan replays every round); make bench-scale plays ten
    ctx, entrants = context({"name": "sw", "planner": "swiss", "rounds": 4}, 10_000)
    results: dict[str, list[GameRecord]] = {}
    before_last = None
    for _ in range(4):
        out = swiss.plan(ctx, entrants, results)
        before_last = out  # the plan that made round 4: standings over rounds 1-3
        results.update({m.match_id: instant_result(m) for m in out.matches if m.match_id not in results})
    out = swiss.plan(ctx, entrants, results)
    assert out.done and len(out.rounds) == 4
    assert len(out.matches) == 4 * 5_000
    pairs = {frozenset(m.players) for m in out.matches}
    assert len(pairs) == len(out.matches), "no repeat pairing"
    assert len(out.standings) == 10_000
    # round 4 pairs within score groups: the 3-0 entrants (about 1/8) meet each other first
    assert before_last is not None and len(before_last.rounds) == 4
    points = {row.entry: row.points for row in before_last.standings}
    last = [m for m in out.matches if m.round == 4]
    assert sum(1 for m in last if points[m.players[0]] != points[m.players[1]]) < len(last) // 10


@pytest.mark.integration
def test_a_knockout_of_10000_entrants_runs_to_a_champion() -> None:
    ctx, entrants = context({"name": "ko", "planner": "knockout"}, 10_000)
    results: dict[str, list[GameRecord]] = {}
    for _ in range(15):
        out = knockout.plan(ctx, entrants, results)
        if out.done:
            break
        results.update({m.match_id: instant_result(m) for m in out.matches if m.match_id not in results})
    assert out.done
    assert len(out.matches) == 9_999 and len(out.rounds) == 14
    assert out.survivors is not None and len(out.survivors) == 1
    assert out.standings[0].status == "champion"


@pytest.mark.parametrize("seed", range(30))
def test_last_first_candidates_pair_as_the_reversed_list_did(seed: int) -> None:
    from runner.domain.stages.common import PAIRING_SEARCH_BUDGET
    from runner.domain.stages.pairing import LastFirst, pair_positions

    rng = random.Random(seed)
    players = [f"p{i}" for i in range(rng.choice([2, 4, 6, 8, 10, 12, 14]))]
    met = {frozenset(rng.sample(players, 2)) for _ in range(rng.randint(0, 3 * len(players)))}

    def seen(a: str, b: str) -> bool:
        return frozenset((a, b)) in met

    lazy = pair_positions(
        len(players),
        lambda _p, remaining: LastFirst(remaining),
        lambda a, b: seen(players[a], players[b]),
        PAIRING_SEARCH_BUDGET,
    )
    assert [(players[a], players[b]) for a, b in lazy] == pair_off(
        players, lambda _p, rest: list(reversed(rest)), seen
    )
