"""The SPRT math (runner.domain.sprt) against values worked out independently.

The reference LLR is computed here by a different, obviously correct method: maximise the
pentanomial log-likelihood sum_i phat_i log p_i directly with scipy's SLSQP under the
hypothesis' constraint (expected score for ``logistic``, t-value for ``normalized``), then
N * sum_i phat_i log(p1_i / p0_i). The module solves the same maxima by the secular
equation and a fixed point instead, in pure Python.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from runner.domain.sprt import (
    CELL_SCORES,
    ELO_BOUND_LIMIT,
    EMPTY_CELL,
    NELO_PER_T,
    Pentanomial,
    SprtBounds,
    SprtModel,
    cell_of,
    elo_bound_problem,
    elo_estimate,
    llr,
)

A = np.array(CELL_SCORES)


def _constrained_mle(phat: np.ndarray, constraint: object) -> np.ndarray:
    # imported here: scipy.optimize costs 0.6 s of CPU to import, which every pytest-xdist
    # worker would pay while collecting, not only the one that runs these tests
    from scipy.optimize import minimize

    res = minimize(
        lambda p: -float(np.sum(phat * np.log(p))),
        phat,
        method="SLSQP",
        bounds=[(1e-12, 1.0)] * 5,
        constraints=[
            {"type": "eq", "fun": lambda p: float(np.sum(p) - 1)},
            {"type": "eq", "fun": constraint},
        ],
        options={"ftol": 1e-15, "maxiter": 1000},
    )
    assert res.success, res.message
    return np.asarray(res.x)


def reference_llr(counts: tuple[int, ...], elo0: float, elo1: float, model: str) -> float:
    c = np.array([x if x > 0 else EMPTY_CELL for x in counts], dtype=float)
    n = c.sum()
    phat = c / n

    def mle(elo: float) -> np.ndarray:
        if model == "logistic":
            s = 1 / (1 + 10 ** (-elo / 400))
            return _constrained_mle(phat, lambda p: float(p @ A - s))
        t = elo / NELO_PER_T * math.sqrt(2)

        def t_gap(p: np.ndarray) -> float:
            mu = p @ A
            return float((mu - 0.5) - t * math.sqrt(p @ (A - mu) ** 2))

        return _constrained_mle(phat, t_gap)

    p0, p1 = mle(elo0), mle(elo1)
    return float(n * np.sum(phat * (np.log(p1) - np.log(p0))))


CASES = [
    ((10, 50, 200, 60, 15), 0.0, 5.0),
    ((10, 50, 200, 60, 15), -2.0, 2.0),
    ((40, 90, 120, 80, 30), 0.0, 10.0),
    ((0, 3, 20, 9, 2), 0.0, 5.0),  # an empty cell: regularised as fishtest does
    ((100, 20, 10, 5, 1), 0.0, 5.0),  # far below H0
    ((1, 5, 10, 40, 60), 0.0, 50.0),
]


@pytest.mark.parametrize("model", ["logistic", "normalized"])
@pytest.mark.parametrize(("counts", "elo0", "elo1"), CASES)
def test_llr_matches_a_direct_constrained_maximum_likelihood(
    counts: tuple[int, int, int, int, int], elo0: float, elo1: float, model: str
) -> None:
    got = llr(Pentanomial(counts), elo0, elo1, model)  # type: ignore[arg-type]
    want = reference_llr(counts, elo0, elo1, model)
    assert got == pytest.approx(want, rel=1e-5, abs=1e-6)


def test_logistic_llr_is_close_to_the_published_brownian_approximation() -> None:
    # GSPRT_approximation.pdf: LLR ~ N (s1 - s0)(2 mu - s0 - s1) / (2 var) for small Elo gaps
    counts = (400, 1800, 5200, 2000, 500)
    s0, s1 = 0.5, 1 / (1 + 10 ** (-5 / 400))
    n = sum(counts)
    p = np.array(counts) / n
    mu = p @ A
    var = p @ (A - mu) ** 2
    approx = n * (s1 - s0) * (2 * mu - s0 - s1) / (2 * var)
    assert llr(Pentanomial(counts), 0, 5, "logistic") == pytest.approx(approx, rel=0.01)


def test_llr_grows_with_evidence_and_changes_sign_with_the_hypotheses() -> None:
    strong = Pentanomial((5, 20, 100, 60, 30))
    assert llr(strong, 0, 10, "logistic") > 0
    assert llr(strong, 10, 0, "logistic") == pytest.approx(-llr(strong, 0, 10, "logistic"))
    doubled = Pentanomial(tuple(2 * c for c in strong.counts))  # type: ignore[arg-type]
    assert llr(doubled, 0, 10, "normalized") == pytest.approx(2 * llr(strong, 0, 10, "normalized"))
    assert llr(Pentanomial(), 0, 10, "normalized") == 0.0


def test_bounds_are_walds() -> None:
    b = SprtBounds.of(0.05, 0.05)
    assert b.lower == pytest.approx(-2.944438979)
    assert b.upper == pytest.approx(2.944438979)
    assert b.decision(3.0) == "H1" and b.decision(-3.0) == "H0" and b.decision(0.0) is None
    with pytest.raises(ValueError, match="alpha and beta"):
        SprtBounds.of(0.6, 0.5)


def test_pentanomial_cells_from_pair_points() -> None:
    p = Pentanomial.from_pair_points([0, 0.5, 1, 1, 1.5, 2, 2, 2])
    assert p.counts == (1, 1, 2, 1, 3)
    assert p.as_dict() == {"LL": 1, "LD": 1, "DD+WL": 2, "WD": 1, "WW": 3}
    assert p.games == 16
    with pytest.raises(ValueError, match="game pair scores"):
        cell_of(0.75)


def test_elo_estimate_from_pairs() -> None:
    # worked by hand: per-game score mu = (50*.25 + 200*.5 + 60*.75 + 15)/335, pair variance
    # around it; Elo = -400 log10(1/mu - 1), the 95% interval mapped through the same curve
    counts = (10, 50, 200, 60, 15)
    n = sum(counts)
    p = np.array(counts) / n
    mu = float(p @ A)
    se = math.sqrt(float(p @ (A - mu) ** 2) / n)

    def elo(s: float) -> float:
        return -400 * math.log10(1 / s - 1)

    est = elo_estimate(Pentanomial(counts))
    assert est.elo == pytest.approx(elo(mu))
    assert est.error == pytest.approx((elo(mu + 1.959964 * se) - elo(mu - 1.959964 * se)) / 2, rel=1e-5)
    assert est.pairs == n
    assert elo_estimate(Pentanomial((0, 0, 0, 0, 4))).elo is None  # a perfect score: no finite Elo


@pytest.mark.parametrize("model", ["normalized", "logistic"])
def test_every_bound_a_config_may_give_has_an_llr(model: SprtModel) -> None:
    """Bounds up to the limit are worked out for any pairs (an empty cell, one-sided results);
    past it the fixed point has no root and a run would end in a traceback: the config says so."""
    limit = ELO_BOUND_LIMIT[model]
    for counts in ((0, 0, 0, 0, 9), (9, 0, 0, 0, 0), (0, 0, 7, 0, 0), (3, 1, 5, 2, 9), (1, 0, 0, 0, 0)):
        for elo0, elo1 in ((-limit, limit), (0, limit), (-limit, 0)):
            assert math.isfinite(llr(Pentanomial(counts), elo0, elo1, model))
    assert elo_bound_problem(-limit, limit, model) is None
    assert "beyond what" in (elo_bound_problem(0, limit * 1.5, model) or "")
    if model == "normalized":  # and the limit is not a guess: just past 231.6 the LLR fails
        with pytest.raises(ValueError, match="outside the possible scores"):
            llr(Pentanomial((0, 0, 0, 0, 9)), 0, 232, model)
