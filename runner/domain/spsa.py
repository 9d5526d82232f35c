"""SPSA: the gain sequences and the update rule, as fishtest runs them (docs/engines.md, "SPSA").

Simultaneous perturbation stochastic approximation tunes a vector θ of engine options from game
results alone. Game pair ``k`` (1-based, counted over the whole tuning) perturbs every parameter
by ``±c_k`` at once, with a random sign ``flip`` per parameter: the engine at θ + c_k·flip plays
a colour-swapped pair against the engine at θ - c_k·flip, and the pair's ``result`` (wins minus
losses of the first, -2..2) moves each parameter by ``R_k · c_k · result · flip``, clipped to
its ``[min, max]``.

The sequences are fishtest's (``server/fishtest/spsa_workflow.py``: ``parse_spsa_params``,
``build_spsa_worker_step``, ``apply_spsa_result_updates``), over N = the tuning's game pairs:

* ``c_k = c / k^gamma`` with ``c = c_end · N^gamma``: the perturbation, ``c_end`` at the last pair;
* ``a_k = a / (A + k)^alpha`` with ``a = a_end · (A + N)^alpha`` and ``a_end = r_end · c_end²``;
* ``R_k = a_k / c_k²``: the learning rate, ``r_end`` at the last pair;
* ``A = int(A_ratio · N)`` (fishtest's "A ratio", 0.1 by default); ``alpha`` 0.602, ``gamma``
  0.101 (Spall's values, fishtest's defaults).

Engines take whole numbers: a perturbed value is rounded stochastically, as fishtest's worker
does (``floor(value + u)``, u uniform in [0, 1)), so that the value an engine plays is the
perturbed one on average; the uniform ``u`` comes from the caller (the planner derives it from
the run's seed, so a plan is a function of the results). θ itself stays a real number.

Everything here is pure arithmetic on floats, with no state: the planner
(``runner.domain.stages.spsa``) replays it over the stored results every time it plans.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Gains:
    """The gain sequences of one parameter over a tuning of ``pairs`` game pairs."""

    c_end: float
    r_end: float
    pairs: int
    A: float
    alpha: float
    gamma: float

    @classmethod
    def of(cls, c_end: float, r_end: float, pairs: int, A_ratio: float, alpha: float, gamma: float) -> Gains:
        """fishtest's ``A``: ``int(A_ratio * num_games / 2)``, num_games / 2 being the pairs."""
        return cls(c_end, r_end, pairs, float(int(A_ratio * pairs)), alpha, gamma)

    @property
    def c(self) -> float:
        """``c``: c_1, the first pair's perturbation."""
        return self.c_end * math.pow(self.pairs, self.gamma)

    @property
    def a(self) -> float:
        """``a``: derived from ``r_end`` so that R_N is ``r_end``."""
        return self.r_end * self.c_end**2 * math.pow(self.A + self.pairs, self.alpha)

    def c_k(self, k: int) -> float:
        """The perturbation of pair ``k`` (1-based)."""
        return self.c / math.pow(k, self.gamma)

    def a_k(self, k: int) -> float:
        return self.a / math.pow(self.A + k, self.alpha)

    def r_k(self, k: int) -> float:
        """The learning rate of pair ``k``: ``a_k / c_k²``."""
        return self.a_k(k) / self.c_k(k) ** 2


def clip(value: float, low: float, high: float) -> float:
    return min(max(value, low), high)


def stochastic_round(value: float, u: float) -> int:
    """``value`` to a whole number, up with probability of its fraction (``u`` uniform in [0, 1))."""
    return math.floor(value + u)


@dataclass(frozen=True)
class Step:
    """One game pair's perturbation of one parameter: pair ``k``'s ``c_k`` and ``R_k``, and its sign."""

    c: float
    r: float
    flip: int  # +1 or -1: the θ+ engine plays θ + c·flip

    def moved(self, theta: float, result: float, low: float, high: float) -> float:
        """θ after the pair: ``R_k · c_k · result · flip`` added, clipped (fishtest's update)."""
        return clip(theta + self.r * self.c * result * self.flip, low, high)


def step(gains: Gains, k: int, flip: int) -> Step:
    return Step(gains.c_k(k), gains.r_k(k), flip)


def perturbed(theta: float, s: Step, sign: int, low: float, high: float) -> float:
    """The value the θ+ engine (``sign`` +1) or the θ- engine (-1) plays, clipped, before rounding."""
    return clip(theta + sign * s.c * s.flip, low, high)


def pair_result(points_of_plus: Sequence[float]) -> float:
    """A pair's ``result`` for the update: the θ+ engine's wins minus its losses, from its points
    per game (1, 0.5, 0)."""
    return sum(2 * p - 1 for p in points_of_plus)


@dataclass(frozen=True)
class TunedParam:
    """One tuned option's path: θ at the start and after each finished iteration."""

    name: str
    low: float
    high: float
    values: tuple[float, ...]  # values[0] is the start; one more per finished iteration

    @property
    def start(self) -> float:
        return self.values[0]

    @property
    def last(self) -> float:
        return self.values[-1]


@dataclass(frozen=True)
class TuningPath:
    """Where an spsa stage's θ has been: each option's values at the pair counts in ``pairs``
    (0, then the pairs folded in after each finished iteration), over ``total`` pairs. The
    report draws it (``runner.report.tuning``)."""

    pairs: tuple[int, ...]
    params: tuple[TunedParam, ...]
    total: int

    def tuned(self) -> dict[str, float]:
        """Each option's θ now (the tuned values once the stage is done)."""
        return {p.name: p.last for p in self.params}
