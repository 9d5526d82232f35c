"""Verification replays (docs/fleet.md, "Verification"): the pure sample and comparison rules,
and the replay's record in a real SQLite store, apart from the official results."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.domain.match_values import MatchResult, Verdict, VerdictKind
from runner.domain.verification import compare, sampled
from runner.domain.wire import Finished, Started, TaskEnvelope, decode, encode, to_builtins
from runner.orchestration.workers_health import WorkersHealth
from runner.storage.store import RunStore
from runner.storage.verifications import Verifications
from tests.store.test_disputes import game, played
from tests.store.test_store import result, spec

IDS = [f"rr-{i:04d}" for i in range(4000)]


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    s = RunStore.create(tmp_path / "run", {"name": "t", "run_id": "r1"})
    yield s
    s.close()


def test_the_sample_depends_on_seed_and_match_only_and_has_the_asked_size() -> None:
    picked = [m for m in IDS if sampled(7, m, 0.05)]
    # the same matches whatever order they are asked in (a resumed run picks the same)
    assert picked == [m for m in reversed(IDS) if sampled(7, m, 0.05)][::-1]
    assert 140 <= len(picked) <= 260, len(picked)  # 5% of 4,000 is 200
    assert picked != [m for m in IDS if sampled(8, m, 0.05)]  # another seed, another sample
    assert all(sampled(7, m, 1.0) for m in IDS[:50])
    assert not any(sampled(7, m, 0.0) for m in IDS[:50])


def both(*moves: str) -> MatchResult:
    return MatchResult("m1", [game([("a" if i % 2 == 0 else "b", mv) for i, mv in enumerate(moves)])])


def test_compare_flags_a_different_transcript_only_between_deterministic_entries() -> None:
    official, same, other = both("1 1", "2 2", "3 3"), both("1 1", "2 2", "3 3"), both("1 1", "2 3", "3 3")
    deterministic = {"a": True, "b": True}
    assert compare(official, same, deterministic).outcome == "agrees"
    differs = compare(official, other, deterministic)
    assert differs.outcome == "differs" and "game 1, move 2" in differs.detail, differs
    loose = compare(official, other, {"a": True, "b": False})
    assert loose.outcome == "not_compared" and "b not declared deterministic" in loose.detail


def test_a_time_verdict_is_load_not_proof() -> None:
    official = both("1 1", "2 2", "3 3")
    timed = MatchResult(
        "m1", [dataclasses.replace(official.games[0], verdict=Verdict(VerdictKind.TIMEOUT, "b", "slow"))]
    )
    got = compare(official, timed, {"a": True, "b": True})
    assert got.outcome == "not_compared" and "time verdict" in got.detail


def test_a_replay_is_kept_apart_from_the_official_result(store: RunStore) -> None:
    official = played(store, "m1")
    v = Verifications(store)
    assert v.all() == [] and v.result("m1") is None  # no table yet: read as none
    assert [m for m, _, _ in v.done_without()] == ["m1"]
    assert v.add("m1", 1, "w1") and not v.add("m1", 1, "w1")  # one replay per match
    assert [x.state for x in v.open()] == ["sent"] and v.done_without() == []
    assert not v.started("m1", 2, "w2")  # another attempt's: not this replay
    assert v.started("m1", 1, "w2")
    replay = result("m1", winner="b", worker="w2")
    assert v.finish(
        "m1", 1, "differs", "transcripts differ", verifier="w2", result=replay, event="verify_mismatch"
    )
    assert not v.finish("m1", 1, "agrees", "late duplicate")  # closed once
    (row,) = v.all()
    assert (row.state, row.verifier, row.played_by) == ("differs", "w2", "w1")
    assert "DIFFERS (w1 vs w2" in row.text()
    assert v.result("m1") == replay
    assert store.official_results()["m1"] == official.games  # the standings never see the replay
    kinds = [e.kind for e in store.events() if e.match_id == "m1"]
    assert "verify_sent" in kinds and "verify_started" in kinds and "verify_mismatch" in kinds


def test_a_suspect_flag_is_kept_in_the_workers_record_across_sessions() -> None:
    health = WorkersHealth()
    health.accepted("w1")
    health.flag_suspect("w1", "transcript of match m1 differs from w2's")
    again = WorkersHealth.from_summary(health.summary())
    assert [r.name for r in again.suspects()] == ["w1"] and not again.is_quarantined("w1")
    assert "suspect" not in WorkersHealth.from_summary({"w3": {"accepted": 1}}).summary()["w3"]


def test_the_replay_marks_travel_and_an_older_message_reads_as_no_replay() -> None:
    envelope = TaskEnvelope(run="r1", attempt=2, spec=spec("m1"), verify_of="w1")
    assert decode(encode(envelope), TaskEnvelope) == envelope
    started, finished = Started("m1", 2, "w2", verify=True), Finished("m1", 2, result("m1"), "w2", "r1", True)
    assert decode(encode(started), Started) == started and decode(encode(finished), Finished) == finished
    # a message sent without the marks (a worker from before them) is an ordinary one
    plain = to_builtins(TaskEnvelope(run="r1", attempt=2, spec=spec("m1")))
    del plain["verify_of"]
    assert decode(json.dumps(plain), TaskEnvelope).verify_of == ""
    note = to_builtins(Started("m1", 2, "w2"))
    del note["verify"]
    assert decode(json.dumps(note), Started).verify is False
