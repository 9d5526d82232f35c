"""Disputes: candidates and acceptances in a real SQLite store, and the pure comparisons."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.domain.disputes import (
    Acceptance,
    adoption_chains,
    code_changes,
    explain_difference,
    explained_by_adoption,
    first_divergence,
)
from runner.domain.match_values import EntryRef, GameRecord, MatchResult, MoveRecord, Verdict, VerdictKind
from runner.storage.disputes import CandidateRefused, Disputes
from runner.storage.store import RunStore
from tests.store.test_store import plan, result, spec


@pytest.fixture
def store(tmp_path: Path) -> Iterator[RunStore]:
    s = RunStore.create(tmp_path / "run", {"name": "t", "run_id": "r1"})
    yield s
    s.close()


def played(store: RunStore, mid: str, winner: str = "a") -> MatchResult:
    plan(store, mid)
    store.dispatch(mid)
    first = result(mid, winner=winner)
    assert store.accept(mid, 1, first, attempt_cap=3).status == "accepted"
    return first


def game(moves: list[tuple[str, str]], winner: str | None = "a", wall_ms: float = 1.0) -> GameRecord:
    return GameRecord(
        ["a", "b"],
        winner,
        {"a": int(winner == "a"), "b": int(winner == "b")},
        Verdict(VerdictKind.NORMAL, None, ""),
        [MoveRecord(p, m, wall_ms) for p, m in moves],
    )


def test_candidates_are_numbered_and_accept_takes_exactly_the_one_named(store: RunStore) -> None:
    official = played(store, "m1")
    d = Disputes(store)
    assert d.candidates() == [] and d.log().candidates == ()
    one = d.add_candidate(
        spec("m1"),
        result("m1", winner="b", worker="rerun"),
        played_by="ann",
        changed_code={},
        first_difference="game 1: ...",
    )
    two = d.add_candidate(
        spec("m1"),
        result("m1", winner="a", worker="rerun2"),
        played_by="bob",
        changed_code={},
        first_difference="",
    )
    assert (one.number, one.attempt, two.number, two.attempt) == (1, 2, 2, 3)
    assert store.match_record("m1").result == official  # type: ignore[union-attr]  # nothing official yet

    acc = d.accept("m1", 1, by="carl", reason="upheld", code_choice="", code_changes={})
    assert (acc.candidate, acc.attempt, acc.replaced_attempt, acc.by) == (1, 2, 1, "carl")
    row = store.match_record("m1")
    assert row is not None and row.result == one.result and row.superseded == (official,)
    assert row.candidates == (two.result,)
    with pytest.raises(CandidateRefused, match="already the official result"):
        d.accept("m1", 1, by="carl", reason="again", code_choice="", code_changes={})
    with pytest.raises(CandidateRefused, match="no candidate 7"):
        d.accept("m1", 7, by="carl", reason="?", code_choice="", code_changes={})

    # accepting candidate 2 later supersedes candidate 1 in turn; the log knows both origins
    d.accept("m1", 2, by="dora", reason="second look", code_choice="", code_changes={})
    log = d.log()
    assert log.origin("m1", 3)["how"] == "accepted" and log.origin("m1", 3)["by"] == "dora"
    assert [r.attempt for r in log.superseded("m1")] == [1, 2]
    assert log.origin("m1", 1) == {
        "how": "played",
        "attempt": 1,
        "worker": "w1",
        "at": pytest.approx(log.results["m1"][0].received_at),
    }
    assert [e["event"] for e in log.history("m1")] == ["rerun", "rerun", "accept", "accept"]


def test_an_altered_candidate_is_refused(store: RunStore) -> None:
    played(store, "m1")
    d = Disputes(store)
    d.add_candidate(
        spec("m1"), result("m1", winner="b"), played_by="ann", changed_code={}, first_difference=""
    )
    store.connection.execute(
        'UPDATE results SET result=replace(result, \'"winner":"b"\', \'"winner":"a"\') '
        "WHERE status='candidate'"
    )
    with pytest.raises(CandidateRefused, match="missing or altered"):
        d.accept("m1", 1, by="x", reason="y", code_choice="", code_changes={})
    assert store.match_record("m1").superseded == ()  # type: ignore[union-attr]  # the failed accept rolled back


def test_respec_touches_only_matches_not_played(store: RunStore) -> None:
    played(store, "m1")
    plan(store, "m1", "m2")
    new_ref = EntryRef(name="a", digest="9" * 64, protocol="mnk", run=["./a"])
    adopted = [dataclasses.replace(spec(m), entries={**spec(m).entries, "a": new_ref}) for m in ("m1", "m2")]
    assert Disputes(store).respec_unplayed(adopted) == ["m2"]
    assert store.spec("m2").entries["a"].digest == "9" * 64
    assert store.spec("m1").entries["a"].digest == "0" * 64  # played with the old code: kept as played


def test_first_divergence_names_the_move_the_player_and_the_ending() -> None:
    base = MatchResult("m", [game([("a", "1 1"), ("b", "2 2"), ("a", "1 2")])])
    assert first_divergence(base, base) is None
    other = MatchResult("m", [game([("a", "1 1"), ("b", "3 3"), ("a", "1 2")])])
    d = first_divergence(base, other)
    assert d is not None and (d.game, d.move, d.player) == (1, 2, "b")
    assert d.text() == "game 1, move 2: old 2 2 (b) vs new 3 3 (b)"
    ending = MatchResult("m", [game([("a", "1 1"), ("b", "2 2"), ("a", "1 2")], winner=None)])
    e = first_divergence(base, ending)
    assert e is not None and e.move is None and "different ending" in e.text()


def test_explain_difference_says_what_the_records_prove() -> None:
    s = spec("m")
    base = MatchResult("m", [game([("a", "1 1"), ("b", "2 2")])])
    assert explain_difference(s, base, base, {}) == [
        "identical move for move: same moves, winners, scores and verdicts in every game"
    ]
    other = MatchResult("m", [game([("a", "1 1"), ("b", "3 3")], wall_ms=900.0)])
    lines = explain_difference(s, base, other, {})
    assert any("b is not deterministic" in line for line in lines)
    assert any("half of the move time limit" in line and "b up to 90%" in line for line in lines)
    changed = code_changes(s.entries, {"a": "0" * 64, "b": "f" * 64})
    assert changed == {"b": ("1" * 64, "f" * 64)}
    lines = explain_difference(s, base, other, changed)
    assert lines[0].startswith("entry code changed: b") and "whose code changed" in lines[1]


def test_only_adopted_code_explains_a_played_match_planned_differently() -> None:
    def acc(choice: str, pair: tuple[str, str]) -> Acceptance:
        return Acceptance("m", 1, 2, "x", 0.0, "r", 1, choice, {"p": pair})  # type: ignore[arg-type]

    chains = adoption_chains(
        [acc("adopt", ("d0", "d1")), acc("adopt", ("d1", "d2")), acc("keep", ("d2", "d9"))]
    )
    stored = {"p": {"digest": "d0", "run": ["./a"]}, "q": {"digest": "e0"}}
    assert explained_by_adoption(
        stored, {"p": {"digest": "d2", "run": ["./a"]}, "q": {"digest": "e0"}}, chains
    )
    assert not explained_by_adoption(stored, {"p": {"digest": "d9"}, "q": {"digest": "e0"}}, chains)
    assert not explained_by_adoption(stored, {"p": {"digest": "d1"}, "q": {"digest": "e1"}}, chains)
    mirror = {"p~mirror": {"digest": "d0"}}
    assert explained_by_adoption(mirror, {"p~mirror": {"digest": "d1"}}, chains)


def test_a_voided_match_planned_again_keeps_its_result_only_with_the_code_it_was_played_with(
    store: RunStore,
) -> None:
    """Seed reading (docs/config.md, seed 000): a match id names stage, round, pairing, players,
    board and seats, not code. Voided by an accept and planned again later, a match with the spec
    and code it was played with is the same match (kept); after `accept --adopt-code` changed a
    player's code it is not: its old result is superseded and it is played again."""
    from runner.commands.disputes import voided_text

    specs = [spec("m1"), spec("m2", players=("a", "c"), pairing=1)]
    store.sync_plan(specs)
    results = {}
    for s in specs:
        store.dispatch(s.match_id)
        results[s.match_id] = result(s.match_id)
        assert store.accept(s.match_id, 1, results[s.match_id], attempt_cap=3).status == "accepted"
    assert store.sync_plan([]).obsolete == ["m1", "m2"]  # an accept's replan voided both

    # planned again: m1 exactly as played; m2 with a's adopted code
    new_a = EntryRef(name="a", digest="9" * 64, protocol="mnk", run=["./a"])
    m2_now = dataclasses.replace(specs[1], entries={**specs[1].entries, "a": new_a})
    sync = store.sync_plan([specs[0], m2_now])
    assert sync.revived == ["m1", "m2"] and sync.kept == ["m1"] and sync.replayed == ["m2"]
    kept, replay = store.match_record("m1"), store.match_record("m2")
    assert kept is not None and kept.state == "done" and kept.result == results["m1"]
    assert replay is not None and replay.state == "pending" and replay.result is None
    assert replay.superseded == (results["m2"],)
    assert store.spec("m2").entries["a"].digest == "9" * 64  # it plays the adopted code
    assert "m2" in store.pending() and "m1" not in store.pending()
    fates = Disputes(store).voided_fates(["m1", "m2"])
    assert fates == {"m1": "kept", "m2": "replayed"}
    text = voided_text(("m1", "m2"), fates)
    assert "kept (planned again, same spec and code: result stands) m1" in text
    assert "replayed (planned again with adopted code) m2" in text and "voided m" not in text

    # replayed: a new attempt becomes the official result
    assert store.dispatch("m2") is not None
    again = result("m2", winner="c")
    assert store.accept("m2", 2, again, attempt_cap=3).status == "accepted"
    assert store.match_record("m2").result == again  # type: ignore[union-attr]
