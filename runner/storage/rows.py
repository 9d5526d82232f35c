"""Reading a stored match back: a ``matches`` row (and its ``results`` rows) as domain values."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from runner.domain.match_record import MatchRecord
from runner.domain.match_values import MatchResult, MatchSpec
from runner.domain.wire import WireError, decode, encode, from_builtins


def column_text(value: object) -> str:
    """A value as the store keeps it in a column: the codec's JSON (``runner.domain.wire``)."""
    return encode(value).decode()


def spec_from_row(m: sqlite3.Row) -> MatchSpec:
    """The one place a stored spec is read back (the row needs its ``spec``, ``pairing`` and
    ``players`` columns). Specs stored before the plan's ``pairing`` and ``players``
    travelled inside them take those from their columns."""
    try:
        return decode(m["spec"], MatchSpec)
    except WireError:
        d = json.loads(m["spec"])
        if "pairing" in d and "players" in d:
            raise
        d.setdefault("pairing", m["pairing"])
        d.setdefault("players", json.loads(m["players"]))
        return from_builtins(d, MatchSpec)


def record_from_row(m: sqlite3.Row, results: Sequence[sqlite3.Row]) -> MatchRecord:
    """A ``matches`` row and its ``results`` rows (in id order) as one ``MatchRecord``."""
    by_status: dict[str, list[MatchResult]] = {}
    for r in results:
        by_status.setdefault(r["status"], []).append(decode(r["result"], MatchResult))
    official = by_status.get("official", [])
    spec = spec_from_row(m)
    return MatchRecord(
        plan=spec.plan,
        spec=spec,
        state=m["state"],
        attempt=m["attempt"],
        worker=m["worker"],
        failures=m["failures"],
        result=official[-1] if official else None,
        superseded=tuple(by_status.get("superseded", [])),
        candidates=tuple(by_status.get("candidate", [])),
        rejected=tuple(by_status.get("rejected", [])),
        seq=m["seq"],
        lease_expires=m["lease_expires"],
        dispatched_at=m["dispatched_at"],
        started_at=m["started_at"],
        finished_at=m["finished_at"],
        updated_at=m["updated_at"],
    )
