"""The run store: one SQLite file per run, the single source of truth (DESIGN §6).

Redis only delivers work; everything a run knows lives here, so the
coordinator can be killed at any moment and resumed from this file alone.
SQLite runs in WAL mode: the coordinator is the only writer, while report
commands read concurrently.

Tables::

    meta     key -> JSON value (name, config_path, config_digest, run_id, created, finished, ...)
    matches  one row per planned match: the MatchSpec (JSON; it holds the whole
             MatchPlan), a few plan fields as columns for queries (written from the
             plan, read back only for specs stored before the plan travelled in
             them), and its life: state, attempt, failures, lease_expires, worker, times
    results  every result ever received that mattered: (match_id, attempt,
             status official|superseded|candidate|rejected, result JSON)
    boards   board_id -> board text
    events   an append-only log: dispatches, starts, accepted and ignored
             results, requeues, failures, reruns
    candidates, acceptances
             rerun candidates and who accepted which (``runner.storage.disputes``,
             which ``tourney rerun`` and ``tourney accept`` use; created on first use)

Match states: ``pending`` (planned, no attempt out) -> ``queued`` (attempt
handed to the dispatcher) -> ``running`` (a worker said it started it; a lease
runs) -> ``done`` (an official result). ``failed``: the attempt cap was hit;
the match holds a synthesised ``system_error`` result, so the failure is shown
(events, standings, report) rather than hidden. Stages count a ``system_error``
game as not played, so a stage that needs a failed match cannot finish; the
coordinator stops once nothing else can be played, and retries failed matches
when it is run again (``retry_failed``).
``obsolete``: the planner no longer wants the match (an accepted rerun changed
history); its results are kept but not official for the tournament.

A result is accepted only for the current attempt of a match in flight::

    UPDATE matches SET state='done' ... WHERE id=? AND attempt=? AND state IN ('queued','running')

``queued`` counts as in flight because a worker's "started" note and its result
travel separately: a result may overtake a lost "started". Anything else (a
duplicate, a late result of an older attempt, a result for an obsolete match)
changes nothing and is logged as an ``ignored_result`` event.

A result whose game carries a ``system_error`` verdict (the runner's own fault,
DESIGN §4.3) is not accepted: it is stored as ``rejected``, and the match goes
back to ``pending`` for another attempt, elsewhere if possible. Lost leases
count the same way, and so does a second execution of one attempt (the broker
handed it out again because its worker died: ``task_reject_on_worker_lost``);
after ``attempt_cap`` such failures the match is ``failed``. A coordinator
restart re-dispatches what was in flight without counting a failure.

READ API (used by ``runner.report``; kept stable):

* ``RunStore.open(run_dir) -> RunStore``: an existing run; ``StoreError`` otherwise.
* ``store.meta() -> dict[str, Any]``
* ``store.official_results() -> dict[match_id, list[GameRecord]]``: the current
  official result per live (not obsolete) match, failed matches included.
* ``store.match_records() -> list[MatchRecord]`` in plan order (``runner.domain.match_record``:
  the plan, the spec, the match's life and every kept result; ``match_rows`` is the old name).
* ``store.match_record(match_id) -> MatchRecord | None``
* ``store.events() -> list[Event]``
* ``store.board_texts() -> dict[board_id, text]``
* ``runner.storage.run_dir.load_run_config(run_dir) -> TournamentConfig`` (the frozen config).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from runner.domain.contracts import GameRecord, MatchPlan, MatchResult, MatchSpec, system_error_result
from runner.domain.match_record import MatchRecord
from runner.errors import RunHalted

STORE_FILE = "tournament.sqlite"
SCHEMA_VERSION = 1
#: failures (lost leases, system_error results) after which a match is given up
DEFAULT_ATTEMPT_CAP = 3

MatchState = Literal["pending", "queued", "running", "done", "failed", "obsolete"]
IN_FLIGHT = ("queued", "running")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    stage TEXT NOT NULL,
    round INTEGER NOT NULL,
    bracket TEXT NOT NULL,
    pairing INTEGER NOT NULL,
    players TEXT NOT NULL,
    board_id TEXT NOT NULL,
    orders TEXT NOT NULL,
    spec TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    attempt INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    lease_expires REAL,
    worker TEXT NOT NULL DEFAULT '',
    execution TEXT NOT NULL DEFAULT '',
    dispatched_at REAL,
    started_at REAL,
    finished_at REAL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS matches_state ON matches(state);
CREATE INDEX IF NOT EXISTS matches_seq ON matches(seq);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    match_id TEXT NOT NULL REFERENCES matches(id),
    attempt INTEGER NOT NULL,
    status TEXT NOT NULL,
    worker TEXT NOT NULL DEFAULT '',
    result TEXT NOT NULL,
    received_at REAL NOT NULL,
    accepted_at REAL
);
CREATE INDEX IF NOT EXISTS results_match ON results(match_id);
CREATE TABLE IF NOT EXISTS boards (id TEXT PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    kind TEXT NOT NULL,
    match_id TEXT,
    detail TEXT NOT NULL DEFAULT ''
);
"""


