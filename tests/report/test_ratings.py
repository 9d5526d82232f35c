"""Ratings: Elo with error bars for two-player games, openskill for N players."""

from __future__ import annotations

import random

import pytest

from runner.domain.match_values import GameRecord, Verdict, VerdictKind
from runner.domain.ratings import elo_ratings, game_ranks, openskill_ratings

NORMAL = Verdict(VerdictKind.NORMAL, None, "")


def game(
    order: list[str], winner: str | None, verdict: Verdict = NORMAL, scores: dict[str, int] | None = None
) -> GameRecord:
    return GameRecord(list(order), winner, scores or dict.fromkeys(order, 0), verdict, [])


def pool(strength: dict[str, float], n: int, seed: int = 1) -> list[GameRecord]:
    """Games drawn from a true Elo model (10% draws), each pair equally often."""
    rng = random.Random(seed)
    names = list(strength)
    out = []
    for _ in range(n):
        a, b = rng.sample(names, 2)
        p = 1 / (1 + 10 ** ((strength[b] - strength[a]) / 400))
        r = rng.random()
        winner = a if r < 0.9 * p else (None if r < 0.9 * p + 0.1 else b)
        out.append(game([a, b], winner))
    return out


def test_stronger_player_is_rated_higher_and_close_to_truth() -> None:
    truth = {"strong": 300.0, "middle": 0.0, "weak": -300.0}
    ratings = elo_ratings(pool(truth, 3000))
    assert [r.entry for r in ratings] == ["strong", "middle", "weak"]
    by = {r.entry: r for r in ratings}
    # the gap strong-weak is 600 in truth; the fit lands near it (shrunk a little by the 10% draws)
    assert 450 < by["strong"].elo - by["weak"].elo < 700
    assert sum(r.elo for r in ratings) / 3 == pytest.approx(1500.0)


def test_error_bars_shrink_with_more_games() -> None:
    truth = {"a": 100.0, "b": 0.0, "c": -100.0, "d": 50.0}
    few = {r.entry: r.ci95 for r in elo_ratings(pool(truth, 40))}
    many = {r.entry: r.ci95 for r in elo_ratings(pool(truth, 4000))}
    for name in truth:
        assert many[name] < few[name] / 4  # ~1/sqrt(100) = 1/10, with margin
        assert many[name] > 0


def test_a_perfect_score_still_has_a_finite_rating() -> None:
    ratings = elo_ratings([game(["a", "b"], "a")] * 10)
    by = {r.entry: r for r in ratings}
    assert by["a"].elo > by["b"].elo
    assert by["a"].elo - by["b"].elo < 1500  # the virtual draws keep it finite
    assert by["a"].score == 10 and by["b"].score == 0 and by["a"].games == 10


def test_draws_count_half_and_equal_results_give_equal_ratings() -> None:
    ratings = elo_ratings([game(["a", "b"], None)] * 6 + [game(["a", "b"], "a"), game(["b", "a"], "b")])
    by = {r.entry: r for r in ratings}
    assert by["a"].elo == pytest.approx(by["b"].elo)
    assert by["a"].score == 4.0


def test_a_verdict_against_one_player_is_a_win_for_the_other() -> None:
    crash = Verdict(VerdictKind.CRASH, "b", "signal 11")
    ratings = elo_ratings([game(["a", "b"], None, crash)] * 3)
    assert ratings[0].entry == "a" and ratings[0].score == 3


def test_system_errors_and_multiplayer_games_do_not_count_for_elo() -> None:
    sysfail = Verdict(VerdictKind.SYSTEM_ERROR, None, "worker lost")
    games = [game(["a", "b"], None, sysfail), game(["a", "b", "c"], "c"), game(["a", "b"], "a")]
    by = {r.entry: r for r in elo_ratings(games)}
    assert set(by) == {"a", "b"}
    assert by["a"].games == 1


def test_entries_without_games_are_listed() -> None:
    by = {r.entry: r for r in elo_ratings([game(["a", "b"], "a")], entries=["a", "b", "idle"])}
    assert by["idle"].games == 0


def test_game_ranks_put_the_winner_first_and_a_charged_player_last() -> None:
    g = game(["a", "b", "c"], "b", Verdict(VerdictKind.TIMEOUT, "c", "slow"), {"a": 0, "b": 9, "c": 0})
    assert game_ranks(g) == [2, 1, 3]
    tie = game(["a", "b", "c"], "a", NORMAL, {"a": 5, "b": 0, "c": 0})
    assert game_ranks(tie) == [1, 2, 2]


def test_openskill_orders_multiplayer_entries() -> None:
    rng = random.Random(4)
    games = []
    for _ in range(60):
        order = ["best", "second", "third"]
        rng.shuffle(order)
        # best wins most games; second scores more than third when it does not win
        winner = rng.choices(["best", "second", "third"], weights=[6, 3, 1])[0]
        scores = {n: 0 for n in order}
        scores[winner] = 10
        games.append(game(order, winner, NORMAL, scores))
    ratings = openskill_ratings(games)
    assert [r.entry for r in ratings] == ["best", "second", "third"]
    assert all(r.games == 60 for r in ratings)
    assert ratings[0].sigma < 25 / 3  # uncertainty fell from the prior
    assert ratings[0].ordinal == pytest.approx(ratings[0].mu - 3 * ratings[0].sigma)


# -- the scalable fit (runner.domain.elo_fit) ----------------------------------------


