"""The sprt planner (runner.domain.stages.sprt) on synthetic results: pairs, window, stop rule."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest
from pydantic import ValidationError

from runner.config import TournamentConfig
from runner.domain.match_values import GameRecord, MatchPlan, Verdict, VerdictKind
from runner.domain.sprt import Pentanomial, SprtBounds, llr
from runner.domain.stages import sprt as sprt_stage
from runner.domain.stages.base import TournamentState
from runner.domain.stages.requirements import admission
from runner.domain.stages.tournament import advance, standings_document
from tests.stages.sim import make_config

NORMAL = Verdict(VerdictKind.NORMAL, None, "")


def _config(n: int = 2, **options: Any) -> TournamentConfig:
    stage = {"name": "test", "planner": "sprt", "elo0": 0, "elo1": 10, "model": "logistic", **options}
    return make_config([stage], n, boards={})


def _game(order: tuple[str, ...], winner: str | None) -> GameRecord:
    return GameRecord(list(order), winner, {p: 0 for p in order}, NORMAL, [])


def _play(m: MatchPlan, rng: random.Random, p_engine: float) -> list[GameRecord]:
    """The engine (e001) wins each game with p_engine, else a draw half the time."""
    out = []
    for order in m.orders:
        r = rng.random()
        winner = "e001" if r < p_engine else None if r < p_engine + (1 - p_engine) / 2 else "e002"
        out.append(_game(order, winner))
    return out


def _pair_points(games: list[GameRecord]) -> float:
    return sum(1.0 if g.winner == "e001" else 0.5 if g.winner is None else 0.0 for g in games)


def _run(
    cfg: TournamentConfig, slots: int, p_engine: float, seed: int = 1
) -> tuple[TournamentState, dict[str, list[GameRecord]]]:
    """Play every planned pair, a plan's worth at a time, until the stage is done."""
    rng = random.Random(seed)
    results: dict[str, list[GameRecord]] = {}
    for _ in range(5000):
        state = advance(cfg, results, slots=slots)
        if state.finished:
            return state, results
        pending = [m for m in state.matches if m.match_id not in results]
        assert pending, "nothing to play but the stage is not done"
        for m in pending:
            results[m.match_id] = _play(m, rng, p_engine)
    raise AssertionError("the SPRT never stopped")


def test_pairs_are_colour_swapped_and_the_window_is_the_slots() -> None:
    state = advance(_config(), {}, slots=3)
    assert [m.pairing for m in state.matches] == [0, 1, 2]
    for m in state.matches:
        assert m.orders == (("e001", "e002"), ("e002", "e001"))
    assert len(advance(_config(concurrency=5), {}, slots=3).matches) == 5  # config wins


def test_a_clearly_stronger_engine_is_accepted_at_the_first_pair_the_llr_leaves_its_bounds() -> None:
    cfg = _config()
    state, results = _run(cfg, slots=4, p_engine=0.7)
    st = state.stages[0]
    assert st.status == "done"
    assert "H1 accepted" in st.notes[0]
    # the decision, worked out again pair by pair in plan order
    bounds = SprtBounds.of(0.05, 0.05)
    by_pairing = {m.pairing: results[m.match_id] for m in state.matches}
    penta, decided = Pentanomial(), None
    for k in range(len(by_pairing)):
        penta = penta.add(_pair_points(by_pairing[k]))
        if bounds.decision(llr(penta, 0, 10, "logistic")) is not None:
            decided = k + 1
            break
    assert decided is not None
    assert f"after {decided} pairs" in st.notes[0]
    # the pairs in flight when the deciding pair was still unplayed are played and kept: 3 more
    assert len(state.matches) == decided - 1 + 4
    assert sum(r.games for r in st.standings) == 2 * 2 * len(state.matches)
    assert st.standings[0].entry == "e001" and st.standings[0].status == "engine: H1 accepted"
    doc = standings_document(state)["stages"][0]  # tourney standings --json
    assert doc["summary"] == st.summary and st.summary.startswith("SPRT H1 accepted: LLR +")


def test_equal_entries_accept_h0_against_a_large_elo_gap() -> None:
    state, _ = _run(_config(elo0=50, elo1=100), slots=2, p_engine=0.3)
    assert "H0 accepted" in state.stages[0].notes[0]


