"""Scratch: a field added to MatchSpec alone reaches the wire, the signature and the store."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from runner.domain.match_values import EntryRef, Limits, MatchSpec
from runner.domain.signing import SigningKey
from runner.domain.wire import TaskEnvelope, decode, encode, open_message, signed
from runner.storage.store import RunStore


def test_a_new_field_travels_everywhere(tmp_path: Path) -> None:
    ref = EntryRef(name="a", digest="cd" * 32, protocol="mnk", run=["./a.out"])
    spec = dataclasses.replace(
        MatchSpec.of("m1", "mnk", "b", "7 7 4", [["a", "b"]], {"a": ref, "b": ref}, Limits(), 3), priority=7
    )
    assert decode(encode(spec), MatchSpec).priority == 7
    key = SigningKey.generate()
    opened, _ = open_message(signed(TaskEnvelope("r", 1, spec), key), TaskEnvelope, key.public)
    assert opened.spec.priority == 7
    store = RunStore.create(tmp_path, {"name": "x", "run_id": "r"})
    store.sync_plan([spec])
    assert store.spec("m1").priority == 7
    old = encode(spec).replace(b',"priority":7', b"")  # stored before the field existed
    assert decode(old, MatchSpec).priority == 0
