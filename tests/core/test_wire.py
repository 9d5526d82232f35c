"""The codec and the wire messages (runner.domain.wire): every message and value survives
encode then decode unchanged, whatever its fields hold; what is not one of ours is refused;
a signed message opens only with the key that signed it and only unaltered."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from runner.domain.match_values import (
    EntryRef,
    GameBound,
    GameRecord,
    Limits,
    MatchPlan,
    MatchResult,
    MatchSpec,
    MoveRecord,
    SearchInfo,
    TimingConditions,
    Verdict,
    VerdictKind,
)
from runner.domain.signing import (
    SignatureError,
    SigningKey,
    keyring,
    open_message,
    open_note,
    sign_bytes,
    signed,
)
from runner.domain.wire import (
    ENVELOPE_VERSION,
    Finished,
    LiveMatch,
    Note,
    QuarantineNotice,
    Skipped,
    Started,
    TaskEnvelope,
    WireError,
    decode,
    decode_note,
    encode,
)

# -- strategies: every field of every value, drawn (JSON's floats: no NaN, no infinity) ----------
names = st.text(max_size=8)
floats = st.floats(allow_nan=False, allow_infinity=False)
ints = st.integers(-(2**53), 2**53)
json_scalar = st.none() | st.booleans() | ints | floats | names
json_object = st.dictionaries(names, json_scalar | st.lists(json_scalar, max_size=3), max_size=3)
name_tuples = st.lists(names, max_size=3).map(tuple)

limits = st.builds(
    Limits, move_wall_s=floats, move_cpu_s=st.none() | floats, memory_mb=ints, output_kb=ints,
    processes=ints, open_files=ints, file_size_mb=ints, game_wall_s=st.none() | floats, exit_grace_ms=ints,
)  # fmt: skip
entry_refs = st.builds(
    EntryRef, name=names, digest=names, protocol=names, run=st.lists(names, max_size=3),
    build=st.none() | names, args=st.lists(names, max_size=2), engine=json_object,
)  # fmt: skip
plans = st.builds(
    MatchPlan, stage=names, round=ints, bracket=names, pairing=ints, players=name_tuples, board_id=names,
    orders=st.lists(name_tuples, max_size=3).map(tuple), match_id=names,
)  # fmt: skip
specs = st.builds(
    MatchSpec.playing, plans, game=names, board_text=st.text(max_size=40),
    entries=st.dictionaries(names, entry_refs, max_size=2), limits=limits, seed=ints, sandbox=names,
    game_params=json_object, exclusive_cores=st.booleans(),
    bound=st.builds(GameBound, max_moves=st.none() | ints, wall_s=st.none() | floats),
    adjudication=json_object,
)  # fmt: skip
moves = st.builds(
    MoveRecord, player=names, move=names, wall_ms=floats, cpu_ms=st.none() | floats,
    search=st.none() | st.builds(SearchInfo, cp=st.none() | ints, mate=st.none() | ints, depth=ints),
)  # fmt: skip
verdicts = st.builds(Verdict, kind=st.sampled_from(VerdictKind), player=st.none() | names, detail=names)
games = st.builds(
    GameRecord, order=st.lists(names, max_size=3), winner=st.none() | names,
    scores=st.dictionaries(names, ints, max_size=3), verdict=verdicts, moves=st.lists(moves, max_size=4),
    reason=names, stopped_by=names, stderr=st.dictionaries(names, st.lists(names, max_size=2), max_size=2),
)  # fmt: skip
results = st.builds(
    MatchResult, match_id=names, games=st.lists(games, max_size=3), worker=names,
    digests=st.dictionaries(names, names, max_size=2), build_logs=st.dictionaries(names, names, max_size=2),
    timing=st.none() | st.builds(
        TimingConditions, exclusive=st.booleans(), cpus=st.lists(ints, max_size=3), worker_cores=ints,
        worker_concurrency=ints, waited_s=floats,
    ),
)  # fmt: skip
envelopes = st.builds(
    TaskEnvelope, run=names, attempt=ints, spec=specs, heartbeat_s=floats, heartbeat_ttl_s=floats,
    copy_of=names,
)  # fmt: skip
started = st.builds(
    Started, match_id=names, attempt=ints, worker=names, execution=names, ts=floats, copy=st.booleans()
)
finished = st.builds(Finished, match_id=names, attempt=ints, result=results, worker=names, run=names)
skipped = st.builds(Skipped, match_id=names, attempt=ints, worker=names, reason=names)
notes = started | finished | skipped
lives = st.builds(
    LiveMatch, match_id=names, attempt=ints, worker=names, players=name_tuples, games=ints, phase=names,
    game=ints, moves=ints, building=name_tuples,
)  # fmt: skip
quarantines = st.builds(QuarantineNotice, worker=names, worker_key=names, run=names, reason=names)

MESSAGES: list[tuple[type[Any], st.SearchStrategy[Any]]] = [
    (MatchSpec, specs),
    (MatchResult, results),
    (GameRecord, games),
    (TaskEnvelope, envelopes),
    (Started, started),  # each kind drawn by itself: filtering the union threw most draws away
    (Finished, finished),
    (Skipped, skipped),
    (LiveMatch, lives),
    (QuarantineNotice, quarantines),
]


@pytest.mark.parametrize(("kind", "values"), MESSAGES, ids=lambda m: getattr(m, "__name__", ""))
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_every_message_round_trips_through_the_codec(
    kind: type[Any], values: st.SearchStrategy[Any], data: st.DataObject
) -> None:
    value = data.draw(values)
    raw = encode(value)
    assert decode(raw, kind) == value
    assert encode(decode(raw, kind)) == raw  # one value, one encoding
    assert list(json.loads(raw)) == sorted(json.loads(raw))  # keys sorted


@settings(max_examples=40, deadline=None)
@given(note=notes)
def test_a_note_decodes_as_its_own_kind(note: Note) -> None:
    again = decode_note(encode(note))
    assert again == note and type(again) is type(note)


@settings(max_examples=30, deadline=None)
@given(envelope=envelopes, note=notes)
def test_a_signed_message_opens_with_its_key_and_only_unaltered(envelope: TaskEnvelope, note: Note) -> None:
    organiser, worker = _KEYS
    blob = signed(envelope, organiser)
    assert open_message(blob, TaskEnvelope, organiser.public) == (envelope, organiser.key_id)
    assert open_message(blob.decode(), TaskEnvelope, organiser.public)[0] == envelope
    with pytest.raises(SignatureError, match="another key"):
        open_message(blob, TaskEnvelope, worker.public)
    tampered = blob.replace(b'"attempt":', b'"attempt":1', 1)
    with pytest.raises(SignatureError, match="altered"):
        open_message(tampered, TaskEnvelope, organiser.public)
    assert open_note(signed(note, worker), keyring(organiser.public, worker.public)) == (note, worker.key_id)


_KEYS = (SigningKey.generate(), SigningKey.generate())


def _spec() -> MatchSpec:
    ref = EntryRef(name="a", digest="cd" * 32, protocol="mnk", run=["./a.out"], build="cc main.c")
    return MatchSpec.of(
        match_id="m7", game="mnk", board_id="b", board_text="7 7 4", orders=[["a", "b"], ["b", "a"]],
        entries={"a": ref, "b": ref}, limits=Limits(move_wall_s=0.5, game_wall_s=9.0), seed=3,
        sandbox="none", stage="final", round=1,
    )  # fmt: skip


def test_the_envelope_carries_its_version_and_refuses_another() -> None:
    raw = encode(TaskEnvelope(run="r1", attempt=2, spec=_spec()))
    assert json.loads(raw)["v"] == ENVELOPE_VERSION == 2
    with pytest.raises(WireError, match="unknown envelope version 1; upgrade this worker"):
        decode(raw.replace(b'"v":2', b'"v":1'), TaskEnvelope)
    without_spec = {k: v for k, v in json.loads(raw).items() if k != "spec"}
    with pytest.raises(WireError, match="spec"):
        decode(json.dumps(without_spec), TaskEnvelope)


def test_a_spec_is_flat_the_plan_beside_the_rest() -> None:
    """The store's rows and the workers read a spec's plan keys at its top level, as always."""
    d = json.loads(encode(_spec()))
    assert "plan" not in d
    assert {k: d[k] for k in ("match_id", "stage", "round", "bracket", "pairing", "players", "board_id")} == {
        "match_id": "m7", "stage": "final", "round": 1, "bracket": "", "pairing": 0,
        "players": ["a", "b"], "board_id": "b",
    }  # fmt: skip
    assert d["orders"] == [["a", "b"], ["b", "a"]]


def test_notes_keep_their_kinds() -> None:
    kinds = [json.loads(encode(n))["kind"] for n in (Started("m", 1), _finished(), Skipped("m", 1))]
    assert kinds == ["started", "result", "skipped"]


def _finished() -> Finished:
    return Finished("m", 1, MatchResult("m", []))


def test_an_older_workers_note_without_optional_fields_still_reads() -> None:
    assert decode_note(b'{"kind":"started","match_id":"m","attempt":3}') == Started("m", 3)


@pytest.mark.parametrize(
    "raw",
    [
        b'{"kind":"exploded","match_id":"m","attempt":1}',
        b'{"kind":"started","attempt":1}',
        b'{"kind":"result","match_id":"m","attempt":1,"result":{"games":[]}}',
        b'{"kind":"skipped","match_id":"m","attempt":"one"}',
        b'["started"]',
        b"not json",
    ],
    ids=["unknown-kind", "no-match-id", "broken-result", "bad-attempt", "not-an-object", "not-json"],
)
def test_what_is_not_a_note_is_a_wire_error(raw: bytes) -> None:
    with pytest.raises(WireError):
        decode_note(raw)


def test_members_a_reader_does_not_know_are_skipped() -> None:
    """A newer sender's extra field, or a signature left on, does not stop an older reader."""
    raw = encode(Skipped("m", 1, "w", "full"))
    assert decode_note(raw[:-1] + b',"later_field":[1,2],"sig":{"key":"x"}}') == Skipped("m", 1, "w", "full")


def test_a_result_note_as_a_worker_before_the_codec_signed_it_still_opens() -> None:
    """Workers before issue 27 wrote notes by hand: optional members left out when empty, the
    signature appended the same way. Such a note still opens (docs/fleet.md)."""
    worker = SigningKey.generate()
    old = (
        b'{"attempt":2,"kind":"result","match_id":"m7","result":{"digests":{},"games":[{"moves":'
        b'[{"cpu_ms":null,"move":"4 4","player":"a","search":null,"wall_ms":1.5}],"order":["a","b"],'
        b'"reason":"","scores":{"a":1,"b":0},"verdict":{"detail":"","kind":"normal","player":null},'
        b'"winner":"a"}],"match_id":"m7","worker":"w1"},"run":"r1","worker":"w1"}'
    )
    note, key_id = open_note(sign_bytes(old, worker), worker.public)
    game = GameRecord(
        ["a", "b"], "a", {"a": 1, "b": 0}, Verdict(VerdictKind.NORMAL), [MoveRecord("a", "4 4", 1.5)]
    )
    assert note == Finished("m7", 2, MatchResult("m7", [game], worker="w1"), worker="w1", run="r1")
    assert key_id == worker.key_id
