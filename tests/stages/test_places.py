"""Shared places: a tie that survives every rule of the contest stays shared (=1), with its rule."""

from __future__ import annotations

import random

from runner.domain.match_values import GameRecord, MatchPlan, Verdict, VerdictKind
from runner.domain.stages.places import ranking_rule
from runner.domain.stages.tournament import standings_document
from tests.stages.sim import make_config, simulate

POTM94 = [
    {"name": "all-play-all", "planner": "round_robin", "rank_by": ["wins", "score"]},
    {
        "name": "permutations",
        "planner": "permutations",
        "when": "tied_for_first",
        "rank_by": ["wins", "score"],
    },
]


def _normal(order: tuple[str, ...], winner: str | None, scores: dict[str, int]) -> GameRecord:
    return GameRecord(list(order), winner, scores, Verdict(VerdictKind.NORMAL, None, ""), [])


def always_tie(m: MatchPlan, order: tuple[str, ...], rng: random.Random) -> GameRecord:
    return _normal(order, None, {p: 0 for p in order})


def test_a_tie_that_survives_the_permutations_is_shared_with_its_rule() -> None:
    cfg = make_config(POTM94, 4)
    state, _ = simulate(cfg, 0, always_tie)
    assert state.stages[1].status == "done"  # seed 002's N! games were played ...
    places = state.final_places
    assert [p.label for p in places] == ["=1"] * 4  # ... and could not separate them
    assert all(p.stage == "permutations" for p in places)
    assert "tied on wins, score in stage permutations after its N-player games" in places[0].tie_rule
    assert places[0].keys == {"wins": 0.0, "score": 0.0}
    doc = standings_document(state)
    assert [p["label"] for p in doc["final_places"]] == ["=1"] * 4
    assert {r["place"] for r in doc["stages"][1]["standings"]} == {"=1"}


def test_a_tiebreak_that_separates_leaves_no_shared_place() -> None:
    def game(m: MatchPlan, order: tuple[str, ...], rng: random.Random) -> GameRecord:
        if m.stage == "all-play-all":
            return _normal(order, None, {p: 0 for p in order})
        # in the N-player games the best seed always wins; the others part on score
        return _normal(order, min(order), {p: 40 - 10 * int(p[-1]) for p in order})

    state, _ = simulate(make_config(POTM94, 3), 0, game)
    assert [(p.label, p.entry) for p in state.final_places] == [("1", "e001"), ("2", "e002"), ("3", "e003")]
    assert state.final_places[0].keys == {"wins": 6.0, "score": 180.0}


def test_ties_below_first_stay_shared_at_their_place() -> None:
    def game(m: MatchPlan, order: tuple[str, ...], rng: random.Random) -> GameRecord:
        if "e001" in order:
            return _normal(order, "e001", {"e001": 5})
        return _normal(order, None, {p: 0 for p in order})

    state, _ = simulate(make_config(POTM94, 4), 0, game)
    assert state.stages[1].status == "skipped"  # no tie for first
    assert [p.label for p in state.final_places] == ["1", "=2", "=2", "=2"]
    assert state.final_places[1].tie_rule.startswith("tied on wins, score in stage all-play-all")


def test_a_rank_by_naming_seed_breaks_the_tie_by_rule() -> None:
    stages = [{"name": "rr", "planner": "round_robin", "rank_by": ["wins", "seed"]}]
    state, _ = simulate(make_config(stages, 3), 0, always_tie)
    assert [p.label for p in state.final_places] == ["1", "2", "3"]


def test_ranking_rule_names_the_last_stage_and_its_tiebreaks() -> None:
    rule = ranking_rule(
        [
            ("seeding", ["points"], False, "seeding"),
            ("final", ["points"], False, "round_robin"),
            ("final-tiebreak", ["points"], True, "round_robin"),
        ]
    )
    assert rule == "stage final by points; a tie for first then goes to stage final-tiebreak by points"
    knockout = ranking_rule(
        [("groups", ["points"], False, "round_robin"), ("ko", ["wins"], False, "knockout")]
    )
    assert knockout == "stage ko by the round reached, then wins"
