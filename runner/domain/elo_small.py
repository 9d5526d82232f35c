"""The Bradley-Terry fit for small pools, in plain Python (no numpy, no scipy).

``tourney run`` fits Elo ratings once at its end, for the report and the
terminal. For a typical contest (a few dozen entries) the fit itself takes
microseconds, but importing numpy and scipy.sparse for it took most of a
second, paid after the last game, on every run. Up to ``SMALL_LIMIT`` entries
the fit is therefore computed here: the same model, prior, start, damping and
stopping rule as ``runner.domain.elo_fit``'s dense path (Newton's method on
the negative Hessian, the exact covariance from its inverse), with a Cholesky
factorisation instead of LAPACK's solver, so the numbers agree to
floating-point rounding (checked to 1e-9 Elo points by the tests). Larger
pools go to ``elo_fit``, where the cubic Python cost would exceed the import.

``PairTable`` lives here, without numpy, so that ``runner.domain.ratings``
can aggregate results and choose a fit before anything heavy is imported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

#: entries up to which the pure-Python fit runs; its cost grows as n^3 (a round robin of
#: 40 entries: 30-60 ms on this project's loaded 2-core machine, under numpy's import alone)
SMALL_LIMIT = 40
STEP_TOL = 1e-10  # as ``elo_fit.STEP_TOL``: Newton stops once the largest step is below this


@dataclass(frozen=True)
class PairTable:
    """Results aggregated per pair of entries, hashable so a fit can be cached.

    ``first[k] < second[k]`` index the entries; ``games[k]`` games between them
    in which ``first[k]`` scored ``score[k]`` (win 1, draw 1/2).
    """

    n: int
    first: tuple[int, ...]
    second: tuple[int, ...]
    games: tuple[float, ...]
    score: tuple[float, ...]

    @classmethod
    def of(
        cls, n: int, pair_games: dict[tuple[int, int], float], pair_score: dict[tuple[int, int], float]
    ) -> PairTable:
        keys = list(pair_games)
        return cls(
            n=n,
            first=tuple(i for i, _ in keys),
            second=tuple(j for _, j in keys),
            games=tuple(pair_games[k] for k in keys),
            score=tuple(pair_score[k] for k in keys),
        )


def fit_small(pairs: PairTable, prior: float, max_iter: int = 100) -> tuple[list[float], list[float]]:
    """Maximum-likelihood strengths (natural log-odds units, uncentred) and the
    variances of ``theta_i - mean(theta)``: ``elo_fit.fit_bradley_terry``'s dense path."""
    theta = [0.0] * pairs.n
    for _ in range(max_iter):
        grad, neg_h = _gradient_hessian(pairs, theta, prior)
        step = _cholesky_solve(_cholesky(neg_h), grad)
        biggest = max((abs(s) for s in step), default=0.0)
        damp = 1.0 if biggest <= 2.0 else 2.0 / biggest  # no wild first steps
        theta = [t + damp * s for t, s in zip(theta, step, strict=True)]
        if biggest < STEP_TOL:
            break
    _, neg_h = _gradient_hessian(pairs, theta, prior)
    return theta, _centred_variances(_inverse(neg_h))


def _sigmoid(x: float) -> float:
    return 0.5 * (1.0 + math.tanh(0.5 * x))  # as elo_fit's: stable for any x


def _gradient_hessian(
    pairs: PairTable, theta: list[float], prior: float
) -> tuple[list[float], list[list[float]]]:
    """The log-likelihood's gradient and its *negative* Hessian (positive definite)."""
    n = pairs.n
    grad = [0.0] * n
    neg_h = [[0.0] * n for _ in range(n)]
    for k in range(n):
        p = _sigmoid(theta[k])  # virtual draws against an average (theta 0) opponent
        grad[k] = prior * (0.5 - p)
        neg_h[k][k] = prior * p * (1.0 - p)
    for i, j, games, score in zip(pairs.first, pairs.second, pairs.games, pairs.score, strict=True):
        p = _sigmoid(theta[i] - theta[j])
        r = score - games * p
        grad[i] += r
        grad[j] -= r
        w = games * p * (1.0 - p)
        neg_h[i][i] += w
        neg_h[j][j] += w
        neg_h[i][j] -= w
        neg_h[j][i] -= w
    return grad, neg_h


def _cholesky(a: list[list[float]]) -> list[list[float]]:
    n = len(a)
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        row_i = low[i]
        for j in range(i + 1):
            row_j = low[j]
            s = a[i][j] - math.fsum(row_i[k] * row_j[k] for k in range(j))
            if i == j:
                row_i[i] = math.sqrt(max(s, 1e-300))
            else:
                row_i[j] = s / row_j[j]
    return low


def _cholesky_solve(low: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - math.fsum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - math.fsum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def _inverse(a: list[list[float]]) -> list[list[float]]:
    """The inverse of ``a`` (symmetric positive definite), as columns (= rows)."""
    low = _cholesky(a)
    n = len(a)
    return [_cholesky_solve(low, [1.0 if r == k else 0.0 for r in range(n)]) for k in range(n)]


def _centred_variances(cov: list[list[float]]) -> list[float]:
    """Variances of ``theta_i - mean(theta)`` (why: ``elo_fit._centred_variances``)."""
    n = len(cov)
    row_sums = [math.fsum(col) for col in cov]  # symmetric: column sums = row sums
    total = math.fsum(row_sums)
    return [cov[i][i] - 2.0 * row_sums[i] / n + total / (n * n) for i in range(n)]
