"""Rerun candidates and acceptances in the run store (``runner.domain.disputes`` are the values).

Two tables beside the store's own (created the first time a run is disputed,
so older stores and runs without disputes read as an empty log)::

    candidates   (match_id, number) -> attempt, worker, played_at, played_by,
                 digests (entry -> digest played), changed_code, spec (the spec
                 as played: changed code's refs in it), result (the whole
                 result JSON, transcripts included), first_difference
    acceptances  one row per ``tourney accept``: match_id, candidate, attempt,
                 by, at, reason, replaced_attempt, code_choice, code_changes,
                 voided, planned

A candidate's result is also a ``results`` row (status ``candidate``, its
own attempt number), so every existing reader of the store sees it as before;
accepting flips exactly that row to ``official`` (the previous official row
becomes ``superseded``) after checking its bytes are the candidate's: what
becomes official is what was reviewed, never a new play.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Sequence
from typing import Any

from runner.domain.disputes import Acceptance, Candidate, CodeChoice, DisputeLog, KeptResult
from runner.domain.match_values import MatchResult, MatchSpec
from runner.domain.wire import decode
from runner.storage.rows import column_text, spec_from_row
from runner.storage.store import RunStore, StoreError

_SCHEMA = """
CREATE TABLE IF NOT EXISTS candidates (
    match_id TEXT NOT NULL REFERENCES matches(id),
    number INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    worker TEXT NOT NULL,
    played_at REAL NOT NULL,
    played_by TEXT NOT NULL,
    digests TEXT NOT NULL,
    changed_code TEXT NOT NULL,
    spec TEXT NOT NULL,
    result TEXT NOT NULL,
    first_difference TEXT NOT NULL,
    PRIMARY KEY (match_id, number)
);
CREATE TABLE IF NOT EXISTS acceptances (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    match_id TEXT NOT NULL REFERENCES matches(id),
    candidate INTEGER NOT NULL,
    attempt INTEGER NOT NULL,
    by TEXT NOT NULL,
    at REAL NOT NULL,
    reason TEXT NOT NULL,
    replaced_attempt INTEGER,
    code_choice TEXT NOT NULL DEFAULT '',
    code_changes TEXT NOT NULL DEFAULT '{}',
    voided TEXT NOT NULL DEFAULT '[]',
    planned TEXT NOT NULL DEFAULT '[]'
);
"""


class CandidateRefused(StoreError):
    """The candidate asked for cannot be accepted (unknown, already official, altered)."""


def _has_tables(conn: sqlite3.Connection) -> bool:
    row = conn.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='candidates'").fetchone()
    return row is not None


def _ensure(conn: sqlite3.Connection) -> None:
    """Create the tables inside the caller's transaction (``executescript`` would commit it)."""
    if not _has_tables(conn):
        for statement in _SCHEMA.split(";"):
            if statement.strip():
                conn.execute(statement)


def _pairs(text: str) -> dict[str, tuple[str, str]]:
    return {k: (str(v[0]), str(v[1])) for k, v in json.loads(text).items()}


def _candidate(r: sqlite3.Row) -> Candidate:
    return Candidate(
        match_id=r["match_id"],
        number=r["number"],
        attempt=r["attempt"],
        worker=r["worker"],
        played_at=r["played_at"],
        played_by=r["played_by"],
        digests=dict(json.loads(r["digests"])),
        changed_code=_pairs(r["changed_code"]),
        result=decode(r["result"], MatchResult),
        first_difference=r["first_difference"],
    )


def _acceptance(r: sqlite3.Row) -> Acceptance:
    choice: CodeChoice = r["code_choice"] if r["code_choice"] in ("adopt", "keep") else ""
    return Acceptance(
        match_id=r["match_id"],
        candidate=r["candidate"],
        attempt=r["attempt"],
        by=r["by"],
        at=r["at"],
        reason=r["reason"],
        replaced_attempt=r["replaced_attempt"],
        code_choice=choice,
        code_changes=_pairs(r["code_changes"]),
        voided=tuple(json.loads(r["voided"])),
        planned=tuple(json.loads(r["planned"])),
        id=r["id"],
    )


