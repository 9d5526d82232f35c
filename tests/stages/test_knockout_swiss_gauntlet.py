"""Knockout, swiss and gauntlet: the planners chess tournament managers provide."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from runner.domain.match_values import GameRecord, MatchPlan, Verdict, VerdictKind
from runner.domain.stages.knockout import bracket_order
from runner.domain.stages.tournament import advance, standings_document
from tests.stages.sim import make_config, random_game, simulate


def better_seed_wins(m: MatchPlan, order: tuple[str, ...], rng: random.Random) -> GameRecord:
    w = min(order)
    return GameRecord(list(order), w, {w: 5}, Verdict(VerdictKind.NORMAL, None, ""), [])


def test_bracket_order_keeps_top_seeds_apart() -> None:
    assert bracket_order(4) == [1, 4, 2, 3]
    assert bracket_order(8) == [1, 8, 4, 5, 2, 7, 3, 6]


@pytest.mark.parametrize("n", [2, 5, 8, 13, 16])
def test_knockout_byes_rounds_and_champion(n: int) -> None:
    cfg = make_config([{"name": "ko", "planner": "knockout", "advance": "survivors"}], n)
    state, _ = simulate(cfg, 0, better_seed_wins)
    stage = standings_document(state)["stages"][0]
    size = 1 << (n - 1).bit_length()
    first = stage["rounds"][0]
    assert len(first["byes"]) == size - n and set(first["byes"]) == {
        f"e{i:03d}" for i in range(1, size - n + 1)
    }
    assert len(stage["rounds"]) == (size - 1).bit_length()
    assert stage["advancing"] == ["e001"]
    assert stage["standings"][0]["status"] == "champion"
    assert [r["entry"] for r in stage["standings"]][:2] == ["e001", "e002"]
    assert len(state.matches) == n - 1


def test_knockout_tied_match_goes_to_the_better_seed() -> None:
    def tie(m: MatchPlan, order: tuple[str, ...], rng: random.Random) -> GameRecord:
        return GameRecord(list(order), None, {}, Verdict(VerdictKind.NORMAL, None, ""), [])

    state, _ = simulate(make_config([{"name": "ko", "planner": "knockout"}], 4), 0, tie)
    assert state.final_ranking[0] == "e001"
    assert any("tied" in n for n in state.stages[0].notes)


@pytest.mark.parametrize(("n", "rounds", "games"), [(8, 3, 2), (9, 4, 1), (16, 5, 2), (7, 6, 1)])
def test_swiss_rounds_without_repeats(n: int, rounds: int, games: int) -> None:
    cfg = make_config([{"name": "sw", "planner": "swiss", "rounds": rounds, "games_per_pairing": games}], n)
    state, _ = simulate(cfg, n, random_game(0.2))
    stage = standings_document(state)["stages"][0]
    assert len(stage["rounds"]) == rounds
    pairs = [frozenset(m.players) for m in state.matches]
    assert len(pairs) == len(set(pairs)), "no repeat pairing"
    byes = Counter(b for r in stage["rounds"] for b in r["byes"])
    assert sum(byes.values()) == (rounds if n % 2 else 0)
    assert max(byes.values(), default=0) <= 1 or rounds > n // 2
    for r in stage["rounds"]:
        playing = [p for mid in r["matches"] for m in state.matches if m.match_id == mid for p in m.players]
        assert sorted(playing + r["byes"]) == sorted(cfg.entry_specs())
    rows = stage["standings"]
    assert all("buchholz" in r["extra"] for r in rows if r["extra"].get("points", None) is not None) or rows
    if games == 1:
        firsts = Counter(m.orders[0][0] for m in state.matches)
        played = Counter(p for m in state.matches for p in m.players)
        assert all(abs(2 * firsts[e] - played[e]) <= 2 for e in played)


def test_swiss_round_two_pairs_within_score_groups() -> None:
    cfg = make_config([{"name": "sw", "planner": "swiss", "rounds": 2}], 8)
    r1 = advance(cfg, {}).matches
    results = {m.match_id: [better_seed_wins(m, o, random.Random(0)) for o in m.orders] for m in r1}
    r2 = [m for m in advance(cfg, results).matches if m.round == 2]
    winners = {min(m.players) for m in r1}
    for m in r2:
        assert (m.players[0] in winners) == (m.players[1] in winners)


def test_gauntlet_every_entrant_against_every_opponent() -> None:
    cfg = make_config(
        [{"name": "g", "planner": "gauntlet", "opponents": ["ref1", "ref2"]}], 3, opponents=["ref1", "ref2"]
    )
    state, _ = simulate(cfg, 0)
    pairs = sorted(m.players for m in state.matches)
    assert pairs == sorted((f"e00{i}", r) for i in (1, 2, 3) for r in ("ref1", "ref2"))
    assert [r.entry for r in state.stages[0].standings] == state.final_ranking
    assert set(state.final_ranking) == {"e001", "e002", "e003"}
