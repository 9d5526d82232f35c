"""The Bradley-Terry maximum-likelihood fit behind ``runner.domain.ratings.elo_ratings``.

The model and its prior are described in ``runner.domain.ratings``. This module only
decides how to compute the optimum and its error bars so that the cost stays
small at any size:

Small pools (``n <= DENSE_LIMIT`` entries)
    (``runner.domain.ratings`` sends pools of up to ``elo_small.SMALL_LIMIT``
    entries to ``runner.domain.elo_small`` instead: the same steps in plain
    Python, without this module's imports.)
    Newton's method on the dense negative Hessian (numpy), and the exact
    covariance from its inverse: the same computation as the original
    pure-Python fit, so the same numbers up to floating-point rounding
    (checked to 1e-6 Elo points against it by the tests).

Large pools
    The negative Hessian is a weighted graph Laplacian (one edge per pair that
    met) plus the prior's diagonal, so it is sparse: about ``n + 2 * pairs``
    non-zeros. Newton steps are solved by conjugate gradients with a Jacobi
    preconditioner on the sparse matrix (scipy.sparse), never forming a dense
    n x n matrix. The error bars need the diagonal of the centred inverse,
    which has no cheap exact form; it is estimated with Hutchinson's
    estimator, ``diag(C) ~ mean_k z_k * (C z_k)``, over ``PROBES`` seeded
    Rademacher vectors (solved together as one block of conjugate gradients).
    The estimate is unbiased; its relative error on each variance is about
    ``1 / sqrt(PROBES * games per entry)``, so a 95% half-width is within a
    few per cent of the exact one (checked against the dense path by the
    tests). The probes are seeded, so the same games give the same numbers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from runner.domain.elo_small import PairTable

if TYPE_CHECKING:  # imported where used: only the sparse path needs scipy (about 0.3 s to import)
    import scipy.sparse as sp

__all__ = ["PairTable", "block_pcg", "fit_bradley_terry"]

DENSE_LIMIT = 1500  # entries; a dense n x n Newton step costs O(n^3) beyond this
PROBES = 96  # Hutchinson probe vectors for the sparse error bars
CG_RTOL = 1e-10  # relative residual of the Newton steps' conjugate gradients
PROBE_RTOL = 1e-6  # relative residual for the probes (the estimate's noise is far larger)
CG_MAX_ITER = 5_000
STEP_TOL = 1e-10  # Newton stops once the largest step (log-odds units) is below this

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]


def _sigmoid(x: FloatArray) -> FloatArray:
    out: FloatArray = 0.5 * (1.0 + np.tanh(0.5 * x))  # stable for any x
    return out


class _Model:
    def __init__(self, pairs: PairTable, prior: float) -> None:
        self.n = pairs.n
        self.i: IntArray = np.asarray(pairs.first, dtype=np.int64)
        self.j: IntArray = np.asarray(pairs.second, dtype=np.int64)
        self.games: FloatArray = np.asarray(pairs.games, dtype=np.float64)
        self.score: FloatArray = np.asarray(pairs.score, dtype=np.float64)
        self.prior = prior

    def gradient_and_weights(self, theta: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray]:
        """The log-likelihood's gradient, the prior's diagonal and the pairs' weights.

        The negative Hessian is ``diag(prior_diag) + Laplacian(pair weights)``.
        """
        p0 = _sigmoid(theta)  # virtual draws against an average (theta 0) opponent
        grad: FloatArray = self.prior * (0.5 - p0)
        prior_diag: FloatArray = self.prior * p0 * (1.0 - p0)
        p = _sigmoid(theta[self.i] - theta[self.j])
        r = self.score - self.games * p
        grad += np.bincount(self.i, weights=r, minlength=self.n)
        grad -= np.bincount(self.j, weights=r, minlength=self.n)
        w: FloatArray = self.games * p * (1.0 - p)
        return grad, prior_diag, w

    def diagonal(self, prior_diag: FloatArray, w: FloatArray) -> FloatArray:
        d: FloatArray = prior_diag + np.bincount(self.i, weights=w, minlength=self.n)
        d += np.bincount(self.j, weights=w, minlength=self.n)
        return d

    def dense(self, prior_diag: FloatArray, w: FloatArray) -> FloatArray:
        h: FloatArray = np.diag(self.diagonal(prior_diag, w))
        np.add.at(h, (self.i, self.j), -w)
        np.add.at(h, (self.j, self.i), -w)
        return h

    def sparse(self, prior_diag: FloatArray, w: FloatArray) -> sp.csr_matrix:
        rows = np.concatenate([np.arange(self.n), self.i, self.j])
        cols = np.concatenate([np.arange(self.n), self.j, self.i])
        vals = np.concatenate([self.diagonal(prior_diag, w), -w, -w])
        import scipy.sparse as sp

        return sp.csr_matrix((vals, (rows, cols)), shape=(self.n, self.n))  # duplicates are summed


def fit_bradley_terry(pairs: PairTable, prior: float, max_iter: int = 100) -> tuple[FloatArray, FloatArray]:
    """Maximum-likelihood strengths (natural log-odds units, uncentred) and the
    variances of ``theta_i - mean(theta)``."""
    model = _Model(pairs, prior)
    if model.n <= DENSE_LIMIT:
        return _fit_dense(model, max_iter)
    return _fit_sparse(model, max_iter)


def _damped(step: FloatArray) -> tuple[FloatArray, float]:
    biggest = float(np.max(np.abs(step))) if step.size else 0.0
    damp = 1.0 if biggest <= 2.0 else 2.0 / biggest  # no wild first steps
    return damp * step, biggest


def _fit_dense(model: _Model, max_iter: int) -> tuple[FloatArray, FloatArray]:
    theta: FloatArray = np.zeros(model.n)
    for _ in range(max_iter):
        grad, prior_diag, w = model.gradient_and_weights(theta)
        solved = np.asarray(np.linalg.solve(model.dense(prior_diag, w), grad), dtype=np.float64)
        step, biggest = _damped(solved)
        theta = theta + step
        if biggest < STEP_TOL:
            break
    _, prior_diag, w = model.gradient_and_weights(theta)
    cov = np.asarray(np.linalg.inv(model.dense(prior_diag, w)), dtype=np.float64)
    return theta, _centred_variances(cov)


def _centred_variances(cov: FloatArray) -> FloatArray:
    """Variances of ``theta_i - mean(theta)``.

    Games only tell rating differences apart; the pool's overall level is
    pinned by the prior alone and so is very uncertain. Reported ratings are
    relative to the pool's mean, so that common shift must not count:
    ``var(t_i - m) = C_ii - 2/n sum_j C_ij + 1/n^2 sum_jk C_jk``.
    """
    n = cov.shape[0]
    row_sums = cov.sum(axis=1)
    out: FloatArray = np.diag(cov) - 2.0 * row_sums / n + row_sums.sum() / (n * n)
    return out


def _fit_sparse(model: _Model, max_iter: int) -> tuple[FloatArray, FloatArray]:
    theta: FloatArray = np.zeros(model.n)
    for _ in range(max_iter):
        grad, prior_diag, w = model.gradient_and_weights(theta)
        h = model.sparse(prior_diag, w)
        solved = block_pcg(h, grad[:, None], 1.0 / h.diagonal(), CG_RTOL)[:, 0]
        step, biggest = _damped(solved)
        theta = theta + step
        if biggest < STEP_TOL * 100:  # the CG residual bounds what a smaller step could mean
            break
    _, prior_diag, w = model.gradient_and_weights(theta)
    h = model.sparse(prior_diag, w)
    rng = np.random.default_rng(20_240_601)  # fixed: the same games give the same error bars
    z = rng.choice(np.array([-1.0, 1.0]), size=(model.n, PROBES))
    centred = z - z.mean(axis=0)  # P z, P = I - 11'/n removes the common shift
    x = block_pcg(h, centred, 1.0 / h.diagonal(), PROBE_RTOL)
    x -= x.mean(axis=0)  # P C P z
    estimate: FloatArray = np.mean(z * x, axis=1)
    return theta, estimate


def block_pcg(a: sp.csr_matrix, b: FloatArray, inv_diag: FloatArray, rtol: float) -> FloatArray:
    """Solve ``a x = b`` column by column (``a`` symmetric positive definite) by
    Jacobi-preconditioned conjugate gradients, all columns in one sparse product."""
    x: FloatArray = np.zeros_like(b)
    r = b.copy()
    b_norm = np.maximum(np.linalg.norm(b, axis=0), 1e-300)
    zr = r * inv_diag[:, None]
    p = zr.copy()
    rz = np.einsum("ij,ij->j", r, zr)
    for _ in range(CG_MAX_ITER):
        if float(np.max(np.linalg.norm(r, axis=0) / b_norm)) < rtol:
            break
        ap = a @ p
        curvature = np.einsum("ij,ij->j", p, ap)
        alpha = np.where(curvature > 0, rz / np.where(curvature > 0, curvature, 1.0), 0.0)
        x += p * alpha
        r -= ap * alpha
        zr = r * inv_diag[:, None]
        rz_next = np.einsum("ij,ij->j", r, zr)
        beta = np.where(rz > 0, rz_next / np.where(rz > 0, rz, 1.0), 0.0)
        p = zr + p * beta
        rz = rz_next
    return x
