"""``MoveRecord.to_dict`` is written out field by field (it runs once per move of every
result): it must stay what ``dataclasses.asdict`` gives, whatever fields are added."""

from __future__ import annotations

from dataclasses import asdict, fields

from runner.domain.contracts import MoveRecord


def test_move_record_to_dict_is_asdict_with_every_field() -> None:
    for record in (MoveRecord("a", "5 5", 1.25, 0.5), MoveRecord("b", "1 9", 0.0)):
        d = record.to_dict()
        assert d == asdict(record)
        assert list(d) == [f.name for f in fields(MoveRecord)]
        assert MoveRecord.from_dict(d) == record
