"""The run store: idempotent acceptance, attempts, leases, the cap, replanning, the read API."""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

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
)
from runner.domain.wire import to_builtins
from runner.storage.store import RunStore, StoreError

REF = EntryRef(name="a", digest="0" * 64, protocol="mnk", run=["./a"])


def spec(mid: str, stage: str = "rr", players: tuple[str, str] = ("a", "b"), pairing: int = 0) -> MatchSpec:
    a, b = players
    return MatchSpec.playing(
        MatchPlan(stage, 0, "", pairing, (a, b), "b", ((a, b), (b, a)), match_id=mid),
        game="mnk",
        board_text="3 3 3",
        entries={a: REF, b: EntryRef(name=b, digest="1" * 64, protocol="mnk", run=["./b"])},
        limits=Limits(),
        seed=1,
    )


def result(mid: str, winner: str = "a", worker: str = "w1") -> MatchResult:
    games = [
        GameRecord(
            order=["a", "b"],
            winner=winner,
            scores={"a": int(winner == "a"), "b": int(winner == "b")},
            verdict=Verdict(VerdictKind.NORMAL, None, ""),
            moves=[MoveRecord("a", "1 1", 1.0), MoveRecord("b", "2 2", 1.0)],
        )
    ]
    return MatchResult(mid, games, worker=worker)


def error_result(mid: str) -> MatchResult:
    g = GameRecord(
        ["a", "b"], None, {"a": 0, "b": 0}, Verdict(VerdictKind.SYSTEM_ERROR, None, "disk full"), []
    )
    return MatchResult(mid, [g], worker="w9")


def plan(store: RunStore, *mids: str) -> None:
    store.sync_plan([spec(m, pairing=i) for i, m in enumerate(mids)])


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    s = RunStore.create(tmp_path / "run", {"name": "t", "run_id": "r1"})
    yield s
    s.close()


def test_wal_mode_and_meta(store: RunStore, tmp_path: Path) -> None:
    mode = store._conn.execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"
    store.set_meta(finished=None, sandbox="none")
    again = RunStore.open(tmp_path / "run")
    assert again.meta()["name"] == "t"
    assert again.meta()["sandbox"] == "none"
    again.close()


def test_open_refuses_what_is_not_a_run(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="not a run directory"):
        RunStore.open(tmp_path)
    (tmp_path / "tournament.sqlite").write_text("garbage")
    with pytest.raises(StoreError):
        RunStore.open(tmp_path)


def test_result_accepted_once_for_the_current_attempt(store: RunStore) -> None:
    plan(store, "m1")
    _, attempt = store.dispatch("m1")
    assert attempt == 1
    assert store.mark_started("m1", 1, "w1", lease_expires=1e12).status == "accepted"
    assert store.accept("m1", 1, result("m1"), attempt_cap=3).status == "accepted"
    # a duplicate (same attempt again) and a conflicting copy change nothing
    dup = store.accept("m1", 1, result("m1", winner="b", worker="w2"), attempt_cap=3)
    assert dup.status == "ignored" and "duplicate" in dup.detail
    assert store.official_results()["m1"][0].winner == "a"
    assert len(store.match_row("m1").superseded) == 0  # type: ignore[union-attr]
    assert [e.kind for e in store.events("ignored_result")] == ["ignored_result"]


def test_late_result_of_an_old_attempt_is_ignored(store: RunStore) -> None:
    plan(store, "m1")
    store.dispatch("m1")
    store.mark_started("m1", 1, "w1", 0.0)
    assert store.lease_lost("m1", 1, "lease expired", attempt_cap=3).status == "retry"
    _, attempt = store.dispatch("m1")
    assert attempt == 2
    late = store.accept("m1", 1, result("m1", winner="b"), attempt_cap=3)
    assert late.status == "ignored" and "late" in late.detail
    assert "m1" not in store.official_results()
    assert store.accept("m1", 2, result("m1"), attempt_cap=3).status == "accepted"
    assert store.official_results()["m1"][0].winner == "a"
    # a result for an attempt never handed out
    assert store.accept("m1", 7, result("m1"), attempt_cap=3).status == "ignored"


