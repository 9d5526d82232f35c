"""The whole tournament: stage chaining, conditions, advancement, exclusions, forfeits, audit JSON."""

from __future__ import annotations

import json
import random
from typing import Any

from runner.domain.match_values import GameRecord, MatchPlan, Verdict, VerdictKind
from runner.domain.stages.tournament import advance, match_seed, match_spec, matches_rows, standings_document
from tests.stages.sim import make_config, random_game, simulate

NORMAL = Verdict(VerdictKind.NORMAL, None, "")


def game(
    order: tuple[str, ...], winner: str | None, score: int = 10, verdict: Verdict = NORMAL
) -> GameRecord:
    return GameRecord(list(order), winner, {p: (score if p == winner else 0) for p in order}, verdict, [])


def ties_between(tied: set[str]):  # type: ignore[no-untyped-def]
    """Everyone beats e004+ ; among ``tied`` the first seat always wins with the same score."""

    def make(m: MatchPlan, order: tuple[str, ...], rng: random.Random) -> GameRecord:
        if set(order) <= tied:
            return game(order, order[0], 50)
        return game(order, min(order), 50)

    return make


POTM94 = [
    {"name": "all", "planner": "round_robin", "boards": ["default"], "rank_by": ["wins", "score"]},
    {"name": "tb", "planner": "permutations", "when": "tied_for_first", "rank_by": ["wins", "score"]},
]


def test_tiebreak_plays_only_the_entries_tied_for_first() -> None:
    # e001 and e002 beat everyone else and split their own games: tied on wins and score
    cfg = make_config(POTM94, 5)
    state, _ = simulate(cfg, 0, ties_between({"e001", "e002"}))
    all_stage, tb = state.stages
    assert all_stage.standings[0].wins == all_stage.standings[1].wins
    assert tb.status == "done" and tb.entrants == ["e001", "e002"]
    assert {m.players for m in state.matches if m.stage == "tb"} == {("e001", "e002")}
    assert len([m for m in state.matches if m.stage == "tb"]) == 2  # 2! orders
    assert state.final_ranking[2:] == ["e003", "e004", "e005"]
    assert sorted(state.final_ranking[:2]) == ["e001", "e002"]


def test_tiebreak_is_skipped_without_a_tie() -> None:
    def strongest_wins(m: MatchPlan, order: tuple[str, ...], rng: random.Random) -> GameRecord:
        return game(order, min(order))

    state, _ = simulate(make_config(POTM94, 5), 0, strongest_wins)
    assert state.stages[1].status == "skipped"
    assert state.final_ranking == ["e001", "e002", "e003", "e004", "e005"]
    assert not [m for m in state.matches if m.stage == "tb"]


def test_top_n_advances_and_ranking_composes_across_stages() -> None:
    stages: list[dict[str, Any]] = [
        {"name": "p1", "planner": "round_robin", "rank_by": ["wins"], "advance": {"top": 3}},
        {"name": "p2", "planner": "round_robin", "rank_by": ["wins"]},
    ]
    cfg = make_config(stages, 6)

    def worst_seed_wins(m: MatchPlan, order: tuple[str, ...], rng: random.Random) -> GameRecord:
        w = max(order) if m.stage == "p1" else min(order)
        return game(order, w)

    state, _ = simulate(cfg, 0, worst_seed_wins)
    p1, p2 = state.stages
    assert p1.advancing == ["e006", "e005", "e004"]
    assert p2.entrants == ["e006", "e005", "e004"]
    assert [r.entry for r in p2.standings] == ["e004", "e005", "e006"]
    assert state.final_ranking == ["e004", "e005", "e006", "e003", "e002", "e001"]
    statuses = {r.entry: r.status for r in p1.standings}
    assert statuses["e006"] == "advanced" and statuses["e001"] == "not advanced"


