"""Points tables, match outcomes and rank keys (runner.domain.scoring)."""

from __future__ import annotations

from runner.domain.match_values import GameRecord, Verdict, VerdictKind
from runner.domain.scoring import (
    ScoringModel,
    effective_winner,
    game_points,
    match_winner,
    potm_scoring,
    rank_entries,
    tally_matches,
)

NORMAL = Verdict(VerdictKind.NORMAL, None, "")


def g(
    order: list[str], winner: str | None, scores: dict[str, int] | None = None, v: Verdict = NORMAL
) -> GameRecord:
    return GameRecord(order, winner, scores or {}, v, [])


def test_seed_000_table_by_outcome_and_seat_plus_own_score() -> None:
    t = potm_scoring()
    assert game_points(t, g(["a", "b"], "a", {"a": 40, "b": 0}), "a") == 1040
    assert game_points(t, g(["b", "a"], "a", {"a": 40, "b": 0}), "a") == 1240
    assert game_points(t, g(["a", "b"], None, {"a": 3, "b": 9}), "a") == 503
    assert game_points(t, g(["b", "a"], None, {"a": 3, "b": 9}), "a") == 603
    assert game_points(t, g(["a", "b"], "b", {"a": 0, "b": 9}), "a") == 0


def test_shorter_lists_repeat_their_last_value_for_later_seats() -> None:
    t = ScoringModel.model_validate({"win": [3, 2], "tie": 1})  # a scalar, as YAML gives it
    assert [t.value("win", s) for s in range(4)] == [3, 2, 2, 2]
    assert t.value("tie", 5) == 1 and t.bye_points == 3


def test_a_verdict_against_a_player_is_a_loss_and_the_opponent_wins() -> None:
    crash = Verdict(VerdictKind.CRASH, "b", "signal 11")
    game = g(["a", "b"], None, {}, crash)
    assert effective_winner(game) == "a"
    tallies = tally_matches([(("a", "b"), [game])], ScoringModel())
    assert (tallies["a"].wins, tallies["b"].losses, tallies["b"].verdicts_against) == (1, 1, 1)


def test_match_winner_by_wins_then_score_else_tied() -> None:
    t = ScoringModel()
    split = [g(["a", "b"], "a", {"a": 30}), g(["b", "a"], "b", {"b": 20})]
    assert match_winner(split, "a", "b", t, ["wins", "score"]) == "a"
    assert match_winner(split, "a", "b", t, ["wins"]) is None
    even = [g(["a", "b"], "a", {"a": 30}), g(["b", "a"], "b", {"b": 30})]
    assert match_winner(even, "a", "b", t, ["wins", "score"]) is None
    # seed 000's points favour the win as second: b wins the match on points
    b_second = [g(["a", "b"], "a", {"a": 30}), g(["a", "b"], "b", {"b": 30})]
    assert match_winner(b_second, "a", "b", potm_scoring(), ["points"]) == "b"


def test_head_to_head_breaks_a_tie_inside_the_tied_group_only() -> None:
    # a, b, c all have 2 wins; b beat a, and c lost to b, but a beat c
    games = [
        g(["b", "a"], "b"),
        g(["a", "c"], "a"),
        g(["c", "b"], "c"),
        g(["a", "d"], "a"),
        g(["b", "d"], "b"),
        g(["c", "d"], "c"),
    ]
    tallies = tally_matches([((x.order[0], x.order[1]), [x]) for x in games], ScoringModel())
    r = rank_entries(["a", "b", "c", "d"], tallies, ["wins", "head_to_head"])
    assert r.groups == [["a", "b", "c"], ["d"]]  # a rock-paper-scissors: still tied
    assert r.order == ["a", "b", "c", "d"]  # ... so by seed
    assert r.tied_for_first() == ["a", "b", "c"]
    assert r.values["a"]["head_to_head"] == 1.0


def test_name_and_seed_keys_and_buchholz() -> None:
    games = [g(["x", "y"], "x"), g(["z", "w"], "z"), g(["x", "z"], None)]
    tallies = tally_matches([((x.order[0], x.order[1]), [x]) for x in games], ScoringModel())
    r = rank_entries(["z", "x", "y", "w"], tallies, ["points", "buchholz"])
    assert r.values["x"]["buchholz"] == tallies["y"].points + tallies["z"].points
    assert r.order[:2] == ["z", "x"]  # equal points and buchholz: seed order
    assert rank_entries(["z", "x", "y", "w"], tallies, ["points", "name"]).order[:2] == ["x", "z"]
    assert rank_entries(["z", "x", "y", "w"], tallies, ["seed"]).order == ["z", "x", "y", "w"]
