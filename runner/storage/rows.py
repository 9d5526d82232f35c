"""Reading a stored match back: a ``matches`` row (and its ``results`` rows) as domain values."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence

from runner.domain.contracts import MatchResult, MatchSpec
from runner.domain.match_record import MatchRecord


def spec_from_row(m: sqlite3.Row) -> MatchSpec:
    """The one place a stored spec is read back. Specs stored before the plan's
    ``pairing`` and ``players`` travelled inside them take those from their columns."""
    d = json.loads(m["spec"])
    d.setdefault("pairing", m["pairing"])
    d.setdefault("players", json.loads(m["players"]))
    return MatchSpec.from_dict(d)


def record_from_row(m: sqlite3.Row, results: Sequence[sqlite3.Row]) -> MatchRecord:
    """A ``matches`` row and its ``results`` rows (in id order) as one ``MatchRecord``."""
    by_status: dict[str, list[MatchResult]] = {}
    for r in results:
        by_status.setdefault(r["status"], []).append(MatchResult.from_dict(json.loads(r["result"])))
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