def test_system_test_excludes_with_the_reason_and_forfeits_count_as_losses() -> None:
    stages: list[dict[str, Any]] = [
        {"name": "st", "planner": "system_test"},
        {"name": "rr", "planner": "round_robin", "rank_by": ["wins", "score"]},
    ]
    cfg = make_config(stages, 4)
    crash = Verdict(VerdictKind.CRASH, "e002~mirror", "exit status 1")
    timeout = Verdict(VerdictKind.TIMEOUT, "e003", "no move within 1.0 s")

    def make(m: MatchPlan, order: tuple[str, ...], rng: random.Random) -> GameRecord:
        if m.stage == "st":
            return game(order, None, 0, crash if order[0] == "e002" else NORMAL)
        if "e003" in order and order[0] == "e003":
            return game(order, None, 0, timeout)  # no winner named: the opponent still wins
        return game(order, order[0])

    state, _ = simulate(cfg, 0, make)
    st, rr = state.stages
    assert st.excluded == {"e002": "crash: exit status 1"}
    assert st.advancing == ["e001", "e003", "e004"]
    assert [r.entry for r in st.standings][-1] == "e002"
    assert st.standings[-1].status == "excluded: crash: exit status 1"
    assert "e002" not in {p for m in state.matches if m.stage == "rr" for p in m.players}
    e003 = next(r for r in rr.standings if r.entry == "e003")
    assert (e003.wins, e003.losses, e003.verdicts_against) == (0, 4, 2)
    assert state.final_ranking[-1] == "e002"


def test_system_error_games_are_not_results() -> None:
    cfg = make_config([{"name": "rr", "planner": "round_robin"}], 2)
    m = advance(cfg, {}).matches[0]
    err = Verdict(VerdictKind.SYSTEM_ERROR, None, "worker lost")
    state = advance(cfg, {m.match_id: [game(o, None, 0, err) for o in m.orders]})
    assert state.stages[0].status == "running" and not state.finished


def test_seeding_is_points_from_the_seed_000_table() -> None:
    cfg = make_config([{"name": "seed", "planner": "seeding"}], 2, opponents=["s1", "s2", "s3"])
    state = advance(cfg, {})
    assert len(state.matches) == 6 and all(len(m.orders) == 2 for m in state.matches)
    results = {}
    for m in state.matches:
        e = m.players[0]
        # e001 wins both games (one as first, one as second) with 7 points each; e002 ties everything
        results[m.match_id] = [game(order, e if e == "e001" else None, 7) for order in m.orders]
    state = advance(cfg, results)
    rows = {r.entry: r for r in state.stages[0].standings}
    assert rows["e001"].points == 3 * (1000 + 7 + 1200 + 7)
    assert rows["e002"].points == 3 * (500 + 600)
    assert state.final_ranking == ["e001", "e002"]


def test_audit_json_has_every_match_and_the_numbers_behind_each_ranking() -> None:
    cfg = make_config(POTM94, 4)
    state, results = simulate(cfg, 1, random_game())
    rows = matches_rows(state, results, cfg)
    json.dumps(rows)
    assert len(rows) == len(state.matches)
    first = rows[0]
    for key in (
        "match_id",
        "stage",
        "round",
        "bracket",
        "pairing",
        "players",
        "board_id",
        "orders",
        "result",
    ):
        assert key in first
    assert first["status"] == "done"
    assert {"order", "winner", "scores", "verdict"} <= set(first["result"]["games"][0])
    standings = standings_document(state)
    json.dumps(standings)
    stage = standings["stages"][0]
    assert stage["entrants"] and stage["rounds"][0]["matches"]
    row = stage["standings"][0]
    for key in ("rank", "entry", "games", "wins", "ties", "losses", "points", "score", "extra"):
        assert key in row
    assert row["extra"]["seed"] >= 1
    assert standings["final_ranking"] == state.final_ranking


def test_match_spec_and_seed() -> None:
    cfg = make_config([{"name": "st", "planner": "system_test"}], 2)
    m = advance(cfg, {}).matches[0]
    spec = match_spec(cfg, m)
    assert spec.entries["e001~mirror"].digest == spec.entries["e001"].digest
    assert spec.board_text == cfg.game_rules().default_board()
    assert spec.seed == match_seed(cfg, m) and 0 <= spec.seed < 2**63
    assert match_seed(cfg, m) != match_seed(cfg, advance(cfg, {}).matches[1])