def test_the_llr_only_reads_the_leading_run_of_played_pairs() -> None:
    cfg = _config()
    state = advance(cfg, {}, slots=3)
    late = state.matches[2]
    results = {late.match_id: [_game(o, "e001") for o in late.orders]}
    later = advance(cfg, results, slots=3)
    assert [m.pairing for m in later.matches] == [0, 1, 2]  # pair 0 unplayed: nothing new planned
    assert "after 0 pairs" in later.stages[0].notes[0]
    first = state.matches[0]
    results[first.match_id] = [_game(o, "e001") for o in first.orders]
    assert [m.pairing for m in advance(cfg, results, slots=3).matches] == [0, 1, 2, 3]


def test_a_smaller_window_on_resume_keeps_every_played_pair() -> None:
    cfg = _config()
    state, results = _run(cfg, slots=8, p_engine=0.8)
    again = advance(cfg, results, slots=1)  # tourney standings / report: one slot
    assert {m.match_id for m in again.matches} == {m.match_id for m in state.matches}
    assert again.stages[0].status == "done"


def test_max_pairs_ends_inconclusive() -> None:
    state, _ = _run(_config(elo0=0, elo1=5, max_pairs=6), slots=2, p_engine=0.3)
    st = state.stages[0]
    assert len(state.matches) == 6
    assert "inconclusive at max_pairs" in st.notes[0]


def test_standings_carry_elo_and_the_pentanomial_of_each_side() -> None:
    state, _ = _run(_config(), slots=2, p_engine=0.7)
    rows = {r.entry: r for r in state.stages[0].standings}
    cells = ("LL", "LD", "DD+WL", "WD", "WW")
    engine = [rows["e001"].extra[c] for c in cells]
    assert engine == list(reversed([rows["e002"].extra[c] for c in cells]))
    assert rows["e001"].extra["elo"] > 0 > rows["e002"].extra["elo"]
    assert rows["e001"].extra["elo±"] > 0


def test_named_engine_and_baseline_among_more_entrants() -> None:
    cfg = _config(3, engine="e003", baseline="e001")
    state = advance(cfg, {}, slots=1)
    assert state.matches[0].orders == (("e003", "e001"), ("e001", "e003"))
    assert admission(cfg.stages[0], 3).objections == ()
    done, _ = _run(cfg, slots=2, p_engine=0.7)
    assert done.stages[0].advancing == ["e001", "e003"] and done.final_ranking[2] == "e002"  # e001 won
    assert admission(_config(3).stages[0], 3).objections  # unnamed: exactly two entrants


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"elo0": 5, "elo1": 5}, "elo1 (5) must be above elo0"),
        (
            {"elo1": 300, "model": "normalized"},
            "elo1 (300) is beyond what a normalized SPRT can test: expected -200 to",
        ),
        ({"elo0": -5000, "elo1": 0, "model": "logistic"}, "elo0 (-5000) is beyond what a logistic SPRT"),
        ({"engine": "e001"}, "name both engine and baseline"),
        ({"alpha": 0.6, "beta": 0.5}, "alpha + beta must be below 1"),
    ],
)
def test_bad_options_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        _config(**options)


def _outcome(state: TournamentState) -> tuple[object, ...]:
    st = state.stages[0]
    return ([m.match_id for m in state.matches], st.status, st.notes, st.summary, st.standings)


def test_folding_results_in_gives_what_planning_from_nothing_gives() -> None:
    cfg = _config(elo0=-2, elo1=2, alpha=0.001, beta=0.001)
    rng = random.Random(4)
    results: dict[str, list[GameRecord]] = {}
    for _ in range(12):
        state = advance(cfg, results, slots=5)
        fold = next(iter(sprt_stage._FOLDS.values()))
        sprt_stage._FOLDS.clear()
        assert _outcome(advance(cfg, results, slots=5)) == _outcome(state)
        sprt_stage._FOLDS.clear()
        advance(cfg, results, slots=5)
        pending = [m for m in state.matches if m.match_id not in results]
        for m in pending[::-1][:3]:  # out of order: the last pairs of the window first
            results[m.match_id] = _play(m, rng, 0.4)
    # an accepted rerun replaces a folded result: the next plan starts a fresh fold
    first = state.matches[0].match_id
    before = advance(cfg, results, slots=5)
    assert first in results and "running, LLR" in before.stages[0].notes[0]
    fold = next(iter(sprt_stage._FOLDS.values()))
    results[first] = [_game(o, "e002") for o in state.matches[0].orders]
    after = advance(cfg, results, slots=5)
    assert next(iter(sprt_stage._FOLDS.values())) is not fold
    sprt_stage._FOLDS.clear()
    assert _outcome(advance(cfg, results, slots=5)) == _outcome(after) != _outcome(before)
