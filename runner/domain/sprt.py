"""Game-pair statistics: pentanomial counts, Elo with its 95% interval, and the SPRT's
log-likelihood ratio (docs/config.md, "sprt"). Pure math, no I/O.

Two entries play games in colour-swapped *pairs*; a pair's score for the first entry
(``engine``) is 0, 1/2, 1, 3/2 or 2 points, counted in five cells, the *pentanomial*:
LL, LD, DD+WL, WD, WW (fastchess ``-report penta=true``). Scoring pairs rather than games
removes the correlation between a pair's two games (same opening, same board), so the
variance, the Elo interval and the LLR are not overconfident.

Formula sources (Michel Van den Bergh's notes behind fishtest, restated here in our own
code, not copied):

- the maximum-likelihood distribution under a constraint on its expectation (the
  "secular equation"): http://hardy.uhasselt.be/Fishtest/support_MLE_multinomial.pdf,
  Proposition 1.1;
- under a constraint on its t-value (mu - 1/2) / sigma, the fixed point of Section 4.1 of
  https://hardy.uhasselt.be/Fishtest/normalized_elo_practical.pdf, with normalized Elo
  nElo = t * 800 / ln 10 per game, a pair's t-value being sqrt(2) times a game's;
- the generalised SPRT's LLR: N * sum_i phat_i * log(p1_i / p0_i), phat the observed pair
  distribution and p0, p1 the maximum-likelihood distributions under H0 and H1
  (https://hardy.uhasselt.be/Fishtest/GSPRT_approximation.pdf); empty cells get a count of
  1e-3 first, as fishtest does, so that every cell has a positive probability;
- bounds log(beta / (1 - alpha)) and log((1 - beta) / alpha) (Wald).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from statistics import NormalDist
from typing import Literal

SprtModel = Literal["normalized", "logistic"]
CELLS = ("LL", "LD", "DD+WL", "WD", "WW")
#: a pair's score per game, by cell: 0, 1/4, 1/2, 3/4, 1
CELL_SCORES = (0.0, 0.25, 0.5, 0.75, 1.0)
#: normalized Elo per unit of t-value (per game): 800 / ln 10
NELO_PER_T = 800 / math.log(10)
#: the count an empty cell is given before the MLE (fishtest's regularisation)
EMPTY_CELL = 1e-3
Z95 = NormalDist().inv_cdf(0.975)
#: the widest bounds the LLR can be worked out for, by model. Normalized: the t-value fixed
#: point starts from the uniform pair distribution (sigma = sqrt(1/8)), which meets a pair
#: t-value of 1 / (3 sigma) (231.6 normalized Elo) with no root left to find; fishtest's
#: bounds are single digits. Logistic: past about 7,000 the expected score rounds to 1.
ELO_BOUND_LIMIT: dict[str, float] = {"normalized": 200.0, "logistic": 4000.0}


def elo_bound_problem(elo0: float, elo1: float, model: str) -> str | None:
    """Why these SPRT bounds cannot be tested (the config's message), or None if they can."""
    if elo1 <= elo0:
        return f"elo1 ({elo1:g}) must be above elo0 ({elo0:g})"
    limit = ELO_BOUND_LIMIT[model]
    for name, elo in (("elo0", elo0), ("elo1", elo1)):
        if not -limit <= elo <= limit:
            usual = " (fishtest's are a few Elo)" if model == "normalized" else ""
            what = f"{name} ({elo:g}) is beyond what a {model} SPRT can test"
            return f"{what}: expected {-limit:g} to {limit:g}{usual}"
    return None


@dataclass(frozen=True)
class Pentanomial:
    """Game pairs by their score for the first entry: LL, LD, DD+WL, WD, WW."""

    counts: tuple[int, int, int, int, int] = (0, 0, 0, 0, 0)

    @classmethod
    def from_pair_points(cls, points: Iterable[float]) -> Pentanomial:
        """From each pair's points (win 1, draw 1/2, loss 0 per game: 0 .. 2 a pair)."""
        counts = [0, 0, 0, 0, 0]
        for p in points:
            counts[cell_of(p)] += 1
        return cls((counts[0], counts[1], counts[2], counts[3], counts[4]))

    def add(self, pair_points: float) -> Pentanomial:
        c = list(self.counts)
        c[cell_of(pair_points)] += 1
        return Pentanomial((c[0], c[1], c[2], c[3], c[4]))

    def mirrored(self) -> Pentanomial:
        """The same pairs from the other entry's side (its LL is our WW ...)."""
        c = self.counts
        return Pentanomial((c[4], c[3], c[2], c[1], c[0]))

    @property
    def pairs(self) -> int:
        return sum(self.counts)

    @property
    def games(self) -> int:
        return 2 * self.pairs

    def as_dict(self) -> dict[str, int]:
        return dict(zip(CELLS, self.counts, strict=True))

    def __str__(self) -> str:
        return "[" + ", ".join(str(c) for c in self.counts) + "]"


def cell_of(pair_points: float) -> int:
    """The pentanomial cell of a pair that scored ``pair_points`` (0, 1/2, 1, 3/2 or 2)."""
    cell = round(pair_points * 2)
    if not 0 <= cell <= 4 or abs(cell - pair_points * 2) > 1e-9:
        raise ValueError(f"a game pair scores 0, 0.5, 1, 1.5 or 2 points, not {pair_points!r}")
    return cell


# -- Elo with its interval --------------------------------------------------------------


def logistic_elo(score: float) -> float:
    """The Elo difference whose expected score per game is ``score`` (0 < score < 1)."""
    return -400 * math.log10(1 / score - 1)


def expected_score(elo: float) -> float:
    return 1 / (1 + 10 ** (-elo / 400))


@dataclass(frozen=True)
class EloEstimate:
    """The first entry's Elo over the second, with the half-width of its 95% interval; and
    its normalized Elo. None where the score is 0 or 1 (no finite Elo)."""

    elo: float | None
    error: float | None  # elo +- error is the 95% interval (None: unbounded)
    nelo: float | None
    score: float  # per game, 0..1
    pairs: int


def elo_estimate(penta: Pentanomial) -> EloEstimate:
    """Elo +- 95% from the pair scores' mean and variance, as fastchess reports with
    ``-report penta=true``: the interval is that of the mean score, mapped through the
    logistic curve (half its width)."""
    n = penta.pairs
    if n == 0:
        return EloEstimate(None, None, None, 0.5, 0)
    probs = [c / n for c in penta.counts]
    mu, var = _mean_var(CELL_SCORES, probs)
    elo = logistic_elo(mu) if 0 < mu < 1 else None
    se = math.sqrt(var / n)
    lo, hi = mu - Z95 * se, mu + Z95 * se
    error = (logistic_elo(hi) - logistic_elo(lo)) / 2 if elo is not None and lo > 0 and hi < 1 else None
    # a pair's per-game sigma is sqrt(2 var): two games' worth of spread in one pair score
    nelo = (mu - 0.5) / math.sqrt(2 * var) * NELO_PER_T if var > 0 else None
    return EloEstimate(elo, error, nelo, mu, n)


# -- the SPRT -----------------------------------------------------------------------


@dataclass(frozen=True)
class SprtBounds:
    lower: float  # log(beta / (1 - alpha)): at or below it H0 is accepted
    upper: float  # log((1 - beta) / alpha): at or above it H1 is accepted

    @classmethod
    def of(cls, alpha: float, beta: float) -> SprtBounds:
        if not (0 < alpha < 1 and 0 < beta < 1 and alpha + beta < 1):
            raise ValueError(f"alpha and beta must lie in (0, 1) with alpha + beta < 1, not {alpha}, {beta}")
        return cls(math.log(beta / (1 - alpha)), math.log((1 - beta) / alpha))

    def decision(self, llr: float) -> Literal["H0", "H1"] | None:
        if llr >= self.upper:
            return "H1"
        if llr <= self.lower:
            return "H0"
        return None


def llr(penta: Pentanomial, elo0: float, elo1: float, model: SprtModel) -> float:
    """The generalised log-likelihood ratio of H1 (elo1) against H0 (elo0) on ``penta``:
    logistic Elo bounds constrain the expected score, normalized Elo bounds the t-value
    (module doc for the sources). 0 before any pair."""
    if penta.pairs == 0:
        return 0.0
    return _llr_cached(penta.counts, float(elo0), float(elo1), model)


# the planner scans the LLR of every leading run of pairs on each plan: counts repeat from
# one plan to the next, so each is worked out once
@lru_cache(maxsize=1 << 16)
def _llr_cached(counts: tuple[int, ...], elo0: float, elo1: float, model: SprtModel) -> float:
    regular = [c if c > 0 else EMPTY_CELL for c in counts]
    n = sum(regular)
    phat = [c / n for c in regular]
    if model == "logistic":
        p0 = mle_with_mean(phat, expected_score(elo0))
        p1 = mle_with_mean(phat, expected_score(elo1))
    else:
        # a pair's t-value is sqrt(2) times a game's (two games, twice the mean's spread)
        t0, t1 = (elo / NELO_PER_T * math.sqrt(2) for elo in (elo0, elo1))
        p0 = mle_with_t_value(phat, t0)
        p1 = mle_with_t_value(phat, t1)
    return n * sum(p * (math.log(b) - math.log(a)) for p, a, b in zip(phat, p0, p1, strict=True))


def mle_with_mean(phat: Sequence[float], mean: float) -> list[float]:
    """The distribution over ``CELL_SCORES`` with expectation ``mean`` that is most likely to
    have produced the observed ``phat``: p_i = phat_i / (1 + x (a_i - mean)), x the root of
    the secular equation (support_MLE_multinomial.pdf, Prop. 1.1)."""
    shifted = [a - mean for a in CELL_SCORES]
    x = _secular_root(phat, shifted)
    return [p / (1 + x * b) for p, b in zip(phat, shifted, strict=True)]


def mle_with_t_value(phat: Sequence[float], t: float, ref: float = 0.5) -> list[float]:
    """The most likely distribution over ``CELL_SCORES`` whose (mu - ref) / sigma is ``t``:
    the fixed point of normalized_elo_practical.pdf Section 4.1, started from the uniform
    distribution; each step solves a secular equation whose weights come from the last
    step's mu and sigma."""
    p = [1 / len(phat)] * len(phat)
    for _ in range(50):
        mu, var = _mean_var(CELL_SCORES, p)
        sigma = math.sqrt(var)
        weights = [a - ref - t * sigma * (1 + ((mu - a) / sigma) ** 2) / 2 for a in CELL_SCORES]
        x = _secular_root(phat, weights)
        fresh = [q / (1 + x * w) for q, w in zip(phat, weights, strict=True)]
        if max(abs(a - b) for a, b in zip(fresh, p, strict=True)) < 1e-12:
            return fresh
        p = fresh
    return p


def _secular_root(phat: Sequence[float], b: Sequence[float]) -> float:
    """The root x of sum_i phat_i b_i / (1 + x b_i) = 0 with every 1 + x b_i > 0.

    The sum falls strictly as x grows (its derivative is -sum phat_i b_i^2 / (1 + x b_i)^2),
    from +inf at x = -1/max(b) to -inf at x = -1/min(b): one root, found by Newton steps kept
    inside a shrinking bracket (bisection when a step would leave it)."""
    hi_b, lo_b = max(b), min(b)
    if not (hi_b > 0 > lo_b):
        raise ValueError("the constraint lies outside the possible scores")
    lo, hi = -1 / hi_b, -1 / lo_b
    x = 0.0
    for _ in range(200):
        f = sum(p * v / (1 + x * v) for p, v in zip(phat, b, strict=True))
        if f > 0:
            lo = x
        else:
            hi = x
        df = -sum(p * v * v / (1 + x * v) ** 2 for p, v in zip(phat, b, strict=True))
        step = x - f / df if df != 0 else (lo + hi) / 2
        nxt = step if lo < step < hi else (lo + hi) / 2
        if abs(nxt - x) < 1e-15 * max(1.0, abs(x)):
            return nxt
        x = nxt
    return x


def _mean_var(values: Sequence[float], probs: Sequence[float]) -> tuple[float, float]:
    mu = sum(p * v for p, v in zip(probs, values, strict=True))
    return mu, sum(p * (v - mu) ** 2 for p, v in zip(probs, values, strict=True))
