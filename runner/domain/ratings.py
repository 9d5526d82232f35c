"""Ratings over game records: Elo with error bars, and openskill for N players.

Standings say who won a stage under its rules; ratings say how strong each
entry played across the games it had, which is what organisers compare when
entries met different opponents (brackets, swiss) or when they want to know
whether a ranking is within noise.

Elo (two-player games)
    A Bradley-Terry (logistic) model fitted by maximum likelihood, the method
    of BayesElo/Ordo-style tools that chess tournament managers report:
    ``P(i scores against j) = 1 / (1 + 10 ** ((R_j - R_i) / 400))``, a win
    counting 1, a draw 1/2, a loss 0. Results are aggregated per pair, so the
    cost depends on the number of entries, not of games. Each entry also gets
    ``prior_draws`` virtual draws against an average opponent: without them an
    entry that won (or lost) every game has no finite maximum, and with them
    the fit is strictly concave, so Newton's method converges in a handful of
    steps from any start. The 95% error bar is ``1.96`` standard errors from
    the inverse of the observed Fisher information (the negative Hessian of
    the log-likelihood) at the optimum: it narrows like ``1/sqrt(games)``.
    Ratings are shifted so that their mean is ``base`` (1500). How the fit is
    computed at any size (plain Python up to 40 entries, ``runner.domain.elo_small``;
    then numpy, dense up to 1,500 entries, sparse conjugate
    gradients and estimated error bars beyond) is in ``runner.domain.elo_fit``; a
    fit is cached per process, keyed by the per-pair results, so the report
    and the terminal share one.

openskill (games with more than two players)
    Plackett-Luce (``openskill.models.PlackettLuce``) updated game by game in
    the order given (plan order): mu, sigma and the conservative ordinal
    ``mu - 3 sigma``. A game's ranking: the winner first, the others by their
    game score, an entry charged with a verdict last.

Who won a game is ``runner.domain.scoring.effective_winner`` (a verdict charged in a
two-player game is a win for the opponent), as in the standings. Games that
ended in ``system_error`` say nothing about the entries and are skipped, as
the standings skip them.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from runner.domain.elo_small import SMALL_LIMIT, PairTable, fit_small
from runner.domain.match_values import GameRecord, VerdictKind
from runner.domain.scoring import effective_winner

ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per natural log-odds unit
Z95 = 1.959963984540054


@dataclass(frozen=True)
class EloRating:
    entry: str
    elo: float
    ci95: float  # half-width of the 95% interval, in Elo points
    games: int
    score: float  # wins + draws/2

    @property
    def score_pct(self) -> float:
        return 100.0 * self.score / self.games if self.games else 0.0

    def to_dict(self) -> dict[str, float | int | str]:
        return {
            "entry": self.entry,
            "elo": round(self.elo, 1),
            "ci95": round(self.ci95, 1),
            "games": self.games,
            "score": self.score,
        }


@dataclass(frozen=True)
class SkillRating:
    entry: str
    mu: float
    sigma: float
    games: int

    @property
    def ordinal(self) -> float:
        return self.mu - 3.0 * self.sigma

    def to_dict(self) -> dict[str, float | int | str]:
        return {
            "entry": self.entry,
            "mu": round(self.mu, 3),
            "sigma": round(self.sigma, 3),
            "ordinal": round(self.ordinal, 3),
            "games": self.games,
        }


def _counts(game: GameRecord) -> bool:
    return game.verdict.kind is not VerdictKind.SYSTEM_ERROR


# -- Elo -------------------------------------------------------------------


def elo_ratings(
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
    pairs = PairTable.of(n, pair_games, pair_score)
    # the report and the terminal ask for the same ratings of the same games: fit once per process
    theta, variances = _cached_fit(pairs, max(prior_draws, 1e-6), max_iter)
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


@functools.lru_cache(maxsize=16)
def _cached_fit(pairs: PairTable, prior: float, max_iter: int) -> tuple[tuple[float, ...], tuple[float, ...]]:
    if pairs.n <= SMALL_LIMIT:  # most contests: no numpy import after the last game
        small_theta, small_variances = fit_small(pairs, prior, max_iter)
        return tuple(small_theta), tuple(small_variances)
    # local: numpy and scipy (0.5 s of imports) for a pool this large only, not with the report model
    from runner.domain.elo_fit import fit_bradley_terry

    theta, variances = fit_bradley_terry(pairs, prior, max_iter)
    return tuple(theta.tolist()), tuple(variances.tolist())


# -- openskill ---------------------------------------------------------------


def game_ranks(game: GameRecord) -> list[int]:
    """1-based ranks of ``game.order``'s seats (equal ranks tie): the winner
    first, then by game score, an entry charged with a verdict last."""
    charged = game.verdict.player if game.verdict.kind is not VerdictKind.NORMAL else None
    winner = effective_winner(game)

    def key(name: str) -> tuple[int, int, int]:
        return (
            0 if name == winner else 1,
            1 if name == charged else 0,
            -game.scores.get(name, 0),
        )

    keys = [key(n) for n in game.order]
    distinct = sorted(set(keys))
    return [distinct.index(k) + 1 for k in keys]


def openskill_ratings(games: Iterable[GameRecord], *, entries: Sequence[str] = ()) -> list[SkillRating]:
    """Plackett-Luce ratings, updated game by game in the given order.

    Sorted by ordinal (``mu - 3 sigma``), best first.
    """
    from openskill.models import PlackettLuce  # import cost only when used

    model = PlackettLuce()
    ratings = {n: model.rating(name=n) for n in dict.fromkeys(entries)}
    played: dict[str, int] = {}
    for g in games:
        if len(g.order) < 2 or not _counts(g) or len(set(g.order)) != len(g.order):
            continue
        for n in g.order:
            if n not in ratings:
                ratings[n] = model.rating(name=n)
            played[n] = played.get(n, 0) + 1
        teams = [[ratings[n]] for n in g.order]
        updated = model.rate(teams, ranks=[float(r) for r in game_ranks(g)])
        for n, team in zip(g.order, updated, strict=True):
            ratings[n] = team[0]
    out = [
        SkillRating(entry=n, mu=float(r.mu), sigma=float(r.sigma), games=played.get(n, 0))
        for n, r in ratings.items()
    ]
    return sorted(out, key=lambda r: (-r.ordinal, r.entry))
