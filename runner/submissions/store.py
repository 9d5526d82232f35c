"""The contest's store: teams, their submissions and each submission's check steps (SQLite).

One file in the contest directory (``runner.submissions.contest_dir``), the truth the server,
``tourney team`` and ``tourney freeze`` share. A submission's row is written once its upload
is wholly and durably on disk (``uploads/<sha256>``), in one transaction that also gives it
its version number, so two uploads of one team at the same instant get two versions in order
and a server killed mid-upload leaves no row at all. The server answers the upload then, at
"received"; unpacking and the layout follow (``record_intake``), and a row still waiting for
them when the server stops is taken up again as it starts (``received``). Connections are in
WAL mode with a busy timeout (``tourney team add`` may write while the server runs) and
``synchronous=FULL``: a commit is on the disk when it returns, so an answered upload survives
a power cut, not only a killed server.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from runner.domain.names import entry_name_problem
from runner.errors import UsageError
from runner.submissions.tokens import TokenHash, matches, new_token, split_token

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS teams (
    name TEXT PRIMARY KEY,
    emails TEXT NOT NULL,
    token_id TEXT NOT NULL UNIQUE,
    token_salt TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    created REAL NOT NULL,
    revoked REAL,
    revoked_reason TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS submissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    team TEXT NOT NULL REFERENCES teams(name),
    version INTEGER NOT NULL,
    received REAL NOT NULL,
    upload_digest TEXT NOT NULL,
    upload_name TEXT NOT NULL,
    size INTEGER NOT NULL,
    entry_digest TEXT,
    state TEXT NOT NULL,
    failure TEXT NOT NULL DEFAULT '',
    first_error TEXT NOT NULL DEFAULT '',
    build_log TEXT NOT NULL DEFAULT '',
    result TEXT,
    check_attempt INTEGER NOT NULL DEFAULT 0,
    check_sent REAL,
    check_started REAL,
    chosen INTEGER NOT NULL DEFAULT 0,
    UNIQUE(team, version)
);
CREATE TABLE IF NOT EXISTS steps (
    submission INTEGER NOT NULL REFERENCES submissions(id),
    step TEXT NOT NULL,
    status TEXT NOT NULL,
    detail TEXT NOT NULL DEFAULT '',
    at REAL NOT NULL,
    PRIMARY KEY (submission, step)
);
CREATE INDEX IF NOT EXISTS submissions_state ON submissions(state);
"""

#: a submission's life: ``checking`` from the moment it is received (stored by digest; its
#: ``entry_digest`` is NULL until it is unpacked and laid out, then its build and smoke game go
#: to a worker), then ``ready`` or ``failed``; ``refused`` when the upload itself broke a rule
#: (format, archive, layout) and never reached a worker
STATES = ("checking", "ready", "failed", "refused")
#: the steps a submission's page shows, in order (docs/submissions.md, "What each check means")
STEPS = ("received", "unpacked", "layout", "built", "smoke", "ready")


class TeamError(UsageError, ValueError):
    """A team that cannot be added, revoked or found (one line for the organiser)."""


@dataclass(frozen=True)
class Team:
    name: str
    emails: list[str]
    created: float
    revoked: float | None
    revoked_reason: str = ""


@dataclass(frozen=True)
class Step:
    step: str
    status: str  # ok | failed | running
    detail: str
    at: float


@dataclass(frozen=True)
class Submission:
    id: int
    team: str
    version: int
    received: float
    upload_digest: str
    upload_name: str
    size: int
    entry_digest: str | None
    state: str
    failure: str
    first_error: str
    build_log: str
    result: str | None
    check_attempt: int
    check_sent: float | None
    check_started: float | None
    chosen: bool
    steps: list[Step] = field(default_factory=list)


@dataclass(frozen=True)
class Auth:
    """Who a bearer token is: a team (by name) or the organiser; ``refused`` says why not."""

    team: str | None = None
    organiser: bool = False
    refused: str = ""