def test_system_error_retries_then_fails_at_the_cap(store: RunStore) -> None:
    plan(store, "m1")
    for n in (1, 2):
        _, attempt = store.dispatch("m1")
        assert attempt == n
        assert store.accept("m1", attempt, error_result("m1"), attempt_cap=3).status == "retry"
        assert store.pending() == ["m1"]
    _, attempt = store.dispatch("m1")
    acc = store.accept("m1", attempt, error_result("m1"), attempt_cap=3)
    assert acc.status == "failed" and "3 failed attempts" in acc.detail
    row = store.match_row("m1")
    assert row is not None and row.state == "failed"
    assert row.result is not None and row.result.system_error is not None  # shown, not hidden
    assert len(row.rejected) == 3
    assert store.events("failed")
    # a resumed run tries it again from scratch
    assert store.retry_failed() == ["m1"]
    row = store.match_row("m1")
    assert row is not None and row.state == "pending" and row.failures == 0 and row.result is None


def test_requeue_in_flight_on_resume_is_not_a_failure(store: RunStore) -> None:
    plan(store, "m1", "m2", "m3")
    store.dispatch("m1")
    store.dispatch("m2")
    store.mark_started("m2", 1, "w1", 1e12)
    assert sorted(store.requeue_in_flight("coordinator restarted")) == ["m1", "m2"]
    assert store.pending() == ["m1", "m2", "m3"]
    assert store.match_row("m2").failures == 0  # type: ignore[union-attr]
    _, attempt = store.dispatch("m2")
    assert attempt == 2


def test_sync_plan_marks_obsolete_and_revives(store: RunStore) -> None:
    plan(store, "m1", "m2")
    store.dispatch("m1")
    store.accept("m1", 1, result("m1"), attempt_cap=3)
    sync = store.sync_plan([spec("m2"), spec("m3", pairing=1)])
    assert sync.new == ["m3"] and sync.obsolete == ["m1"]
    assert "m1" not in store.official_results()  # obsolete results do not count
    sync = store.sync_plan([spec(m, pairing=i) for i, m in enumerate(["m1", "m2", "m3"])])
    assert sync.revived == ["m1"]
    assert store.match_row("m1").state == "done"  # type: ignore[union-attr]
    assert "m1" in store.official_results()


def test_rerun_candidate_then_accept(store: RunStore) -> None:
    plan(store, "m1")
    store.dispatch("m1")
    store.accept("m1", 1, result("m1", winner="a"), attempt_cap=3)
    attempt = store.add_candidate("m1", result("m1", winner="b", worker="rerun"))
    assert attempt == 2
    row = store.match_row("m1")
    assert row is not None and row.result is not None and row.result.games[0].winner == "a"
    assert [c.games[0].winner for c in row.candidates] == ["b"]
    store.accept_candidate("m1", attempt)
    row = store.match_row("m1")
    assert row is not None and row.result is not None and row.result.games[0].winner == "b"
    assert [s.games[0].winner for s in row.superseded] == ["a"]
    assert row.candidates == ()
    assert store.official_results()["m1"][0].winner == "b"


def test_read_api_shapes(store: RunStore) -> None:
    plan(store, "m1")
    rows = store.match_rows()
    assert [r.match_id for r in rows] == ["m1"]
    r = rows[0]
    assert (r.stage, r.players, r.board_id, r.orders, r.state, r.attempt) == (
        "rr",
        ("a", "b"),
        "b",
        (("a", "b"), ("b", "a")),
        "pending",
        0,
    )
    assert store.board_texts() == {"b": "3 3 3"}
    assert all(e.kind for e in store.events())


