"""What a run store answers: results, match records, specs, counts, events and boards.

These only read (the report reads while the coordinator writes: SQLite's WAL mode lets it),
so a part of the store that reads is never in the way of one that writes.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from runner.domain.match_record import MatchRecord
from runner.domain.match_values import GameRecord, MatchResult, MatchSpec
from runner.domain.wire import decode
from runner.storage.connection import StoreConnection
from runner.storage.rows import record_from_row, spec_from_row
from runner.storage.schema import StoreError

IN_FLIGHT = ("queued", "running")


@dataclass(frozen=True)
class Event:
    ts: float
    kind: str
    match_id: str | None
    detail: str


@dataclass(frozen=True)
class InFlight:
    """A queued or running match's life, without its spec and results (``in_flight_leases``)."""

    match_id: str
    state: str
    attempt: int
    worker: str
    lease_expires: float | None
    dispatched_at: float | None


class StoreQueries(StoreConnection):
    """The reading half of ``RunStore``."""

    def board_texts(self) -> dict[str, str]:
        return {r["id"]: r["text"] for r in self._conn.execute("SELECT id, text FROM boards")}

    def events(self, kind: str | None = None) -> list[Event]:
        q = "SELECT ts, kind, match_id, detail FROM events"
        rows = (
            self._conn.execute(q + " WHERE kind=? ORDER BY id", (kind,))
            if kind
            else self._conn.execute(q + " ORDER BY id")
        )
        return [Event(r["ts"], r["kind"], r["match_id"], r["detail"]) for r in rows]

    def official_results(self) -> dict[str, list[GameRecord]]:
        return dict(self.iter_official_results())

    def iter_official_results(self) -> Iterator[tuple[str, list[GameRecord]]]:
        """``official_results`` one match at a time (a later row of the same match wins), so a
        reader that keeps less of each result never holds them all decoded at once."""
        rows = self._conn.execute(
            "SELECT r.match_id, r.result FROM results r JOIN matches m ON m.id = r.match_id "
            "WHERE r.status = 'official' AND m.state IN ('done', 'failed') ORDER BY r.id"
        )
        for r in rows:
            yield r["match_id"], decode(r["result"], MatchResult).games

    def match_records(self, *, states: Sequence[str] = ()) -> list[MatchRecord]:
        """Every match (or those in ``states``) with its kept results, in plan order."""
        where = f" WHERE state IN ({','.join('?' * len(states))})" if states else ""
        matches = self._conn.execute(f"SELECT * FROM matches{where} ORDER BY seq", tuple(states)).fetchall()
        if states:
            ids = [m["id"] for m in matches]
            marks = ",".join("?" * len(ids))
            rs = self._conn.execute(
                f"SELECT match_id, status, result FROM results WHERE match_id IN ({marks}) ORDER BY id", ids
            ).fetchall()
        else:
            rs = self._conn.execute("SELECT match_id, status, result FROM results ORDER BY id").fetchall()
        results: dict[str, list[sqlite3.Row]] = {}
        for r in rs:
            results.setdefault(r["match_id"], []).append(r)
        return [record_from_row(m, results.get(m["id"], [])) for m in matches]

    def match_record(self, match_id: str) -> MatchRecord | None:
        m = self._conn.execute("SELECT * FROM matches WHERE id=?", (match_id,)).fetchone()
        if m is None:
            return None
        rs = self._conn.execute(
            "SELECT match_id, status, result FROM results WHERE match_id=? ORDER BY id", (match_id,)
        ).fetchall()
        return record_from_row(m, rs)

    # the names the report and tests used before ``MatchRecord``
    def match_rows(self) -> list[MatchRecord]:
        return self.match_records()

    def match_row(self, match_id: str) -> MatchRecord | None:
        return self.match_record(match_id)

    def spec(self, match_id: str) -> MatchSpec:
        r = self._conn.execute("SELECT * FROM matches WHERE id=?", (match_id,)).fetchone()
        if r is None:
            raise StoreError(f"no match {match_id!r} in {self.path}")
        return spec_from_row(r)

    def specs(self) -> dict[str, MatchSpec]:
        return dict(self.iter_specs())

    def iter_specs(self) -> Iterator[tuple[str, MatchSpec]]:
        """Every stored spec, one at a time (a resume check need not hold them all)."""
        for r in self._conn.execute("SELECT id, pairing, players, spec FROM matches"):
            yield r["id"], spec_from_row(r)

    def counts(self) -> dict[str, int]:
        return {
            r["state"]: r["n"]
            for r in self._conn.execute("SELECT state, COUNT(*) AS n FROM matches GROUP BY state")
        }

    def stage_counts(self) -> dict[str, tuple[int, int]]:
        """Per stage: (matches done, live matches). A failed match is not done (``counts``)."""
        out: dict[str, tuple[int, int]] = {}
        for r in self._conn.execute(
            "SELECT stage, SUM(state = 'done') AS done, COUNT(*) AS total FROM matches "
            "WHERE state != 'obsolete' GROUP BY stage"
        ):
            out[r["stage"]] = (int(r["done"]), int(r["total"]))
        return out

    def pending(self) -> list[str]:
        return [
            r["id"] for r in self._conn.execute("SELECT id FROM matches WHERE state='pending' ORDER BY seq")
        ]

    def queued_count(self) -> int:
        """Matches sent and not started yet (no ``started`` note read for their attempt)."""
        return int(self._conn.execute("SELECT COUNT(*) FROM matches WHERE state='queued'").fetchone()[0])

    def has_in_flight(self) -> bool:
        """Whether any match is queued or running (``in_flight`` without reading them)."""
        row = self._conn.execute("SELECT 1 FROM matches WHERE state IN ('queued','running') LIMIT 1")
        return row.fetchone() is not None

    def official_games(self, match_id: str) -> list[GameRecord] | None:
        """``official_results()[match_id]`` alone (None where it has none), read without the rest."""
        r = self._conn.execute(
            "SELECT r.result FROM results r JOIN matches m ON m.id = r.match_id WHERE r.match_id=? "
            "AND r.status = 'official' AND m.state IN ('done', 'failed') ORDER BY r.id DESC LIMIT 1",
            (match_id,),
        ).fetchone()
        return None if r is None else decode(r["result"], MatchResult).games

    def in_flight_leases(self) -> list[InFlight]:
        """Queued and running matches, in plan order, read without decoding specs or results:
        the sweeper looks at them every few seconds, and a round can hold thousands."""
        return [
            InFlight(r["id"], r["state"], r["attempt"], r["worker"], r["lease_expires"], r["dispatched_at"])
            for r in self._conn.execute(
                "SELECT id, state, attempt, worker, lease_expires, dispatched_at FROM matches "
                "WHERE state IN ('queued','running') ORDER BY seq"
            )
        ]

    def flight(self, match_id: str) -> InFlight | None:
        """``match_id``'s current attempt if it is queued or running (None: it is not in flight)."""
        r = self._conn.execute(
            "SELECT id, state, attempt, worker, lease_expires, dispatched_at FROM matches "
            "WHERE id=? AND state IN ('queued','running')",
            (match_id,),
        ).fetchone()
        if r is None:
            return None
        return InFlight(
            r["id"], r["state"], r["attempt"], r["worker"], r["lease_expires"], r["dispatched_at"]
        )

    def in_flight(self) -> list[MatchRecord]:
        """Queued and running matches, in plan order (a handful: at most one per worker slot)."""
        return self.match_records(states=IN_FLIGHT)
