"""SPSA (runner.domain.spsa, runner.domain.stages.spsa) on synthetic results: fishtest's gains,
the update rule, stochastic rounding, the plan an iteration at a time, and resume."""

from __future__ import annotations

import math
import random
import re
from typing import Any

import pytest
from pydantic import ValidationError

from runner.config import TournamentConfig
from runner.domain.match_values import GameRecord, MatchPlan, Verdict, VerdictKind
from runner.domain.spsa import Gains, Step, pair_result, perturbed, step, stochastic_round
from runner.domain.stage_models import SpsaStage
from runner.domain.stages import spsa as spsa_stage
from runner.domain.stages.base import TournamentState
from runner.domain.stages.requirements import admission
from runner.domain.stages.tournament import advance, match_spec
from tests.stages.sim import make_config

NORMAL = Verdict(VerdictKind.NORMAL, None, "")
SKILL = {"name": "Skill Level", "start": 5, "min": 0, "max": 20, "c_end": 2, "r_end": 0.05}


def _config(
    n: int = 1, params: list[dict[str, Any]] | None = None, seed: int = 7, **options: Any
) -> TournamentConfig:
    stage = {
        "name": "tune",
        "planner": "spsa",
        "pairs": 24,
        "batch": 8,
        "params": params or [SKILL],
        **options,
    }
    return make_config([stage], n, boards={}, seed=seed)


# -- the gains, as fishtest defines them --------------------------------------------------


def _fishtest_gains(
    c_end: float, r_end: float, num_games: int, a_ratio: float, k: int
) -> tuple[float, float]:
    """fishtest's c_k and R_k for pair k, worked out as its server does (parse_spsa_params:
    A, c, a_end, a; build_spsa_worker_step: c / iter^gamma, a / (A + iter)^alpha / c^2; its
    iter_local is our k), with its default alpha 0.602 and gamma 0.101."""
    alpha, gamma = 0.602, 0.101
    num_iter = num_games // 2
    big_a = int(a_ratio * num_games / 2)
    c = c_end * num_iter**gamma
    a = r_end * c_end**2 * (big_a + num_iter) ** alpha
    c_k = c / k**gamma
    return c_k, a / (big_a + k) ** alpha / c_k**2


