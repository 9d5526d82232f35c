"""The wire messages (task envelope and inbox notes) survive JSON both ways and keep their shape."""

from __future__ import annotations

import json

import pytest

from runner.domain.contracts import (
    ENVELOPE_VERSION,
    SIGNATURE_KEY,
    EntryRef,
    Finished,
    GameRecord,
    Limits,
    MatchResult,
    MatchSpec,
    MoveRecord,
    Note,
    Skipped,
    Started,
    TaskEnvelope,
    Verdict,
    VerdictKind,
    WireError,
    canonical_json,
    note_from_dict,
    unsigned,
)


def _spec() -> MatchSpec:
    ref = EntryRef(name="a", digest="cd" * 32, protocol="mnk", run=["./a.out"], build="cc main.c")
    return MatchSpec.of(
        match_id="m7", game="mnk", board_id="b", board_text="7 7 4", orders=[["a", "b"], ["b", "a"]],
        entries={"a": ref, "b": ref}, limits=Limits(move_wall_s=0.5, game_wall_s=9.0), seed=3,
        sandbox="none", stage="final", round=1,
    )  # fmt: skip


def _result() -> MatchResult:
    game = GameRecord(
        order=["a", "b"], winner="a", scores={"a": 1, "b": 0}, verdict=Verdict(VerdictKind.NORMAL, None, ""),
        moves=[MoveRecord("a", "4 4", 1.25, 0.5)], reason="4 in a row",
    )  # fmt: skip
    return MatchResult("m7", [game], worker="w1", digests={"a": "cd" * 32})


def _over_json(d: dict[str, object]) -> dict[str, object]:
    loaded: dict[str, object] = json.loads(json.dumps(d))
    return loaded


def test_envelope_round_trips_through_json() -> None:
    env = TaskEnvelope(run="r1", attempt=2, spec=_spec(), heartbeat_s=0.5, heartbeat_ttl_s=1.5)
    assert TaskEnvelope.from_dict(_over_json(env.to_dict())) == env


def test_envelope_keeps_the_version_1_shape() -> None:
    d = TaskEnvelope(run="r1", attempt=2, spec=_spec()).to_dict()
    assert d == {
        "v": 1, "run": "r1", "attempt": 2, "spec": _spec().to_dict(),
        "heartbeat_s": 5.0, "heartbeat_ttl_s": 15.0,
    }  # fmt: skip
    assert ENVELOPE_VERSION == 1


def test_an_envelope_of_another_version_or_without_a_spec_is_refused() -> None:
    d = TaskEnvelope(run="r1", attempt=1, spec=_spec()).to_dict()
    with pytest.raises(WireError, match="unknown envelope version 2"):
        TaskEnvelope.from_dict({**d, "v": 2})
    with pytest.raises(WireError, match="spec"):
        TaskEnvelope.from_dict({k: v for k, v in d.items() if k != "spec"})


NOTES: list[Note] = [
    Started("m7", 2, "w1", execution="e" * 32, ts=1700000000.5),
    Finished("m7", 2, _result(), worker="w1"),
    Skipped("m7", 1, "w2"),
]


@pytest.mark.parametrize("note", NOTES, ids=lambda n: type(n).__name__)
def test_notes_round_trip_through_json(note: Note) -> None:
    again = note_from_dict(_over_json(note.to_dict()))
    assert again == note and type(again) is type(note)


def test_notes_keep_their_kinds_and_keys() -> None:
    assert [n.to_dict()["kind"] for n in NOTES] == ["started", "result", "skipped"]
    assert set(NOTES[0].to_dict()) == {"kind", "match_id", "attempt", "worker", "execution", "ts"}
    assert set(NOTES[1].to_dict()) == {"kind", "run", "match_id", "attempt", "worker", "result"}
    assert set(NOTES[2].to_dict()) == {"kind", "match_id", "attempt", "worker", "reason"}


def test_an_older_workers_note_without_optional_fields_still_reads() -> None:
    assert note_from_dict({"kind": "started", "match_id": "m", "attempt": "3"}) == Started("m", 3, "")


@pytest.mark.parametrize(
    "d",
    [
        {"kind": "exploded", "match_id": "m", "attempt": 1},
        {"kind": "started", "attempt": 1},
        {"kind": "result", "match_id": "m", "attempt": 1, "result": {"games": []}},
        {"kind": "skipped", "match_id": "m", "attempt": "one"},
        ["started"],
    ],
    ids=["unknown-kind", "no-match-id", "broken-result", "bad-attempt", "not-an-object"],
)
def test_what_is_not_a_note_is_a_wire_error(d: object) -> None:
    with pytest.raises(WireError):
        note_from_dict(d)  # type: ignore[arg-type]


def test_a_signature_can_be_attached_and_is_ignored_by_from_dict() -> None:
    # a signer will add SIGNATURE_KEY over canonical_json of the rest; readers skip it
    for message in [*NOTES, TaskEnvelope(run="r", attempt=1, spec=_spec())]:
        d = message.to_dict()
        signed = {**d, SIGNATURE_KEY: "00ff"}
        assert unsigned(signed) == d
        assert canonical_json(unsigned(_over_json(signed))) == canonical_json(d)
        again = (
            TaskEnvelope.from_dict(signed) if isinstance(message, TaskEnvelope) else note_from_dict(signed)
        )
        assert again == message


def test_canonical_json_does_not_depend_on_key_order() -> None:
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": "é"}]}) == canonical_json(
        {"a": [1, {"c": "é", "d": 2}], "b": 1}
    )
    assert canonical_json({"b": 1, "a": 2}) == b'{"a":2,"b":1}'
