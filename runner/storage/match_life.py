"""A match's life in the store: dispatched, started, its result accepted or not, retried,
given up, requeued, and its reruns' results kept and accepted.

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
docs/config.md, verdicts) is not accepted: it is stored as ``rejected``, and the match goes
back to ``pending`` for another attempt, elsewhere if possible. Lost leases
count the same way, and so does a second execution of one attempt (the broker
handed it out again because its worker died: ``task_reject_on_worker_lost``);
after ``attempt_cap`` such failures the match is ``failed``. A coordinator
restart re-dispatches what was in flight without counting a failure.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from runner.domain.match_values import MatchResult, MatchSpec, system_error_result
from runner.storage.connection import StoreConnection
from runner.storage.rows import column_text, spec_from_row
from runner.storage.schema import StoreError

#: failures (lost leases, system_error results) after which a match is given up
DEFAULT_ATTEMPT_CAP = 3

MatchState = Literal["pending", "queued", "running", "done", "failed", "obsolete"]


@dataclass(frozen=True)
class Accepted:
    """What became of a received result."""

    status: Literal["accepted", "retry", "failed", "ignored", "redelivered", "conflict"]
    detail: str = ""


def failed_result(spec: MatchSpec, detail: str) -> MatchResult:
    """The result a match gets when the attempt cap gives it up."""
    return system_error_result(spec, detail, worker="coordinator", reason="match failed")


class MatchLife(StoreConnection):
    """The part of ``RunStore`` the coordinator and the rerun commands move matches through."""

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
        return spec_from_row(r), attempt

    def mark_started(
        self,
        match_id: str,
        attempt: int,
        worker: str,
        lease_expires: float,
        *,
        execution: str = "",
        attempt_cap: int = DEFAULT_ATTEMPT_CAP,
        previous_alive: Callable[[str], bool | None] | None = None,
    ) -> Accepted:
        """A worker began ``attempt`` (``execution`` names that try, unique per task execution).

        A second execution of the same attempt means the broker handed the task out again
        because whoever had it died (``task_reject_on_worker_lost``): that counts as a failure,
        so a match that keeps killing its workers reaches the attempt cap instead of looping.
        Only once the first execution is really gone, though: ``previous_alive`` tells whether
        it still beats, and while it does (or cannot be told) the second one changes nothing
        (``conflict``): a ``started`` note alone never charges an attempt (docs/fleet.md).
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
                if previous_alive is not None and previous_alive(str(r["execution"])) is not False:
                    return Accepted("conflict", f"attempt {attempt} is still played by its first execution")
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
        blob = column_text(result)
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
            spec = spec_from_row(c.execute("SELECT * FROM matches WHERE id=?", (match_id,)).fetchone())
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
                    column_text(failed_result(spec, detail)),
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
                (match_id, attempt, result.worker, column_text(result), now),
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