class StoreError(RunHalted, RuntimeError):
    """The run store cannot be opened or used (not a run directory, newer schema, ...)."""


@dataclass(frozen=True)
class Event:
    ts: float
    kind: str
    match_id: str | None
    detail: str


@dataclass(frozen=True)
class Accepted:
    """What became of a received result."""

    status: Literal["accepted", "retry", "failed", "ignored", "redelivered"]
    detail: str = ""


@dataclass(frozen=True)
class InFlight:
    """A queued or running match's life, without its spec and results (``in_flight_leases``)."""

    match_id: str
    state: str
    attempt: int
    worker: str
    lease_expires: float | None
    dispatched_at: float | None


@dataclass(frozen=True)
class PlanSync:
    """What ``sync_plan`` changed."""

    new: list[str]
    obsolete: list[str]
    revived: list[str]  # obsolete matches planned again (kept or replayed)
    #: revived matches whose official result was played from another spec (code adopted since):
    #: that result is superseded and the match is pending again, with the spec planned now
    replayed: list[str] = field(default_factory=list)

    @property
    def kept(self) -> list[str]:
        """Revived matches planned exactly as they were played: the same match, its result stands."""
        return [m for m in self.revived if m not in set(self.replayed)]


def failed_result(spec: MatchSpec, detail: str) -> MatchResult:
    """The result a match gets when the attempt cap gives it up."""
    return system_error_result(spec, detail, worker="coordinator", reason="match failed")