class Disputes:
    """The disputes of one open run store."""

    def __init__(self, store: RunStore) -> None:
        self.store = store
        self._conn = store.connection

    # -- writing ---------------------------------------------------------------------
    def add_candidate(
        self,
        spec_played: MatchSpec,
        result: MatchResult,
        *,
        played_by: str,
        changed_code: dict[str, tuple[str, str]],
        first_difference: str,
    ) -> Candidate:
        """Keep a rerun's result as the match's next numbered candidate (one transaction: the
        match's next attempt number, the ``results`` row, the candidate row)."""
        match_id = spec_played.match_id
        now = time.time()
        blob = column_text(result)
        digests = {n: ref.digest for n, ref in spec_played.entries.items()}
        with self.store.transaction() as c:
            _ensure(c)
            r = c.execute("SELECT attempt FROM matches WHERE id=?", (match_id,)).fetchone()
            if r is None:
                raise StoreError(f"no match {match_id!r}")
            attempt = int(r["attempt"]) + 1
            number = (
                int(
                    c.execute(
                        "SELECT COALESCE(MAX(number), 0) FROM candidates WHERE match_id=?", (match_id,)
                    ).fetchone()[0]
                )
                + 1
            )
            c.execute("UPDATE matches SET attempt=?, updated_at=? WHERE id=?", (attempt, now, match_id))
            c.execute(
                "INSERT INTO results(match_id, attempt, status, worker, result, received_at) "
                "VALUES(?, ?, 'candidate', ?, ?, ?)",
                (match_id, attempt, result.worker, blob, now),
            )
            c.execute(
                "INSERT INTO candidates(match_id, number, attempt, worker, played_at, played_by, digests, "
                "changed_code, spec, result, first_difference) VALUES(?,?,?,?,?,?,?,?,?,?,?)",
                (
                    match_id,
                    number,
                    attempt,
                    result.worker,
                    now,
                    played_by,
                    json.dumps(digests, sort_keys=True),
                    json.dumps({k: list(v) for k, v in changed_code.items()}, sort_keys=True),
                    column_text(spec_played),
                    blob,
                    first_difference,
                ),
            )
            c.execute(
                "INSERT INTO events(ts, kind, match_id, detail) VALUES(?, 'rerun', ?, ?)",
                (now, match_id, f"candidate {number} (attempt {attempt}) kept; by {played_by}"),
            )
        found = self.candidate(match_id, number)
        assert found is not None
        return found

    def accept(
        self,
        match_id: str,
        number: int,
        *,
        by: str,
        reason: str,
        code_choice: CodeChoice,
        code_changes: dict[str, tuple[str, str]],
    ) -> Acceptance:
        """Make candidate ``number`` official, byte for byte as stored, and record who, when,
        why and which result it replaced. Plays nothing."""
        now = time.time()
        with self.store.transaction() as c:
            _ensure(c)
            cand = c.execute(
                "SELECT * FROM candidates WHERE match_id=? AND number=?", (match_id, number)
            ).fetchone()
            if cand is None:
                raise CandidateRefused(f"match {match_id} has no candidate {number}")
            row = c.execute(
                "SELECT id, status, result FROM results WHERE match_id=? AND attempt=? "
                "AND status IN ('candidate', 'superseded', 'official')",
                (match_id, cand["attempt"]),
            ).fetchone()
            if row is None or row["result"] != cand["result"]:
                raise CandidateRefused(
                    f"match {match_id}: the stored result of candidate {number} is missing or altered"
                )
            if row["status"] == "official":
                raise CandidateRefused(f"match {match_id}: candidate {number} is already the official result")
            old = c.execute(
                "SELECT attempt FROM results WHERE match_id=? AND status='official' ORDER BY id DESC",
                (match_id,),
            ).fetchone()
            c.execute(
                "UPDATE results SET status='superseded' WHERE match_id=? AND status='official'", (match_id,)
            )
            c.execute("UPDATE results SET status='official', accepted_at=? WHERE id=?", (now, row["id"]))
            c.execute(
                "UPDATE matches SET state=CASE WHEN state='obsolete' THEN 'obsolete' ELSE 'done' END, "
                "worker=?, finished_at=?, updated_at=? WHERE id=?",
                (cand["worker"], now, now, match_id),
            )
            cur = c.execute(
                "INSERT INTO acceptances(match_id, candidate, attempt, by, at, reason, replaced_attempt, "
                "code_choice, code_changes) VALUES(?,?,?,?,?,?,?,?,?)",
                (
                    match_id,
                    number,
                    cand["attempt"],
                    by,
                    now,
                    reason,
                    old["attempt"] if old else None,
                    code_choice,
                    json.dumps({k: list(v) for k, v in code_changes.items()}, sort_keys=True),
                ),
            )
            replaced = f"attempt {old['attempt']}" if old else "no result"
            c.execute(
                "INSERT INTO events(ts, kind, match_id, detail) VALUES(?, 'rerun_accepted', ?, ?)",
                (
                    now,
                    match_id,
                    f"candidate {number} (attempt {cand['attempt']}) made official by {by}, replacing "
                    f"{replaced}: {reason}" + (f"; code: {code_choice}" if code_choice else ""),
                ),
            )
            acceptance_id = cur.lastrowid
        found = self._acceptance_by_id(int(acceptance_id or 0))
        assert found is not None
        return found

    def record_replan(self, acceptance: Acceptance, voided: Sequence[str], planned: Sequence[str]) -> None:
        """What the replan after ``acceptance`` changed (kept with it, for ``tourney disputes``)."""
        with self.store.transaction() as c:
            c.execute(
                "UPDATE acceptances SET voided=?, planned=? WHERE id=?",
                (json.dumps(list(voided)), json.dumps(list(planned)), acceptance.id),
            )

    def respec_unplayed(self, specs: Sequence[MatchSpec]) -> list[str]:
        """Store the given specs for matches not played yet (``pending``) whose stored spec differs
        (after adopted code: later matches play the new code). Returns the ids changed."""
        changed = []
        now = time.time()
        with self.store.transaction() as c:
            for spec in specs:
                r = c.execute(
                    "SELECT state, spec, pairing, players FROM matches WHERE id=?", (spec.match_id,)
                ).fetchone()
                if r is None or r["state"] != "pending":
                    continue
                if spec_from_row(r) != spec:
                    c.execute(
                        "UPDATE matches SET spec=?, updated_at=? WHERE id=?",
                        (column_text(spec), now, spec.match_id),
                    )
                    changed.append(spec.match_id)
        return changed

    # -- reading ---------------------------------------------------------------------
    def candidates(self, match_id: str | None = None) -> list[Candidate]:
        if not _has_tables(self._conn):
            return []
        q, args = "SELECT * FROM candidates", ()
        if match_id is not None:
            q, args = q + " WHERE match_id=?", (match_id,)  # type: ignore[assignment]
        return [_candidate(r) for r in self._conn.execute(q + " ORDER BY played_at, number", args)]

    def candidate(self, match_id: str, number: int) -> Candidate | None:
        return next((c for c in self.candidates(match_id) if c.number == number), None)

    def acceptances(self, match_id: str | None = None) -> list[Acceptance]:
        if not _has_tables(self._conn):
            return []
        q, args = "SELECT * FROM acceptances", ()
        if match_id is not None:
            q, args = q + " WHERE match_id=?", (match_id,)  # type: ignore[assignment]
        return [_acceptance(r) for r in self._conn.execute(q + " ORDER BY id", args)]

    def _acceptance_by_id(self, acceptance_id: int) -> Acceptance | None:
        r = self._conn.execute("SELECT * FROM acceptances WHERE id=?", (acceptance_id,)).fetchone()
        return _acceptance(r) if r else None

    def kept_results(self, match_ids: Sequence[str] | None = None) -> dict[str, tuple[KeptResult, ...]]:
        """Official and superseded result rows (what a match's history is made of); only for
        matches that were disputed, or ``match_ids``."""
        if match_ids is None:
            match_ids = sorted({c.match_id for c in self.candidates()})
        out: dict[str, list[KeptResult]] = {}
        for mid in match_ids:
            for r in self._conn.execute(
                "SELECT * FROM results WHERE match_id=? AND status IN ('official', 'superseded') ORDER BY id",
                (mid,),
            ):
                out.setdefault(mid, []).append(
                    KeptResult(
                        match_id=mid,
                        attempt=r["attempt"],
                        status=r["status"],
                        worker=r["worker"],
                        received_at=r["received_at"],
                        accepted_at=r["accepted_at"],
                        result=decode(r["result"], MatchResult),
                    )
                )
        return {k: tuple(v) for k, v in out.items()}

    def log(self) -> DisputeLog:
        return DisputeLog(tuple(self.candidates()), tuple(self.acceptances()), self.kept_results())

    def voided_fates(self, match_ids: Sequence[str]) -> dict[str, str]:
        """What became of matches an acceptance voided, now: ``voided`` (still not planned),
        ``kept`` (planned again with the spec and code it was played with: the same match, its
        result stands), ``replayed`` (planned again with code adopted since: its result was
        superseded and it is played again) or ``planned again`` (voided before it was played)."""
        wanted = set(match_ids)
        states = {mid: self.store.match_record(mid) for mid in wanted}
        last: dict[str, str] = {}
        for e in self.store.events("revived"):
            if e.match_id in wanted:
                last[e.match_id] = e.detail
        out: dict[str, str] = {}
        for mid in match_ids:
            row = states[mid]
            if row is None or row.state == "obsolete":
                out[mid] = "voided"
            else:
                out[mid] = last.get(mid, "planned again").split(":")[0]
        return out


def dispute_log(store: RunStore) -> DisputeLog:
    return Disputes(store).log()


def code_meta(meta: dict[str, Any], changes: dict[str, str]) -> dict[str, Any]:
    """The store meta's recorded digests (``entries``, ``seed_opponents``) with ``changes`` applied."""
    out: dict[str, Any] = {}
    for key in ("entries", "seed_opponents"):
        recorded = dict(meta.get(key) or {})
        for name in recorded:
            if name in changes:
                recorded[name] = changes[name]
        out[key] = recorded
    return out


__all__ = ["CandidateRefused", "Disputes", "code_meta", "dispute_log"]
