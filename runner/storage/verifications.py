"""Verification replays in the run store (``runner.domain.verification`` holds the values).

One table beside the store's own, created the first time a run verifies a match (older
stores and runs without ``timing.verify_sample`` read as having none)::

    verifications  match_id -> attempt (the accepted one replayed), played_by (whose result
                   is official), state, verifier, sent_at, started_at, finished_at, detail,
                   result (the replay's whole result JSON)

The replay's result is kept here and nowhere else: it is never a ``results`` row, so no
reader of official results, standings or ratings ever sees it (docs/fleet.md).
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Sequence

from runner.domain.match_values import MatchResult
from runner.domain.verification import OPEN_STATES, Verification
from runner.domain.wire import decode, encode
from runner.storage.store import RunStore

_SCHEMA = """
CREATE TABLE IF NOT EXISTS verifications (
    match_id TEXT PRIMARY KEY REFERENCES matches(id),
    attempt INTEGER NOT NULL,
    played_by TEXT NOT NULL,
    state TEXT NOT NULL,
    verifier TEXT NOT NULL DEFAULT '',
    sent_at REAL NOT NULL,
    started_at REAL,
    finished_at REAL,
    detail TEXT NOT NULL DEFAULT '',
    result TEXT
)
"""


def _has_table(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='verifications'").fetchone()
    return row is not None


def _row(r: sqlite3.Row) -> Verification:
    return Verification(
        match_id=r["match_id"],
        attempt=r["attempt"],
        played_by=r["played_by"],
        state=r["state"],
        verifier=r["verifier"],
        detail=r["detail"],
        sent_at=r["sent_at"],
    )


class Verifications:
    """The verification replays of one open run store."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._conn = store.connection

    # -- writing ------------------------------------------------------------------------
    def add(self, match_id: str, attempt: int, played_by: str) -> bool:
        """A replay of ``attempt`` is sent (False: this match has one already)."""
        with self.store.transaction() as c:
            if not _has_table(c):
                c.execute(_SCHEMA)
            done = c.execute(
                "INSERT OR IGNORE INTO verifications(match_id, attempt, played_by, state, sent_at) "
                "VALUES(?, ?, ?, 'sent', ?)",
                (match_id, attempt, played_by, time.time()),
            )
            if done.rowcount:
                self.store._log_in(c, "verify_sent", match_id, f"attempt {attempt} played by {played_by}")
            return bool(done.rowcount)

    def started(self, match_id: str, attempt: int, verifier: str) -> bool:
        with self.store.transaction() as c:
            done = c.execute(
                "UPDATE verifications SET state='running', verifier=?, started_at=? "
                "WHERE match_id=? AND attempt=? AND state IN ('sent', 'running')",
                (verifier, time.time(), match_id, attempt),
            )
            if done.rowcount:
                self.store._log_in(c, "verify_started", match_id, f"attempt {attempt} on {verifier}")
            return bool(done.rowcount)

    def finish(
        self,
        match_id: str,
        attempt: int,
        state: str,
        detail: str,
        *,
        verifier: str = "",
        result: MatchResult | None = None,
        event: str = "",
    ) -> bool:
        """Close an open verification (False: none was open for that attempt: late, duplicate)."""
        with self.store.transaction() as c:
            done = c.execute(
                "UPDATE verifications SET state=?, detail=?, finished_at=?, "
                "verifier=CASE WHEN ?='' THEN verifier ELSE ? END, result=? "
                "WHERE match_id=? AND attempt=? AND state IN ('sent', 'running')",
                (
                    state,
                    detail,
                    time.time(),
                    verifier,
                    verifier,
                    None if result is None else encode(result).decode(),
                    match_id,
                    attempt,
                ),
            )
            if done.rowcount:
                self.store._log_in(c, event or f"verify_{state}", match_id, detail)
            return bool(done.rowcount)

    # -- reading ------------------------------------------------------------------------
    def all(self, states: Sequence[str] = ()) -> list[Verification]:
        if not _has_table(self._conn):
            return []
        sql = "SELECT * FROM verifications"
        if states:
            sql += f" WHERE state IN ({','.join('?' * len(states))})"
        return [_row(r) for r in self._conn.execute(sql + " ORDER BY sent_at", tuple(states))]

    def open(self) -> list[Verification]:
        return self.all(OPEN_STATES)

    def by_match(self) -> dict[str, Verification]:
        return {v.match_id: v for v in self.all()}

    def result(self, match_id: str) -> MatchResult | None:
        """The replay's result, once it came."""
        if not _has_table(self._conn):
            return None
        row = self._conn.execute("SELECT result FROM verifications WHERE match_id=?", (match_id,)).fetchone()
        return None if row is None or row["result"] is None else decode(row["result"], MatchResult)

    def done_without(self) -> list[tuple[str, int, str]]:
        """(match, attempt, worker) of every played match with no verification yet (a resumed run
        sends the sampled ones the previous session accepted but did not get to send)."""
        sql = "SELECT id, attempt, worker FROM matches WHERE state='done'"
        if _has_table(self._conn):
            sql += " AND id NOT IN (SELECT match_id FROM verifications)"
        return [(r["id"], r["attempt"], r["worker"]) for r in self._conn.execute(sql + " ORDER BY seq")]


__all__ = ["Verifications"]