@pytest.mark.parametrize(
    ("c_end", "r_end", "pairs", "a_ratio"), [(2, 0.002, 30_000, 0.1), (3, 0.06, 32, 0.1), (0.5, 0.01, 7, 0.0)]
)
def test_the_gains_are_fishtests_and_end_at_c_end_and_r_end(
    c_end: float, r_end: float, pairs: int, a_ratio: float
) -> None:
    g = Gains.of(c_end, r_end, pairs, a_ratio, 0.602, 0.101)
    assert int(a_ratio * pairs) == g.A
    for k in (1, 2, pairs // 2 + 1, pairs):
        c_k, r_k = _fishtest_gains(c_end, r_end, 2 * pairs, a_ratio, k)
        assert g.c_k(k) == pytest.approx(c_k, rel=1e-12)
        assert g.r_k(k) == pytest.approx(r_k, rel=1e-12)
    # by construction the last pair perturbs by c_end and learns at r_end
    assert g.c_k(pairs) == pytest.approx(c_end)
    assert g.r_k(pairs) == pytest.approx(r_end)
    # both shrink as the tuning goes on: early pairs explore wider and move further
    assert g.c_k(1) >= g.c_k(pairs) and g.a_k(1) >= g.a_k(pairs)


def test_the_first_pair_of_a_30000_pair_tuning_in_numbers() -> None:
    # fishtest's defaults with c_end 2, r_end 0.002 over 60,000 games: c = 2 * 30000^0.101
    g = Gains.of(2, 0.002, 30_000, 0.1, 0.602, 0.101)
    assert g.A == 3000
    assert g.c == pytest.approx(5.6653, abs=1e-3)  # 30000^0.101 = e^(0.101 * 10.309) = 2.8326
    assert g.a == pytest.approx(0.002 * 4 * 33000**0.602, rel=1e-12)
    assert g.a == pytest.approx(4.1999, abs=1e-3)  # 0.008 * e^(0.602 * 10.404) = 0.008 * 525.0


# -- the update rule and the rounding ---------------------------------------------------


def test_the_update_moves_towards_the_seat_that_scored_and_is_clipped() -> None:
    s = Step(c=2.0, r=0.1, flip=1)
    # theta+ (theta + 2) won both games: theta moves up by R * c * 2
    assert s.moved(5.0, 2.0, 0, 20) == pytest.approx(5.4)
    assert s.moved(5.0, -1.0, 0, 20) == pytest.approx(4.8)
    assert s.moved(5.0, 0.0, 0, 20) == 5.0
    # flip -1: the theta+ seat played theta - 2, so its win says "lower is better"
    assert Step(c=2.0, r=0.1, flip=-1).moved(5.0, 2.0, 0, 20) == pytest.approx(4.6)
    assert Step(c=2.0, r=10.0, flip=1).moved(5.0, 2.0, 0, 20) == 20  # clipped to max
    assert Step(c=2.0, r=10.0, flip=-1).moved(5.0, 2.0, 0, 20) == 0  # and to min
    assert perturbed(19.0, s, 1, 0, 20) == 20 and perturbed(19.0, s, -1, 0, 20) == 17
    assert pair_result([1.0, 0.5]) == 1.0 and pair_result([0.0, 0.0]) == -2.0 and pair_result([1, 0]) == 0


def test_stochastic_rounding_is_right_on_average() -> None:
    rng = random.Random(5)
    for value in (5.0, 5.25, 7.9, 0.5):
        draws = [stochastic_round(value, rng.random()) for _ in range(20_000)]
        assert set(draws) <= {math.floor(value), math.floor(value) + 1}
        assert sum(draws) / len(draws) == pytest.approx(value, abs=0.02)


# -- the plan ---------------------------------------------------------------------------


def _game(order: tuple[str, ...], winner: str | None) -> GameRecord:
    return GameRecord(list(order), winner, {p: 0 for p in order}, NORMAL, [])


def _stronger_wins(m: MatchPlan, rng: random.Random, elo_per_unit: float = 40.0) -> list[GameRecord]:
    """Each seat's option value is its strength: elo_per_unit Elo per unit, a fifth of games drawn."""
    value = {o.player: o.value for o in m.seat_options}
    games = []
    for a, b in m.orders:
        p_a = 1 / (1 + 10 ** (-elo_per_unit * (value[a] - value[b]) / 400))
        winner = None if rng.random() < 0.2 else a if rng.random() < p_a else b
        games.append(_game((a, b), winner))
    return games


def _run(
    cfg: TournamentConfig, seed: int = 1, **kw: float
) -> tuple[TournamentState, dict[str, list[GameRecord]]]:
    rng = random.Random(seed)
    results: dict[str, list[GameRecord]] = {}
    for _ in range(1000):
        state = advance(cfg, results)
        if state.finished:
            return state, results
        pending = [m for m in state.matches if m.match_id not in results]
        assert pending, "nothing to play but the stage is not done"
        for m in pending:
            results[m.match_id] = _stronger_wins(m, rng, **kw)
    raise AssertionError("the tuning never ended")


def test_an_iteration_is_a_batch_of_colour_swapped_pairs_at_theta_plus_and_minus_c() -> None:
    cfg = _config()
    state = advance(cfg, {})
    assert [m.pairing for m in state.matches] == list(range(8))  # one batch, nothing beyond
    assert state.waits_for_every_result
    g = Gains.of(2, 0.05, 24, 0.1, 0.602, 0.101)
    flips = set()
    for m in state.matches:
        assert m.round == 1
        assert m.orders == (("e001~plus", "e001~minus"), ("e001~minus", "e001~plus"))
        plus, minus = m.options_of("e001~plus")["Skill Level"], m.options_of("e001~minus")["Skill Level"]
        c = g.c_k(m.pairing + 1)
        # whole numbers, each within one of theta + c*flip and theta - c*flip, on opposite sides of 5
        flip = 1 if plus > minus else -1
        flips.add(flip)
        assert abs(plus - (5 + c * flip)) < 1 and abs(minus - (5 - c * flip)) < 1
        assert isinstance(plus, int) and isinstance(minus, int)
        # the worker gets the values as the seats' engine options, over the entry's own
        spec = match_spec(cfg, m)
        assert spec.entries["e001~plus"].engine["options"] == {"Skill Level": plus}
        assert spec.entries["e001~minus"].engine["options"] == {"Skill Level": minus}
        assert spec.entries["e001~plus"].digest == spec.entries["e001~minus"].digest  # one program
    assert flips == {1, -1}  # the signs are drawn, not fixed


def test_theta_moves_once_an_iteration_is_complete_by_fishtests_rule() -> None:
    cfg = _config()
    rng = random.Random(3)
    first = advance(cfg, {}).matches
    results: dict[str, list[GameRecord]] = {}
    for m in first[:-1]:
        results[m.match_id] = _stronger_wins(m, rng)
    # seven of eight in: still the first batch, theta unchanged
    state = advance(cfg, results)
    assert [m.match_id for m in state.matches] == [m.match_id for m in first]
    assert state.stages[0].tuning is not None and state.stages[0].tuning.params[0].values == (5.0,)
    results[first[-1].match_id] = _stronger_wins(first[-1], rng)
    state = advance(cfg, results)
    assert [m.pairing for m in state.matches] == list(range(16))
    # theta after the batch, worked out again pair by pair with the rule
    g = Gains.of(2, 0.05, 24, 0.1, 0.602, 0.101)
    theta = 5.0
    for m in first:
        plus, minus = m.options_of("e001~plus")["Skill Level"], m.options_of("e001~minus")["Skill Level"]
        flip = 1 if plus > minus else -1
        points = [
            1.0 if g_.winner == "e001~plus" else 0.5 if g_.winner is None else 0.0
            for g_ in results[m.match_id]
        ]
        theta = step(g, m.pairing + 1, flip).moved(theta, pair_result(points), 0, 20)
    tuning = state.stages[0].tuning
    assert tuning is not None
    assert tuning.pairs == (0, 8) and tuning.params[0].values[0] == 5.0
    assert tuning.params[0].values[1] == pytest.approx(theta) and theta != 5.0
    # the second batch is played around the new theta
    for m in state.matches[8:]:
        assert m.round == 2
        plus, minus = m.options_of("e001~plus")["Skill Level"], m.options_of("e001~minus")["Skill Level"]
        assert abs((plus + minus) / 2 - theta) <= 1


def test_a_stronger_value_pulls_theta_up_and_the_stage_reports_it() -> None:
    risen = []
    for seed in range(10):
        state, _ = _run(_config(seed=seed, pairs=48), seed=seed)
        st = state.stages[0]
        assert st.status == "done" and len(state.matches) == 48
        tuning = st.tuning
        assert tuning is not None and tuning.pairs == (0, 8, 16, 24, 32, 40, 48)
        risen.append(tuning.params[0].last)
        row = st.standings[0]
        assert row.entry == "e001" and row.games == 96
        assert row.extra["Skill Level"] == pytest.approx(tuning.params[0].last, abs=1e-4)
        assert row.status == f"tuned: Skill Level {tuning.params[0].last:.2f}"
        assert st.notes[1] == f"Skill Level: 5 -> {tuning.params[0].last:.2f} in [0, 20]"
    assert min(risen) > 6, risen


def test_two_options_move_independently_towards_their_own_better_side() -> None:
    up = {"name": "Up", "start": 50, "min": 0, "max": 100, "c_end": 5, "r_end": 0.05}
    down = {"name": "Down", "start": 50, "min": 0, "max": 100, "c_end": 5, "r_end": 0.05}
    tuned = [
        _two_options(_config(params=[up, down], pairs=64, batch=16, seed=seed), seed) for seed in range(8)
    ]
    # each run is noisy (the other option's sign is noise to this one's); on average both are clear
    assert sum(t["Up"] for t in tuned) / 8 > 56 and sum(t["Down"] for t in tuned) / 8 < 44, tuned


def _two_options(cfg: TournamentConfig, seed: int) -> dict[str, float]:
    rng = random.Random(seed)
    results: dict[str, list[GameRecord]] = {}
    while not (state := advance(cfg, results)).finished:
        for m in state.matches:
            if m.match_id in results:
                continue
            o = {p: m.options_of(p) for p in m.players}
            strength = {p: o[p]["Up"] - o[p]["Down"] for p in m.players}  # 1 Elo-ish unit each
            games = []
            for a, b in m.orders:
                p_a = 1 / (1 + 10 ** (-8 * (strength[a] - strength[b]) / 400))
                games.append(_game((a, b), a if rng.random() < p_a else b))
            results[m.match_id] = games
    tuning = state.stages[0].tuning
    assert tuning is not None
    return tuning.tuned()


# -- resume: the same results, the same theta ---------------------------------------------


def test_replanning_from_the_same_results_gives_the_same_theta_and_matches() -> None:
    cfg = _config(pairs=40)
    state, results = _run(cfg, seed=4)
    tuning = state.stages[0].tuning
    # a resumed run: a new process (no fold kept), the results read back as new objects
    spsa_stage._FOLDS.clear()
    again = advance(_config(pairs=40), {k: list(v) for k, v in results.items()}, slots=4)
    assert again.stages[0].tuning == tuning
    assert [m.match_id for m in again.matches] == [m.match_id for m in state.matches]
    assert [m.seat_options for m in again.matches] == [m.seat_options for m in state.matches]
    # in the middle of an iteration too: the batch in flight is planned exactly as before
    partial = {m.match_id: results[m.match_id] for m in state.matches[:21]}
    spsa_stage._FOLDS.clear()
    mid = advance(cfg, dict(partial))
    assert [m.match_id for m in mid.matches] == [m.match_id for m in state.matches[:24]]
    assert mid.stages[0].tuning is not None and mid.stages[0].tuning.pairs == (0, 8, 16)
    assert tuning is not None and mid.stages[0].tuning.params[0].values == tuning.params[0].values[:3]


def test_theta_does_not_depend_on_the_order_results_arrive_in() -> None:
    cfg = _config()
    rng = random.Random(2)
    batch = advance(cfg, {}).matches
    games = {m.match_id: _stronger_wins(m, rng) for m in batch}
    forward: dict[str, list[GameRecord]] = {}
    for m in batch:
        forward[m.match_id] = games[m.match_id]
        advance(cfg, forward)
    spsa_stage._FOLDS.clear()
    backward: dict[str, list[GameRecord]] = {}
    for m in reversed(batch):
        backward[m.match_id] = games[m.match_id]
        advance(cfg, backward)
    a, b = advance(cfg, forward), advance(cfg, backward)
    assert a.stages[0].tuning == b.stages[0].tuning
    assert [m.match_id for m in a.matches] == [m.match_id for m in b.matches]


def test_a_changed_result_moves_theta_and_replans_the_later_pairs_with_new_ids() -> None:
    cfg = _config(pairs=16)
    state, results = _run(cfg, seed=6)
    first = state.matches[:8]
    # a rerun accepted for pair 0 reverses its result (a new results object, as the store gives)
    m0 = first[0]
    flipped = [
        _game(tuple(g.order), next(p for p in g.order if p != g.winner) if g.winner else g.order[0])
        for g in results[m0.match_id]
    ]
    changed = {**results, m0.match_id: flipped}
    after = advance(cfg, changed)
    assert [m.match_id for m in after.matches[:8]] == [m.match_id for m in first]  # the batch stays
    assert after.stages[0].tuning != state.stages[0].tuning
    assert after.stages[0].status != "done" or after.matches[8:] != state.matches[8:]
    moved = after.stages[0].tuning
    assert moved is not None and moved.params[0].values[1] != state.stages[0].tuning.params[0].values[1]  # type: ignore[union-attr]
    # a later pair whose values changed is a new match: its old result is not taken for it
    old_ids = {m.match_id for m in state.matches[8:]}
    for m in after.matches[8:]:
        old = next(o for o in state.matches[8:] if o.pairing == m.pairing)
        assert (m.match_id in old_ids) == (m.seat_options == old.seat_options)


# -- the config ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("param", "message"),
    [
        ({**SKILL, "min": 20, "max": 0}, "min (20) must be below max (0)"),
        ({**SKILL, "start": 30}, "start (30) must lie in [0, 20]"),
        ({**SKILL, "c_end": 0}, "greater than 0"),
        ({**SKILL, "r_end": -1}, "greater than or equal to 0"),
    ],
)
def test_a_bad_parameter_is_refused_with_its_reason(param: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=re.escape(message)):
        SpsaStage.model_validate({"name": "t", "planner": "spsa", "pairs": 10, "params": [param]})


def test_an_option_is_tuned_once_and_one_engine_at_a_time() -> None:
    with pytest.raises(ValidationError, match="repeated: Skill Level"):
        SpsaStage.model_validate({"name": "t", "planner": "spsa", "pairs": 10, "params": [SKILL, SKILL]})
    st = SpsaStage.model_validate({"name": "t", "planner": "spsa", "pairs": 10, "params": [SKILL]})
    assert admission(st, 1).objections == ()
    (objection,) = admission(st, 3).objections
    assert "tunes one engine, but up to 3 entries reach stage 't': name it with engine" in objection.message
    named = SpsaStage.model_validate(
        {"name": "t", "planner": "spsa", "pairs": 10, "params": [SKILL], "engine": "e002"}
    )
    assert admission(named, 3).out == 1 and admission(named, 3).objections == ()
    state = advance(_config(n=3, engine="e002"), {})
    assert {m.players for m in state.matches} == {("e002~plus", "e002~minus")}