#: a step's row, new or replacing that step's earlier one (a step is shown once, as it stands now)
UPSERT_STEP = (
    "INSERT INTO steps(submission, step, status, detail, at) VALUES(?, ?, ?, ?, ?) "
    "ON CONFLICT(submission, step) DO UPDATE SET status=excluded.status, "
    "detail=excluded.detail, at=excluded.at"
)


class SubmissionStore:
    """The contest's SQLite store. Thread-safe: one connection behind a lock (the server calls
    it from its worker threads and the check loop)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(path, timeout=30.0, isolation_level=None, check_same_thread=False)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=FULL")
        self._conn.execute("PRAGMA foreign_keys=ON")
        with self._lock:
            self._conn.executescript(SCHEMA)

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                self._conn.execute("ROLLBACK")
                raise
            self._conn.execute("COMMIT")

    def _rows(self, sql: str, args: Sequence[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return list(self._conn.execute(sql, args))

    # -- meta --------------------------------------------------------------------
    def meta(self, key: str) -> Any:
        rows = self._rows("SELECT value FROM meta WHERE key=?", (key,))
        return json.loads(rows[0]["value"]) if rows else None

    def set_meta(self, key: str, value: Any) -> None:
        with self._tx() as c:
            c.execute(
                "INSERT INTO meta(key, value) VALUES(?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value=excluded.value",
                (key, json.dumps(value, sort_keys=True)),
            )

    # -- teams and tokens ----------------------------------------------------------
    def add_team(self, name: str, emails: Sequence[str]) -> str:
        """Add a team; returns its token (shown once: only its salted hash is kept)."""
        problem = entry_name_problem(name, "team name")
        if problem:
            raise TeamError(problem)
        for email in emails:
            if "@" not in email or any(ch.isspace() for ch in email) or len(email) > 254:
                raise TeamError(f"{email!r} is not an email address")
        token, kept = new_token()
        try:
            with self._tx() as c:
                c.execute(
                    "INSERT INTO teams(name, emails, token_id, token_salt, token_hash, created) "
                    "VALUES(?, ?, ?, ?, ?, ?)",
                    (name, json.dumps(list(emails)), kept.token_id, kept.salt, kept.digest, time.time()),
                )
        except sqlite3.IntegrityError:
            raise TeamError(f"a team named {name!r} exists already") from None
        return token

    def teams(self) -> list[Team]:
        return [
            Team(r["name"], json.loads(r["emails"]), r["created"], r["revoked"], r["revoked_reason"])
            for r in self._rows("SELECT * FROM teams ORDER BY name")
        ]

    def team(self, name: str) -> Team | None:
        return next((t for t in self.teams() if t.name == name), None)

    def revoke(self, name: str, reason: str = "") -> None:
        with self._tx() as c:
            n = c.execute(
                "UPDATE teams SET revoked=?, revoked_reason=? WHERE name=? AND revoked IS NULL",
                (time.time(), reason, name),
            ).rowcount
        if n == 0:
            known = self.team(name)
            raise TeamError(
                f"no team named {name!r}" if known is None else f"team {name!r} is revoked already"
            )

    def new_organiser_token(self) -> str:
        """A new organiser token (the previous one stops working); shown once."""
        token, kept = new_token()
        self.set_meta("organiser_token", [kept.token_id, kept.salt, kept.digest])
        return token

    def authenticate(self, token: str) -> Auth:
        """Who ``token`` is; ``Auth.refused`` says why nobody (unknown, revoked)."""
        parts = split_token(token)
        if parts is None:
            return Auth(refused="not a tourney token")
        token_id, secret = parts
        organiser = self.meta("organiser_token")
        if organiser is not None and organiser[0] == token_id:
            if matches(secret, TokenHash(*organiser)):
                return Auth(organiser=True)
            return Auth(refused="unknown token")
        rows = self._rows("SELECT * FROM teams WHERE token_id=?", (token_id,))
        if not rows or not matches(secret, TokenHash(token_id, rows[0]["token_salt"], rows[0]["token_hash"])):
            return Auth(refused="unknown token")
        if rows[0]["revoked"] is not None:
            return Auth(refused=f"the token of team {rows[0]['name']} was revoked")
        return Auth(team=rows[0]["name"])

    # -- submissions ---------------------------------------------------------------
    def add_submission(
        self,
        team: str,
        *,
        upload_digest: str,
        upload_name: str,
        size: int,
        entry_digest: str | None,
        state: str,
        steps: Sequence[tuple[str, str, str]],
        failure: str = "",
        received: float | None = None,
    ) -> Submission:
        """Record one upload as the team's next version, with the steps it passed already
        (``(step, status, detail)``), in one transaction."""
        now = time.time()
        with self._tx() as c:
            (version,) = c.execute(
                "SELECT COALESCE(MAX(version), 0) + 1 FROM submissions WHERE team=?", (team,)
            ).fetchone()
            cur = c.execute(
                "INSERT INTO submissions(team, version, received, upload_digest, upload_name, size, "
                "entry_digest, state, failure) VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    team,
                    version,
                    received or now,
                    upload_digest,
                    upload_name,
                    size,
                    entry_digest,
                    state,
                    failure,
                ),
            )
            sid = int(cur.lastrowid or 0)
            c.executemany(
                "INSERT INTO steps(submission, step, status, detail, at) VALUES(?, ?, ?, ?, ?)",
                [(sid, s, st, d, now) for s, st, d in steps],
            )
        got = self.submission(sid)
        assert got is not None
        return got

    def set_step(self, sid: int, step: str, status: str, detail: str = "") -> None:
        with self._tx() as c:
            c.execute(UPSERT_STEP, (sid, step, status, detail, time.time()))

    def record_intake(
        self, sid: int, *, entry_digest: str | None, steps: Sequence[tuple[str, str, str]], failure: str = ""
    ) -> bool:
        """A received submission unpacked and laid out (``entry_digest``: its checks can be sent)
        or refused (None, ``failure``), with its steps; False if it was not waiting for that."""
        now = time.time()
        with self._tx() as c:
            n = c.execute(
                "UPDATE submissions SET entry_digest=?, state=?, failure=? "
                "WHERE id=? AND state='checking' AND entry_digest IS NULL",
                (entry_digest, "checking" if entry_digest else "refused", failure, sid),
            ).rowcount
            if n:
                c.executemany(UPSERT_STEP, [(sid, s, st, d, now) for s, st, d in steps])
        return bool(n)

    def check_sent(self, sid: int) -> int:
        """A new attempt of ``sid``'s check is being sent; returns its number."""
        with self._tx() as c:
            c.execute(
                "UPDATE submissions SET check_attempt=check_attempt+1, check_sent=?, check_started=NULL "
                "WHERE id=?",
                (time.time(), sid),
            )
            (attempt,) = c.execute("SELECT check_attempt FROM submissions WHERE id=?", (sid,)).fetchone()
        return int(attempt)

    def check_started(self, sid: int, attempt: int) -> None:
        with self._tx() as c:
            c.execute(
                "UPDATE submissions SET check_started=? WHERE id=? AND check_attempt=? AND state='checking'",
                (time.time(), sid, attempt),
            )

    def finish_check(
        self,
        sid: int,
        attempt: int,
        *,
        ready: bool,
        failure: str,
        first_error: str,
        build_log: str,
        result: str,
        steps: Sequence[tuple[str, str, str]],
    ) -> bool:
        """The check's outcome, for its current attempt only (False: stale, ignored)."""
        now = time.time()
        with self._tx() as c:
            n = c.execute(
                "UPDATE submissions SET state=?, failure=?, first_error=?, build_log=?, result=? "
                "WHERE id=? AND check_attempt=? AND state='checking'",
                ("ready" if ready else "failed", failure, first_error, build_log, result, sid, attempt),
            ).rowcount
            if n:
                c.executemany(UPSERT_STEP, [(sid, s, st, d, now) for s, st, d in steps])
        return bool(n)

    def choose(self, team: str, version: int) -> None:
        """``counts: chosen``: this version of the team plays."""
        with self._tx() as c:
            row = c.execute(
                "SELECT state FROM submissions WHERE team=? AND version=?", (team, version)
            ).fetchone()
            if row is None:
                raise TeamError(f"team {team} has no version {version}")
            if row["state"] == "refused":
                raise TeamError(f"version {version} was refused; choose one that unpacked")
            c.execute("UPDATE submissions SET chosen=0 WHERE team=?", (team,))
            c.execute("UPDATE submissions SET chosen=1 WHERE team=? AND version=?", (team, version))

    def _submission(self, r: sqlite3.Row, steps: list[Step]) -> Submission:
        return Submission(
            id=r["id"],
            team=r["team"],
            version=r["version"],
            received=r["received"],
            upload_digest=r["upload_digest"],
            upload_name=r["upload_name"],
            size=r["size"],
            entry_digest=r["entry_digest"],
            state=r["state"],
            failure=r["failure"],
            first_error=r["first_error"],
            build_log=r["build_log"],
            result=r["result"],
            check_attempt=r["check_attempt"],
            check_sent=r["check_sent"],
            check_started=r["check_started"],
            chosen=bool(r["chosen"]),
            steps=steps,
        )

    def _with_steps(self, rows: list[sqlite3.Row]) -> list[Submission]:
        if not rows:
            return []
        ids = [r["id"] for r in rows]
        marks = ",".join("?" * len(ids))
        steps: dict[int, list[Step]] = {}
        for s in self._rows(f"SELECT * FROM steps WHERE submission IN ({marks})", ids):
            steps.setdefault(s["submission"], []).append(Step(s["step"], s["status"], s["detail"], s["at"]))
        order = {name: i for i, name in enumerate(STEPS)}
        return [
            self._submission(r, sorted(steps.get(r["id"], []), key=lambda st: order.get(st.step, 99)))
            for r in rows
        ]

    def submission(self, sid: int) -> Submission | None:
        got = self._with_steps(self._rows("SELECT * FROM submissions WHERE id=?", (sid,)))
        return got[0] if got else None

    def version(self, team: str, version: int) -> Submission | None:
        got = self._with_steps(
            self._rows("SELECT * FROM submissions WHERE team=? AND version=?", (team, version))
        )
        return got[0] if got else None

    def submissions(self, team: str | None = None) -> list[Submission]:
        if team is None:
            return self._with_steps(self._rows("SELECT * FROM submissions ORDER BY team, version"))
        return self._with_steps(
            self._rows("SELECT * FROM submissions WHERE team=? ORDER BY version", (team,))
        )

    def received(self, limit: int = -1) -> list[Submission]:
        """Submissions received and not yet unpacked (new, or pending when the server stopped),
        oldest first, at most ``limit`` (-1: all); without their steps (the intake needs none)."""
        rows = self._rows(
            "SELECT * FROM submissions WHERE state='checking' AND entry_digest IS NULL ORDER BY id LIMIT ?",
            (limit,),
        )
        return [self._submission(r, []) for r in rows]

    def checking(self) -> list[Submission]:
        """Submissions whose check is not done (sent, or to be sent again after a restart),
        without their steps: the check loop reads this every pass, and at the deadline it holds
        hundreds of rows (with their steps, 3 ms of the server's CPU a read for 200)."""
        rows = self._rows("SELECT * FROM submissions WHERE state='checking' ORDER BY id")
        return [self._submission(r, []) for r in rows]