def sparse_pool(n: int, games: int, seed: int) -> tuple[dict[str, float], list[GameRecord]]:
    """``games`` games among ``n`` entries, each against a random other (a sparse graph)."""
    rng = random.Random(seed)
    truth = {f"e{i:05d}": rng.gauss(0.0, 200.0) for i in range(n)}
    names = list(truth)
    out = []
    for _ in range(games):
        a, b = rng.sample(names, 2)
        p = 1 / (1 + 10 ** ((truth[b] - truth[a]) / 400))
        r = rng.random()
        out.append(game([a, b], a if r < 0.9 * p else (None if r < 0.9 * p + 0.1 else b)))
    return truth, out


@pytest.mark.parametrize("small_limit", [0, 40], ids=["numpy-dense", "plain-python"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_fit_gives_the_original_numbers_on_small_pools(
    seed: int, small_limit: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    from runner.domain import ratings
    from tests.report.elo_reference import reference_elo_ratings

    monkeypatch.setattr(ratings, "SMALL_LIMIT", small_limit)
    ratings._cached_fit.cache_clear()
    _, games = sparse_pool(25, 300, seed)
    games += [game(["e00000", "e00001"], "e00000")] * 5  # a lopsided pair
    new = elo_ratings(games, entries=["idle"])
    old = reference_elo_ratings(games, entries=["idle"])
    assert [r.entry for r in new] == [r.entry for r in old]
    for a, b in zip(new, old, strict=True):
        assert a.elo == pytest.approx(b.elo, abs=1e-6)
        assert a.ci95 == pytest.approx(b.ci95, abs=1e-6)
        assert (a.games, a.score) == (b.games, b.score)


def test_the_sparse_fit_agrees_with_the_dense_one(monkeypatch: pytest.MonkeyPatch) -> None:
    from runner.domain import elo_fit, ratings

    _, games = sparse_pool(400, 4000, 7)
    dense = {r.entry: r for r in elo_ratings(games)}
    monkeypatch.setattr(elo_fit, "DENSE_LIMIT", 10)
    ratings._cached_fit.cache_clear()
    sparse = {r.entry: r for r in elo_ratings(games)}
    ratings._cached_fit.cache_clear()
    assert set(sparse) == set(dense)
    # the optimum is the same (conjugate gradients to 1e-10); the error bars are estimated
    worst_elo = max(abs(sparse[e].elo - dense[e].elo) for e in dense)
    assert worst_elo < 1e-3
    rel = sorted(abs(sparse[e].ci95 / dense[e].ci95 - 1.0) for e in dense)
    assert sum(rel) / len(rel) < 0.04  # mean relative error of a half-width
    assert rel[-1] < 0.2


def test_a_fit_is_computed_once_for_the_same_results() -> None:
    from runner.domain import ratings

    _, games = sparse_pool(30, 200, 11)
    ratings._cached_fit.cache_clear()
    first = elo_ratings(games)
    second = elo_ratings(list(games), base=1000.0)  # another call, another base: the same fit
    assert ratings._cached_fit.cache_info().hits == 1
    assert [r.entry for r in first] == [r.entry for r in second]
    assert first[0].elo - 500.0 == pytest.approx(second[0].elo)


@pytest.mark.parametrize(("n", "games", "seed"), [(2, 3, 1), (12, 264, 13), (40, 800, 5), (40, 60, 6)])
def test_the_plain_python_fit_equals_the_numpy_one(n: int, games: int, seed: int) -> None:
    """Small pools skip numpy (its import cost most of a second after a run's last game);
    the ratings and error bars they get are the numpy dense fit's, to rounding."""
    from runner.domain import elo_fit, elo_small

    rng = random.Random(seed)
    pair_games: dict[tuple[int, int], float] = {}
    pair_score: dict[tuple[int, int], float] = {}
    for _ in range(games):
        i, j = sorted(rng.sample(range(n), 2))
        pair_games[(i, j)] = pair_games.get((i, j), 0.0) + 1.0
        pair_score[(i, j)] = pair_score.get((i, j), 0.0) + rng.choice([0.0, 0.5, 1.0, 1.0])
    pairs = elo_small.PairTable.of(n, pair_games, pair_score)
    assert n <= elo_small.SMALL_LIMIT
    theta, variances = elo_small.fit_small(pairs, 2.0)
    ref_theta, ref_variances = elo_fit.fit_bradley_terry(pairs, 2.0)
    scale = ratings_scale()
    mean, ref_mean = sum(theta) / n, float(ref_theta.mean())
    for k in range(n):
        assert (theta[k] - mean) * scale == pytest.approx((ref_theta[k] - ref_mean) * scale, abs=1e-9)
        assert variances[k] == pytest.approx(float(ref_variances[k]), rel=1e-9, abs=1e-12)


def ratings_scale() -> float:
    from runner.domain.ratings import ELO_SCALE

    return ELO_SCALE


def test_a_small_pool_is_rated_without_importing_numpy() -> None:
    """``tourney run`` rates a typical contest after its last game: no numpy or scipy import for it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from runner.domain.match_values import GameRecord, Verdict, VerdictKind\n"
        "from runner.domain.ratings import elo_ratings\n"
        "ok = Verdict(VerdictKind.NORMAL, None, '')\n"
        "games = [GameRecord([a, b], a, {a: 0, b: 0}, ok, []) for a in 'abcd' for b in 'abcd' if a != b]\n"
        "assert len(elo_ratings(games)) == 4\n"
        "print(sorted(m for m in ('numpy', 'scipy') if m in sys.modules))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
