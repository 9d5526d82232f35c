"""The coordinator/worker contract survives JSON both ways, field for field."""

from __future__ import annotations

import json

from runner.contracts import (
    EntryRef,
    GameRecord,
    Limits,
    MatchResult,
    MatchSpec,
    MoveRecord,
    Verdict,
    VerdictKind,
    stable_id,
)


def _spec() -> MatchSpec:
    ref = EntryRef(name="greedy", digest="ab" * 32, protocol="potm-arena", run=["./a.out", "{mark}"],
                   build="cc -O2 -o a.out main.c", args=["--seed", "3"])
    return MatchSpec(match_id="m1", game="boxing", board_id="b1", board_text="--\n--\n",
                     orders=[["greedy", "random"], ["random", "greedy"]],
                     entries={"greedy": ref, "random": ref}, limits=Limits(move_wall_s=0.5),
                     seed=42, game_params={"max_box": 16}, stage="s", round=2, bracket="losers")


def test_match_spec_round_trips_through_json() -> None:
    spec = _spec()
    again = MatchSpec.from_dict(json.loads(json.dumps(spec.to_dict())))
    assert again == spec


def test_match_result_round_trips_and_reports_system_errors() -> None:
    g1 = GameRecord(order=["a", "b"], winner="a", scores={"a": 12, "b": 0},
                    verdict=Verdict(VerdictKind.TIMEOUT, "b", "no reply within 1.0 s"),
                    moves=[MoveRecord("a", "1 1 2", 1.5, 0.9)])
    g2 = GameRecord(order=["b", "a"], winner=None, scores={"a": 0, "b": 0},
                    verdict=Verdict(VerdictKind.SYSTEM_ERROR, None, "worker lost"), moves=[])
    res = MatchResult(match_id="m1", games=[g1, g2], worker="w1", digests={"a": "x"})
    again = MatchResult.from_dict(json.loads(json.dumps(res.to_dict())))
    assert again == res
    assert again.system_error is not None and again.system_error.detail == "worker lost"
    assert MatchResult(match_id="m", games=[g1]).system_error is None


def test_stable_id_is_deterministic_and_sensitive_to_every_part() -> None:
    a = stable_id("stage", 1, "winners", 0, "board", (("x", "y"),))
    assert a == stable_id("stage", 1, "winners", 0, "board", (("x", "y"),))
    assert a != stable_id("stage", 1, "winners", 0, "board", (("y", "x"),))
    assert a != stable_id("stage", 2, "winners", 0, "board", (("x", "y"),))
