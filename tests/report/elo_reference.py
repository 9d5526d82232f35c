"""The original pure-Python Elo fit (dense Newton, exact inverse), kept as the
reference that ``runner.domain.ratings.elo_ratings`` must reproduce on small pools."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from runner.domain.match_values import GameRecord, VerdictKind
from runner.domain.ratings import ELO_SCALE, Z95, EloRating
from runner.domain.scoring import effective_winner


def _counts(game: GameRecord) -> bool:
    return game.verdict.kind is not VerdictKind.SYSTEM_ERROR


def reference_elo_ratings(
    games: Iterable[GameRecord],
    *,
    base: float = 1500.0,
    prior_draws: float = 2.0,
    entries: Sequence[str] = (),
    max_iter: int = 100,
) -> list[EloRating]:
    """Elo ratings from the two-player games among ``games`` (others ignored).

    ``entries`` adds entries that may have played no game (they get ``base``
    and the prior's error bar). Sorted by rating, best first.
    """
    names: list[str] = list(dict.fromkeys(entries))
    index: dict[str, int] = {n: i for i, n in enumerate(names)}
    pair_games: dict[tuple[int, int], float] = {}  # (i, j), i < j -> games
    pair_score: dict[tuple[int, int], float] = {}  # (i, j), i < j -> i's score
    played: dict[str, int] = {}
    scored: dict[str, float] = {}
    for g in games:
        if len(g.order) != 2 or not _counts(g) or g.order[0] == g.order[1]:
            continue
        a, b = g.order
        for name in (a, b):
            if name not in index:
                index[name] = len(names)
                names.append(name)
        winner = effective_winner(g)
        s_a = 1.0 if winner == a else 0.0 if winner == b else 0.5
        i, j = index[a], index[b]
        key, s_i = ((i, j), s_a) if i < j else ((j, i), 1.0 - s_a)
        pair_games[key] = pair_games.get(key, 0.0) + 1.0
        pair_score[key] = pair_score.get(key, 0.0) + s_i
        played[a] = played.get(a, 0) + 1
        played[b] = played.get(b, 0) + 1
        scored[a] = scored.get(a, 0.0) + s_a
        scored[b] = scored.get(b, 0.0) + 1.0 - s_a
    n = len(names)
    if n == 0:
        return []
    prior = max(prior_draws, 1e-6)  # the prior keeps the Hessian invertible
    theta = [0.0] * n
    hess: list[list[float]] = []
    for _ in range(max_iter):
        grad, hess = _gradient_hessian(theta, pair_games, pair_score, prior)
        step = _solve_spd([row[:] for row in hess], grad)  # (-H) step = grad
        biggest = max(abs(s) for s in step)
        damp = 1.0 if biggest <= 2.0 else 2.0 / biggest  # no wild first steps
        theta = [t + damp * s for t, s in zip(theta, step, strict=True)]
        if biggest < 1e-10:
            break
    _, hess = _gradient_hessian(theta, pair_games, pair_score, prior)
    variances = _centred_variances(_inverse(hess))
    mean = sum(theta) / n
    out = [
        EloRating(
            entry=name,
            elo=base + (theta[k] - mean) * ELO_SCALE,
            ci95=Z95 * math.sqrt(max(variances[k], 0.0)) * ELO_SCALE,
            games=played.get(name, 0),
            score=scored.get(name, 0.0),
        )
        for k, name in enumerate(names)
    ]
    return sorted(out, key=lambda r: (-r.elo, r.entry))


def _sigmoid(x: float) -> float:
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def _gradient_hessian(
    theta: list[float],
    pair_games: dict[tuple[int, int], float],
    pair_score: dict[tuple[int, int], float],
    prior: float,
) -> tuple[list[float], list[list[float]]]:
    """Gradient of the log-likelihood and the *negative* Hessian (positive definite)."""
    n = len(theta)
    grad = [0.0] * n
    neg_h = [[0.0] * n for _ in range(n)]
    for k in range(n):
        p = _sigmoid(theta[k])  # virtual draws against an average (theta 0) opponent
        grad[k] += prior * (0.5 - p)
        neg_h[k][k] += prior * p * (1.0 - p)
    for (i, j), games in pair_games.items():
        p = _sigmoid(theta[i] - theta[j])
        r = pair_score[(i, j)] - games * p
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
            s = a[i][j] - sum(row_i[k] * row_j[k] for k in range(j))
            if i == j:
                row_i[i] = math.sqrt(max(s, 1e-300))
            else:
                row_i[j] = s / row_j[j]
    return low


def _cholesky_solve(low: list[list[float]], b: list[float]) -> list[float]:
    n = len(b)
    y = [0.0] * n
    for i in range(n):
        y[i] = (b[i] - sum(low[i][k] * y[k] for k in range(i))) / low[i][i]
    x = [0.0] * n
    for i in reversed(range(n)):
        x[i] = (y[i] - sum(low[k][i] * x[k] for k in range(i + 1, n))) / low[i][i]
    return x


def _solve_spd(a: list[list[float]], b: list[float]) -> list[float]:
    return _cholesky_solve(_cholesky(a), b)


def _inverse(a: list[list[float]]) -> list[list[float]]:
    """The inverse of ``a`` (symmetric positive definite), as columns."""
    low = _cholesky(a)
    n = len(a)
    cols = []
    for k in range(n):
        unit = [0.0] * n
        unit[k] = 1.0
        cols.append(_cholesky_solve(low, unit))
    return cols


def _centred_variances(cov: list[list[float]]) -> list[float]:
    """Variances of ``theta_i - mean(theta)``.

    Games only tell rating differences apart; the pool's overall level is
    pinned by the prior alone and so is very uncertain. Reported ratings are
    relative to the pool's mean, so that common shift must not count:
    ``var(t_i - m) = C_ii - 2/n sum_j C_ij + 1/n^2 sum_jk C_jk``.
    """
    n = len(cov)
    row_sums = [sum(col) for col in cov]  # symmetric: column sums = row sums
    total = sum(row_sums)
    return [cov[i][i] - 2.0 * row_sums[i] / n + total / (n * n) for i in range(n)]
