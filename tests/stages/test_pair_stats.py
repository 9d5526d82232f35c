"""Pair statistics in the standings (runner.domain.stages.pair_stats): pentanomial cells and
Elo per entry over its colour-swapped game pairs, counted here again by hand."""

from __future__ import annotations

import dataclasses
import math
import random
from collections import Counter

from runner.domain.match_values import (
    GameRecord,
    Limits,
    MatchPlan,
    MatchSpec,
    NamedBoard,
    Verdict,
    VerdictKind,
)
from runner.domain.stages.pair_stats import game_pairs
from tests.stages.sim import make_config, random_game, simulate

CELL_BY_POINTS = {0.0: "LL", 0.5: "LD", 1.0: "DD+WL", 1.5: "WD", 2.0: "WW"}


def _points(g: GameRecord, entry: str) -> float:
    return 1.0 if g.winner == entry else 0.5 if g.winner is None else 0.0


def test_round_robin_with_penta_counts_every_entry_s_pairs() -> None:
    stage = {"name": "rr", "planner": "round_robin", "games_per_pairing": 4, "penta": True}
    cfg = make_config([stage], 4)
    state, results = simulate(cfg, rng_seed=5, make_game=random_game(tie_rate=0.3))
    want: dict[str, Counter[str]] = {e: Counter() for e in cfg.entry_specs()}
    for m in state.matches:
        games = results[m.match_id]
        for i in range(0, len(games), 2):
            for e in m.players:
                want[e][CELL_BY_POINTS[_points(games[i], e) + _points(games[i + 1], e)]] += 1
    for row in state.stages[0].standings:
        got = {c: row.extra[c] for c in ("LL", "LD", "DD+WL", "WD", "WW")}
        assert got == {c: float(want[row.entry][c]) for c in got}, row.entry
        assert sum(got.values()) == 3 * 2  # three opponents, two pairs each
        score = (row.wins + row.ties / 2) / row.games
        assert math.isclose(row.extra["elo"], round(-400 * math.log10(1 / score - 1), 1))


def test_without_penta_the_standings_are_unchanged() -> None:
    stage = {"name": "rr", "planner": "round_robin", "games_per_pairing": 2}
    state, _ = simulate(make_config([stage], 3), rng_seed=5)
    assert all("LL" not in r.extra and "elo" not in r.extra for r in state.stages[0].standings)


def test_games_not_seated_in_swapped_pairs_make_no_pair() -> None:
    rng = random.Random(1)
    make = random_game()
    m = MatchPlan("s", 1, "", 0, ("a", "b"), "x", (("a", "b"), ("a", "b")))
    games = [make(m, o, rng) for o in m.orders]
    assert game_pairs(games) == []
    assert len(game_pairs([games[0], make(m, ("b", "a"), rng)])) == 1


def test_a_match_of_several_openings_counts_one_pair_an_opening() -> None:
    """``openings.per_match`` K: a match's games are opening 1's two, then opening 2's ...: each
    opening's colour-swapped two games are one pair, never two games of different openings."""
    boards = (NamedBoard("opening-001", "startpos"), NamedBoard("opening-002", "startpos"))
    orders = [["a", "b"], ["b", "a"]]
    spec = MatchSpec.of("m", "chess", "opening-001+opening-002", "startpos", orders, {}, Limits(), 0)
    spec = dataclasses.replace(spec, boards=boards)
    winners = ["a", "a", None, "b"]  # opening 1: a wins both (WW for a); opening 2: a draw, b wins (LD)
    games = [
        GameRecord(list(p.order), w, {}, Verdict(VerdictKind.NORMAL), [], board_id=p.board_id)
        for p, w in zip(spec.planned_games(), winners, strict=True)
    ]
    pairs = game_pairs(games)
    assert [[g.board_id for g in pair] for pair in pairs] == [["opening-001"] * 2, ["opening-002"] * 2]
    cells = [CELL_BY_POINTS[sum(_points(g, "a") for g in pair)] for pair in pairs]
    assert cells == ["WW", "LD"]
    # two games seated the other way round on different openings are no pair
    assert game_pairs([games[1], games[2]]) == []
