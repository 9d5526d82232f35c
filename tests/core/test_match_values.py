"""A match's values (runner.domain.match_values): a spec is its plan plus what a worker needs, a
result reports its system errors, ids are stable; they survive the codec field for field."""

from __future__ import annotations

from runner.domain.match_values import (
    EntryRef,
    GameRecord,
    Limits,
    MatchPlan,
    MatchResult,
    MatchSpec,
    MoveRecord,
    Verdict,
    VerdictKind,
    stable_id,
)
from runner.domain.wire import decode, encode


def _spec() -> MatchSpec:
    ref = EntryRef(
        name="greedy",
        digest="ab" * 32,
        protocol="potm-arena",
        run=["./a.out", "{mark}"],
        build="cc -O2 -o a.out main.c",
        args=["--seed", "3"],
    )
    plan = MatchPlan(
        "s",
        2,
        "losers",
        3,
        ("greedy", "random"),
        "b1",
        (("greedy", "random"), ("random", "greedy")),
        match_id="m1",
    )
    return MatchSpec.playing(
        plan,
        game="boxing",
        board_text="--\n--\n",
        entries={"greedy": ref, "random": ref},
        limits=Limits(move_wall_s=0.5),
        seed=42,
        game_params={"max_box": 16},
    )


def test_match_spec_round_trips_and_is_its_plan_plus_execution() -> None:
    spec = _spec()
    again = decode(encode(spec), MatchSpec)
    assert again == spec
    assert again.plan == spec.plan and again.match_id == "m1"
    assert again.orders == (("greedy", "random"), ("random", "greedy"))
    assert spec.plan == MatchPlan("s", 2, "losers", 3, ("greedy", "random"), "b1", spec.orders, "m1")


def test_a_plan_derives_its_id_from_where_it_sits_unless_named() -> None:
    a = MatchPlan("rr", 1, "", 0, ("x", "y"), "b", (("x", "y"),))
    assert a.match_id == stable_id("rr", 1, "", 0, "b", (("x", "y"),))
    assert decode(encode(a), MatchPlan) == a
    assert MatchPlan("rr", 1, "", 1, ("x", "y"), "b", (("x", "y"),)).match_id != a.match_id
    assert MatchPlan.ad_hoc("mine", "b", [["x", "y"], ["y", "x"]]).match_id == "mine"


def test_match_result_round_trips_and_reports_system_errors() -> None:
    g1 = GameRecord(
        order=["a", "b"],
        winner="a",
        scores={"a": 12, "b": 0},
        verdict=Verdict(VerdictKind.TIMEOUT, "b", "no reply within 1.0 s"),
        moves=[MoveRecord("a", "1 1 2", 1.5, 0.9)],
    )
    g2 = GameRecord(
        order=["b", "a"],
        winner=None,
        scores={"a": 0, "b": 0},
        verdict=Verdict(VerdictKind.SYSTEM_ERROR, None, "worker lost"),
        moves=[],
    )
    res = MatchResult(match_id="m1", games=[g1, g2], worker="w1", digests={"a": "x"})
    again = decode(encode(res), MatchResult)
    assert again == res
    assert again.system_error is not None and again.system_error.detail == "worker lost"
    assert MatchResult(match_id="m", games=[g1]).system_error is None


def test_stable_id_is_deterministic_and_sensitive_to_every_part() -> None:
    a = stable_id("stage", 1, "winners", 0, "board", (("x", "y"),))
    assert a == stable_id("stage", 1, "winners", 0, "board", (("x", "y"),))
    assert a != stable_id("stage", 1, "winners", 0, "board", (("y", "x"),))
    assert a != stable_id("stage", 2, "winners", 0, "board", (("x", "y"),))