def test_a_reader_sees_the_writer(store: RunStore, tmp_path: Path) -> None:
    plan(store, "m1")
    reader = RunStore.open(tmp_path / "run")
    store.dispatch("m1")
    store.accept("m1", 1, result("m1"), attempt_cap=3)
    assert reader.official_results()["m1"][0].winner == "a"
    reader.close()
    with pytest.raises(sqlite3.ProgrammingError):
        reader.meta()


def test_redelivered_attempt_counts_as_a_failure(store: RunStore) -> None:
    """The broker handing the same attempt out again means its worker died (reject_on_worker_lost)."""
    plan(store, "m1")
    store.dispatch("m1")
    assert store.mark_started("m1", 1, "w1", 1e12, execution="e1", attempt_cap=3).status == "accepted"
    assert store.mark_started("m1", 1, "w1", 1e12, execution="e1", attempt_cap=3).status == "ignored"
    assert store.mark_started("m1", 1, "w2", 1e12, execution="e2", attempt_cap=3).status == "redelivered"
    assert store.mark_started("m1", 1, "w1", 1e12, execution="e3", attempt_cap=3).status == "redelivered"
    acc = store.mark_started("m1", 1, "w2", 1e12, execution="e4", attempt_cap=3)
    assert acc.status == "failed"
    row = store.match_row("m1")
    assert row is not None and row.state == "failed" and row.result is not None
    assert row.result.system_error is not None and "handed out again" in row.result.system_error.detail
    # the last execution's result, should it come, changes nothing
    assert store.accept("m1", 1, result("m1"), attempt_cap=3).status == "ignored"


def test_a_match_record_holds_the_plan_and_spec_it_was_stored_with(store: RunStore) -> None:
    planned = [spec("m1"), spec("m2", stage="final", players=("b", "a"), pairing=1)]
    store.sync_plan(planned)
    records = store.match_records()
    assert [r.spec for r in records] == planned
    assert [r.plan for r in records] == [s.plan for s in planned]
    r = records[1]
    assert (r.match_id, r.stage, r.pairing, r.players, r.orders) == (
        "m2",
        "final",
        1,
        ("b", "a"),
        (("b", "a"), ("a", "b")),
    )
    assert r.games == () and not r.finished and r.result_text() == "-"
    assert store.match_record("m2") == r and store.match_record("nope") is None


def test_in_flight_lists_the_records_of_queued_and_running_matches(store: RunStore) -> None:
    plan(store, "m1", "m2", "m3")
    store.dispatch("m1")
    store.dispatch("m2")
    store.mark_started("m2", 1, "w7", 1e12, execution="e1", attempt_cap=3)
    flying = store.in_flight()
    assert [(f.match_id, f.state, f.attempt, f.worker) for f in flying] == [
        ("m1", "queued", 1, ""),
        ("m2", "running", 1, "w7"),
    ]
    assert flying[1].lease_expires == 1e12 and flying[0].dispatched_at is not None
    assert all(f.spec is not None for f in flying)


def test_a_spec_stored_before_the_plan_travelled_in_it_reads_its_pairing_and_players_from_the_row(
    store: RunStore,
) -> None:
    """Runs stored by earlier versions keep ``pairing`` and ``players`` only in their columns."""
    store.sync_plan([spec("m1", players=("b", "a"), pairing=4)])
    old = to_builtins(spec("m1", players=("b", "a"), pairing=4))
    del old["pairing"], old["players"]
    store._conn.execute("UPDATE matches SET spec=? WHERE id='m1'", (json.dumps(old),))
    r = store.match_record("m1")
    assert r is not None and (r.pairing, r.players) == (4, ("b", "a"))
    assert store.spec("m1") == spec("m1", players=("b", "a"), pairing=4)
    assert store.dispatch("m1")[0].plan.pairing == 4


def test_the_plan_is_kept_once_in_the_stored_spec() -> None:
    """Adding a plan field needs no store change: the spec's JSON carries every plan field."""
    d = to_builtins(spec("m1", pairing=2))
    assert {f.name for f in dataclasses.fields(MatchPlan)} <= set(d)