class RunStore:
    """A run's SQLite store. ``create`` a new one or ``open`` an existing one."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn

    # -- opening -----------------------------------------------------------
    @classmethod
    def create(cls, run_dir: Path, meta: dict[str, Any]) -> RunStore:
        run_dir.mkdir(parents=True, exist_ok=True)
        path = run_dir / STORE_FILE
        if path.exists():
            raise StoreError(f"{path} already exists")
        store = cls(path, cls._connect(path))
        store._conn.executescript(_SCHEMA)
        store.set_meta(schema_version=SCHEMA_VERSION, **meta)
        return store

    @classmethod
    def open(cls, run_dir: Path) -> RunStore:
        path = Path(run_dir) / STORE_FILE
        if not path.is_file():
            raise StoreError(
                f"{run_dir}: not a run directory (no {STORE_FILE}); start one with `tourney run`"
            )
        try:
            store = cls(path, cls._connect(path))
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{path}: not a tourney run store ({e})") from e
        try:
            version = store.meta().get("schema_version")
        except sqlite3.DatabaseError as e:
            store.close()
            raise StoreError(f"{path}: not a tourney run store ({e})") from e
        if version != SCHEMA_VERSION:
            store.close()
            raise StoreError(f"{path}: store schema {version!r}, this tourney reads {SCHEMA_VERSION}")
        return store

    @staticmethod
    def _connect(path: Path) -> sqlite3.Connection:
        # autocommit mode; writes group themselves with _tx()
        conn = sqlite3.connect(str(path), isolation_level=None, timeout=30.0, check_same_thread=False)
        conn.row_factory = sqlite3.Row
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
        return conn

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @property
    def connection(self) -> sqlite3.Connection:
        """For the store's sibling modules (``runner.storage.disputes``) that own tables of their own."""
        return self._conn

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error), for the sibling modules."""
        return self._tx()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    # -- meta, boards, events ----------------------------------------------
    def meta(self) -> dict[str, Any]:
        return {r["key"]: json.loads(r["value"]) for r in self._conn.execute("SELECT key, value FROM meta")}

    def set_meta(self, **values: Any) -> None:
        with self._tx() as c:
            c.executemany(
                "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET "
                "value=excluded.value",
                [(k, json.dumps(v, sort_keys=True)) for k, v in values.items()],
            )

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

    def log(self, kind: str, match_id: str | None = None, detail: str = "") -> None:
        self._conn.execute(
            "INSERT INTO events(ts, kind, match_id, detail) VALUES(?, ?, ?, ?)",
            (time.time(), kind, match_id, detail),
        )

    @staticmethod
    def _log_in(c: sqlite3.Connection, kind: str, match_id: str | None, detail: str) -> None:
        c.execute(
            "INSERT INTO events(ts, kind, match_id, detail) VALUES(?, ?, ?, ?)",
            (time.time(), kind, match_id, detail),
        )

    # -- reading -------------------------------------------------------------
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
            yield r["match_id"], MatchResult.from_dict(json.loads(r["result"])).games

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
        return [self._record(m, results.get(m["id"], [])) for m in matches]

    def match_record(self, match_id: str) -> MatchRecord | None:
        m = self._conn.execute("SELECT * FROM matches WHERE id=?", (match_id,)).fetchone()
        if m is None:
            return None
        rs = self._conn.execute(
            "SELECT match_id, status, result FROM results WHERE match_id=? ORDER BY id", (match_id,)
        ).fetchall()
        return self._record(m, rs)

    # the names the report and tests used before ``MatchRecord``
    def match_rows(self) -> list[MatchRecord]:
        return self.match_records()

    def match_row(self, match_id: str) -> MatchRecord | None:
        return self.match_record(match_id)

    @staticmethod
    def _parse_spec(m: sqlite3.Row) -> MatchSpec:
        """The one place a stored spec is read back. Specs stored before the plan's
        ``pairing`` and ``players`` travelled inside them take those from their columns."""
        d = json.loads(m["spec"])
        d.setdefault("pairing", m["pairing"])
        d.setdefault("players", json.loads(m["players"]))
        return MatchSpec.from_dict(d)

    @classmethod
    def _record(cls, m: sqlite3.Row, results: Sequence[sqlite3.Row]) -> MatchRecord:
        by_status: dict[str, list[MatchResult]] = {}
        for r in results:
            by_status.setdefault(r["status"], []).append(MatchResult.from_dict(json.loads(r["result"])))
        official = by_status.get("official", [])
        spec = cls._parse_spec(m)
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

    def spec(self, match_id: str) -> MatchSpec:
        r = self._conn.execute("SELECT * FROM matches WHERE id=?", (match_id,)).fetchone()
        if r is None:
            raise StoreError(f"no match {match_id!r} in {self.path}")
        return self._parse_spec(r)

    def specs(self) -> dict[str, MatchSpec]:
        return dict(self.iter_specs())

    def iter_specs(self) -> Iterator[tuple[str, MatchSpec]]:
        """Every stored spec, one at a time (a resume check need not hold them all)."""
        for r in self._conn.execute("SELECT id, pairing, players, spec FROM matches"):
            yield r["id"], self._parse_spec(r)

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
        return None if r is None else MatchResult.from_dict(json.loads(r["result"])).games

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

    def in_flight(self) -> list[MatchRecord]:
        """Queued and running matches, in plan order (a handful: at most one per worker slot)."""
        return self.match_records(states=IN_FLIGHT)

    # -- planning ------------------------------------------------------------
    def sync_plan(self, planned: Sequence[MatchSpec]) -> PlanSync:
        """Make the live matches exactly ``planned`` (specs, in plan order).

        New ids are inserted as ``pending``; live ids no longer planned become
        ``obsolete``; obsolete ids planned again come back (``done`` when they
        still hold an official result: same id, same players, board and seats).
        """
        by_id = {spec.match_id: spec for spec in planned}
        return self.sync_plans([spec.plan for spec in planned], lambda plan: by_id[plan.match_id])

    def sync_plans(
        self, planned: Sequence[MatchPlan], spec_for: Callable[[MatchPlan], MatchSpec]
    ) -> PlanSync:
        """``sync_plan`` for plans, asking ``spec_for`` only for the ones it inserts: a plan of
        half a million played matches builds no spec for them (issue 13, item 3)."""
        now = time.time()
        wanted = {plan.match_id for plan in planned}
        new: list[str] = []
        revived: list[str] = []
        replayed: list[str] = []
        obsolete: list[str] = []
        with self._tx() as c:
            existing = {r["id"]: r["state"] for r in c.execute("SELECT id, state FROM matches")}
            seq = int(c.execute("SELECT COALESCE(MAX(seq), 0) FROM matches").fetchone()[0])
            for plan in planned:
                state = existing.get(plan.match_id)
                if state is None:
                    seq += 1
                    self._insert_pending(c, spec_for(plan), seq, now)
                    new.append(plan.match_id)
                elif state == "obsolete":
                    revived.append(plan.match_id)
                    if self._revive(c, spec_for(plan), now):
                        replayed.append(plan.match_id)
            for mid, state in existing.items():
                if mid not in wanted and state != "obsolete":
                    c.execute(
                        "UPDATE matches SET state='obsolete', lease_expires=NULL, updated_at=? WHERE id=?",
                        (now, mid),
                    )
                    self._log_in(c, "obsolete", mid, f"no longer planned (was {state})")
                    obsolete.append(mid)
        return PlanSync(new, obsolete, revived, replayed)

    def _revive(self, c: sqlite3.Connection, spec: MatchSpec, now: float) -> bool:
        """An obsolete match planned again. Its id names its stage, round, pairing, players, board
        and seats, not its code: with the spec it was played from (same code) it is the same match
        and keeps its official result; after ``tourney accept --adopt-code`` changed an entry's code
        it is not, so that result is superseded and it is played again (docs/config.md, "Readings
        of the seeds", seed 000). Returns whether it is to be replayed."""
        mid = spec.match_id
        row = c.execute("SELECT spec FROM matches WHERE id=?", (mid,)).fetchone()
        has = c.execute("SELECT 1 FROM results WHERE match_id=? AND status='official'", (mid,)).fetchone()
        same = row is not None and json.loads(row["spec"]) == json.loads(json.dumps(spec.to_dict()))
        if has and same:
            c.execute("UPDATE matches SET state='done', updated_at=? WHERE id=?", (now, mid))
            self._log_in(c, "revived", mid, "kept: planned again with the spec and code it was played with")
            return False
        if has:
            c.execute("UPDATE results SET status='superseded' WHERE match_id=? AND status='official'", (mid,))
        c.execute(
            "UPDATE matches SET state='pending', spec=?, lease_expires=NULL, updated_at=? WHERE id=?",
            (json.dumps(spec.to_dict(), sort_keys=True), now, mid),
        )
        if has:
            self._log_in(c, "revived", mid, "replayed: planned again with other code than it was played with")
        else:
            self._log_in(c, "revived", mid, "planned again")
        return bool(has)

    def add_planned(self, planned: Sequence[MatchSpec]) -> list[str]:
        """Append matches a lazy plan added (``runner.domain.stages.round_robin``) as ``pending``,
        in order, without reading the rest of the plan: O(1) per match, unlike ``sync_plan``.
        Ids already stored are left as they are; the inserted ids are returned."""
        if not planned:
            return []
        now = time.time()
        new: list[str] = []
        with self._tx() as c:
            # read in the transaction, not kept: another process (``tourney accept``) may have
            # added matches; the ``matches_seq`` index makes it a lookup, not a scan
            seq = int(c.execute("SELECT COALESCE(MAX(seq), 0) FROM matches").fetchone()[0])
            for spec in planned:
                if c.execute("SELECT 1 FROM matches WHERE id=?", (spec.match_id,)).fetchone() is not None:
                    continue
                seq += 1
                self._insert_pending(c, spec, seq, now)
                new.append(spec.match_id)
        return new

    @staticmethod
    def _insert_pending(c: sqlite3.Connection, spec: MatchSpec, seq: int, now: float) -> None:
        plan = spec.plan
        c.execute(
            "INSERT INTO matches(id, seq, stage, round, bracket, pairing, players, board_id, orders, "
            "spec, state, updated_at) VALUES(?,?,?,?,?,?,?,?,?,?, 'pending', ?)",
            (
                spec.match_id,
                seq,
                plan.stage,
                plan.round,
                plan.bracket,
                plan.pairing,
                json.dumps(list(plan.players)),
                plan.board_id,
                json.dumps(spec.orders),
                json.dumps(spec.to_dict(), sort_keys=True),
                now,
            ),
        )
        c.execute("INSERT OR IGNORE INTO boards(id, text) VALUES(?, ?)", (spec.board_id, spec.board_text))

    # -- dispatching -----------------------------------------------------------
    def dispatch(self, match_id: str) -> tuple[MatchSpec, int]:
        """Hand out the next attempt of a pending match: pending -> queued."""
        now = time.time()
        with self._tx() as c:
            r = c.execute("SELECT * FROM matches WHERE id=?", (match_id,)).fetchone()
            if r is None or r["state"] != "pending":
                raise StoreError(f"match {match_id} is not pending")
            attempt = int(r["attempt"]) + 1
            c.execute(
                "UPDATE matches SET state='queued', attempt=?, worker='', lease_expires=NULL, "
                "dispatched_at=?, "
                "started_at=NULL, updated_at=? WHERE id=?",
                (attempt, now, now, match_id),
            )
            self._log_in(c, "dispatched", match_id, f"attempt {attempt}")
        return self._parse_spec(r), attempt

    def mark_started(
        self,
        match_id: str,
        attempt: int,
        worker: str,
        lease_expires: float,
        *,
        execution: str = "",
        attempt_cap: int = DEFAULT_ATTEMPT_CAP,
    ) -> Accepted:
        """A worker began ``attempt`` (``execution`` names that try, unique per task execution).

        A second execution of the same attempt means the broker handed the task out again
        because whoever had it died (``task_reject_on_worker_lost``): that counts as a failure,
        so a match that keeps killing its workers reaches the attempt cap instead of looping.
        """
        now = time.time()
        with self._tx() as c:
            r = c.execute(
                "SELECT state, failures, execution FROM matches WHERE id=? AND attempt=? "
                "AND state IN ('queued','running')",
                (match_id, attempt),
            ).fetchone()
            if r is None:
                return Accepted("ignored", "not in flight")
            if r["state"] == "running" and execution and r["execution"] and execution != r["execution"]:
                failures = int(r["failures"]) + 1
                reason = f"attempt {attempt} handed out again (its previous worker died); now on {worker}"
                if failures >= attempt_cap:
                    return self._fail_attempt(c, match_id, attempt, failures, reason, attempt_cap)
                c.execute(
                    "UPDATE matches SET failures=?, worker=?, execution=?, lease_expires=?, updated_at=? "
                    "WHERE id=?",
                    (failures, worker, execution, lease_expires, now, match_id),
                )
                self._log_in(c, "redelivered", match_id, f"{reason} ({failures}/{attempt_cap})")
                return Accepted("redelivered", reason)
            if r["state"] == "running" and execution == r["execution"]:
                return Accepted("ignored", "duplicate start note")
            c.execute(
                "UPDATE matches SET state='running', worker=?, execution=?, lease_expires=?, "
                "started_at=COALESCE(started_at, ?), updated_at=? WHERE id=?",
                (worker, execution, lease_expires, now, now, match_id),
            )
            self._log_in(c, "started", match_id, f"attempt {attempt} on {worker}")
            return Accepted("accepted")

    def extend_lease(self, match_id: str, attempt: int, lease_expires: float) -> None:
        self._conn.execute(
            "UPDATE matches SET lease_expires=? WHERE id=? AND attempt=? AND state='running'",
            (lease_expires, match_id, attempt),
        )

    def accept(self, match_id: str, attempt: int, result: MatchResult, *, attempt_cap: int) -> Accepted:
        """Record a result received for ``attempt`` (idempotent; see the module doc)."""
        now = time.time()
        blob = json.dumps(result.to_dict(), sort_keys=True)
        err = result.system_error
        with self._tx() as c:
            if err is None:
                cur = c.execute(
                    "UPDATE matches SET state='done', worker=?, lease_expires=NULL, finished_at=?, "
                    "updated_at=? "
                    "WHERE id=? AND attempt=? AND state IN ('queued','running')",
                    (result.worker, now, now, match_id, attempt),
                )
                if cur.rowcount:
                    c.execute(
                        "INSERT INTO results(match_id, attempt, status, worker, result, received_at, "
                        "accepted_at) "
                        "VALUES(?, ?, 'official', ?, ?, ?, ?)",
                        (match_id, attempt, result.worker, blob, now, now),
                    )
                    self._log_in(c, "result", match_id, f"attempt {attempt} from {result.worker or '?'}")
                    return Accepted("accepted")
            else:
                r = c.execute(
                    "SELECT failures FROM matches WHERE id=? AND attempt=? AND state IN ('queued','running')",
                    (match_id, attempt),
                ).fetchone()
                if r is not None:
                    c.execute(
                        "INSERT INTO results(match_id, attempt, status, worker, result, received_at) "
                        "VALUES(?, ?, 'rejected', ?, ?, ?)",
                        (match_id, attempt, result.worker, blob, now),
                    )
                    reason = f"system_error on {result.worker or '?'}: {err.detail}"
                    return self._fail_attempt(
                        c, match_id, attempt, int(r["failures"]) + 1, reason, attempt_cap
                    )
            reason = self._why_ignored(c, match_id, attempt)
            self._log_in(
                c, "ignored_result", match_id, f"attempt {attempt} from {result.worker or '?'}: {reason}"
            )
            return Accepted("ignored", reason)

    @staticmethod
    def _why_ignored(c: sqlite3.Connection, match_id: str, attempt: int) -> str:
        r = c.execute("SELECT state, attempt FROM matches WHERE id=?", (match_id,)).fetchone()
        if r is None:
            return "unknown match"
        if attempt < r["attempt"]:
            return f"late: attempt {r['attempt']} is current"
        if attempt > r["attempt"]:
            return f"attempt {attempt} was never dispatched (current {r['attempt']})"
        if r["state"] in ("done", "failed"):
            return f"duplicate: match already {r['state']}"
        return f"match is {r['state']}"

    def _fail_attempt(
        self, c: sqlite3.Connection, match_id: str, attempt: int, failures: int, reason: str, attempt_cap: int
    ) -> Accepted:
        now = time.time()
        if failures >= attempt_cap:
            spec = self._parse_spec(c.execute("SELECT * FROM matches WHERE id=?", (match_id,)).fetchone())
            detail = f"gave up after {failures} failed attempts; last: {reason}"
            c.execute(
                "UPDATE matches SET state='failed', failures=?, lease_expires=NULL, finished_at=?, "
                "updated_at=? "
                "WHERE id=?",
                (failures, now, now, match_id),
            )
            c.execute(
                "INSERT INTO results(match_id, attempt, status, worker, result, received_at, accepted_at) "
                "VALUES(?, ?, 'official', 'coordinator', ?, ?, ?)",
                (
                    match_id,
                    attempt,
                    json.dumps(failed_result(spec, detail).to_dict(), sort_keys=True),
                    now,
                    now,
                ),
            )
            self._log_in(c, "failed", match_id, detail)
            return Accepted("failed", detail)
        c.execute(
            "UPDATE matches SET state='pending', failures=?, lease_expires=NULL, worker='', "
            "updated_at=? WHERE id=?",
            (failures, now, match_id),
        )
        self._log_in(c, "retry", match_id, f"attempt {attempt} failed ({failures}/{attempt_cap}): {reason}")
        return Accepted("retry", reason)

    def lease_lost(self, match_id: str, attempt: int, reason: str, *, attempt_cap: int) -> Accepted:
        """The sweeper's verdict on an attempt nobody is working on any more."""
        with self._tx() as c:
            r = c.execute(
                "SELECT failures FROM matches WHERE id=? AND attempt=? AND state IN ('queued','running')",
                (match_id, attempt),
            ).fetchone()
            if r is None:
                return Accepted("ignored", "not in flight")
            return self._fail_attempt(c, match_id, attempt, int(r["failures"]) + 1, reason, attempt_cap)

    def requeue_in_flight(self, reason: str) -> list[str]:
        """Resume: whatever was in flight goes back to pending (not counted as a failure)."""
        now = time.time()
        with self._tx() as c:
            ids = [r["id"] for r in c.execute("SELECT id FROM matches WHERE state IN ('queued','running')")]
            for mid in ids:
                c.execute(
                    "UPDATE matches SET state='pending', lease_expires=NULL, worker='', updated_at=? "
                    "WHERE id=?",
                    (now, mid),
                )
                self._log_in(c, "requeued", mid, reason)
        return ids

    def requeue(self, match_id: str, attempt: int, reason: str) -> bool:
        """Put the current in-flight attempt back to pending without counting a failure."""
        now = time.time()
        with self._tx() as c:
            cur = c.execute(
                "UPDATE matches SET state='pending', lease_expires=NULL, worker='', updated_at=? "
                "WHERE id=? AND attempt=? AND state IN ('queued','running')",
                (now, match_id, attempt),
            )
            if cur.rowcount:
                self._log_in(c, "requeued", match_id, f"attempt {attempt}: {reason}")
            return cur.rowcount > 0

    def retry_failed(self) -> list[str]:
        """Resume: matches given up before get a fresh set of attempts (their failure stays logged)."""
        now = time.time()
        with self._tx() as c:
            ids = [r["id"] for r in c.execute("SELECT id FROM matches WHERE state='failed'")]
            for mid in ids:
                c.execute(
                    "UPDATE results SET status='rejected' WHERE match_id=? AND status='official' "
                    "AND worker='coordinator'",
                    (mid,),
                )
                c.execute(
                    "UPDATE matches SET state='pending', failures=0, lease_expires=NULL, worker='', "
                    "finished_at=NULL, updated_at=? WHERE id=?",
                    (now, mid),
                )
                self._log_in(c, "retry_failed", mid, "coordinator restarted: failed match tried again")
        return ids

    # -- reruns ----------------------------------------------------------------
    def add_candidate(self, match_id: str, result: MatchResult) -> int:
        """Keep a rerun's result beside the official one; returns its attempt number."""
        now = time.time()
        with self._tx() as c:
            r = c.execute("SELECT attempt FROM matches WHERE id=?", (match_id,)).fetchone()
            if r is None:
                raise StoreError(f"no match {match_id!r}")
            attempt = int(r["attempt"]) + 1
            c.execute("UPDATE matches SET attempt=?, updated_at=? WHERE id=?", (attempt, now, match_id))
            c.execute(
                "INSERT INTO results(match_id, attempt, status, worker, result, received_at) "
                "VALUES(?, ?, 'candidate', ?, ?, ?)",
                (match_id, attempt, result.worker, json.dumps(result.to_dict(), sort_keys=True), now),
            )
            self._log_in(c, "rerun", match_id, f"attempt {attempt} kept as candidate")
        return attempt

    def accept_candidate(self, match_id: str, attempt: int) -> None:
        """Make a rerun's result official; the old official one becomes superseded."""
        now = time.time()
        with self._tx() as c:
            cur = c.execute(
                "UPDATE results SET status='official', accepted_at=? WHERE match_id=? AND attempt=? "
                "AND status='candidate'",
                (now, match_id, attempt),
            )
            if not cur.rowcount:
                raise StoreError(f"match {match_id}: no candidate result for attempt {attempt}")
            c.execute(
                "UPDATE results SET status='superseded' WHERE match_id=? AND status='official' AND "
                "attempt != ?",
                (match_id, attempt),
            )
            c.execute(
                "UPDATE matches SET state=CASE WHEN state='obsolete' THEN 'obsolete' ELSE 'done' END, "
                "finished_at=?, updated_at=? WHERE id=?",
                (now, now, match_id),
            )
            self._log_in(c, "rerun_accepted", match_id, f"attempt {attempt} is now official")
