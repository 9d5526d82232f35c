"""Per-worker accounting and quarantine (docs/scale-out.md): one bad machine cannot sink a run.

The store caps *matches'* attempts; this module keeps the *workers'* record,
so that a machine whose sandbox is broken does not spend every match's
attempts in milliseconds each:

* every result a worker sends counts for it (``accepted``) or against it
  (``system_error``, or a result the referee replay rejected);
* a failure is charged to the match's attempt cap only when the worker has
  proven it can play (at least one accepted result) — a failure from an
  unproven or quarantined worker is requeued without charge, at most
  ``UNCHARGED_PER_MATCH`` times per match so that a match which breaks
  every machine still ends;
* ``QUARANTINE_AFTER`` failures in a row with nothing good in between
  quarantine the worker: the coordinator tells it through the broker to
  stop consuming (``QuarantineNotice``), and progress and report say so;
* a failure while the worker prepared one entry's artifact
  (``MatchResult.artifact_fault``: its disk filled while it built that entry)
  counts once in a row for that entry: the same entry again before a good
  result adds nothing, so one entry's artifact never quarantines a worker.

Pure bookkeeping; the coordinator does the I/O.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

#: consecutive failures (no accepted result in between) that quarantine a worker
QUARANTINE_AFTER = 3
#: how many failures of one match may go uncharged (then they count against its cap)
UNCHARGED_PER_MATCH = 10


@dataclass
class WorkerRecord:
    name: str
    accepted: int = 0
    system_errors: int = 0
    mismatches: int = 0
    failures_in_a_row: int = 0
    #: ``started`` notes for attempts it never played (no heartbeat of theirs, no result)
    unplayed_starts: int = 0
    quarantined: bool = False
    reason: str = ""
    #: when (seconds since the epoch) it was quarantined: an organiser's lift after it ends it
    quarantined_at: float = 0.0
    #: a verification replay's transcript differed from this worker's (or this worker's replay
    #: differed from the official one): flagged, not quarantined, since the records cannot tell
    #: which of the two lied (docs/fleet.md, "Verification")
    suspect: str = ""
    #: the entries (digests) whose artifact faults are in ``failures_in_a_row`` already
    fault_entries: set[str] = field(default_factory=set)


@dataclass(frozen=True)
class FailureDecision:
    """What to do with one failed attempt."""

    charge_match: bool  # count it against the match's attempt cap (else requeue it uncharged)
    quarantine_now: bool  # this failure just quarantined the worker
    reason: str
    #: the match has had its uncharged failures: charge it whatever the failure was
    capped: bool = False


@dataclass
class WorkersHealth:
    quarantine_after: int = QUARANTINE_AFTER
    uncharged_per_match: int = UNCHARGED_PER_MATCH
    workers: dict[str, WorkerRecord] = field(default_factory=dict)
    _uncharged: Counter[str] = field(default_factory=Counter)
    #: hand-backs of matches a quarantined or revoked worker took, per match
    _ignored: Counter[str] = field(default_factory=Counter)

    def record(self, worker: str) -> WorkerRecord:
        rec = self.workers.get(worker)
        if rec is None:
            rec = self.workers[worker] = WorkerRecord(worker)
        return rec

    def accepted(self, worker: str) -> None:
        rec = self.record(worker)
        rec.accepted += 1
        rec.failures_in_a_row = 0
        rec.fault_entries.clear()

    def failed(
        self, worker: str, match_id: str, detail: str, *, mismatch: bool = False, entry: str = ""
    ) -> FailureDecision:
        """``entry``: the digest of the entry whose artifact the failure arose from, if it did."""
        rec = self.record(worker)
        if mismatch:
            rec.mismatches += 1
        else:
            rec.system_errors += 1
        if not entry or entry not in rec.fault_entries:
            rec.failures_in_a_row += 1
            if entry:
                rec.fault_entries.add(entry)
        quarantine_now = False
        if not rec.quarantined and rec.failures_in_a_row >= self.quarantine_after:
            rec.quarantined, rec.quarantined_at = True, time.time()
            rec.reason = f"{rec.failures_in_a_row} failures in a row; last: {detail[:200]}"
            quarantine_now = True
        proven = rec.accepted > 0 and not rec.quarantined
        capped = self._uncharged[match_id] >= self.uncharged_per_match
        if proven or capped:
            return FailureDecision(True, quarantine_now, detail, capped)
        # counted by the caller once the requeue happened (``requeued_uncharged``)
        return FailureDecision(False, quarantine_now, detail)

    def may_requeue_uncharged(self, match_id: str, cap: int | None = None) -> bool:
        """Whether ``match_id`` has uncharged re-dispatches left (of ``cap``, default
        ``uncharged_per_match``; hand-backs from ignored workers have their own count). Only one
        that happened is counted (``requeued_uncharged``): a hand-back of an attempt no longer in
        flight uses nothing."""
        counter = self._uncharged if cap is None else self._ignored
        return counter[match_id] < (self.uncharged_per_match if cap is None else cap)

    def requeued_uncharged(self, match_id: str, cap: int | None = None) -> None:
        """One uncharged re-dispatch of ``match_id`` happened (``may_requeue_uncharged``'s count)."""
        (self._uncharged if cap is None else self._ignored)[match_id] += 1

    def unplayed_start(self, worker: str, detail: str) -> bool:
        """``worker`` signed a ``started`` note for an attempt it never played: it counts as a
        failure in a row (3 quarantine it), never against a match. True if it quarantined now."""
        rec = self.record(worker)
        rec.unplayed_starts += 1
        rec.failures_in_a_row += 1
        if not rec.quarantined and rec.failures_in_a_row >= self.quarantine_after:
            rec.quarantined, rec.quarantined_at = True, time.time()
            rec.reason = f"{rec.failures_in_a_row} failures in a row; last: {detail[:200]}"
            return True
        return False

    def revoke(self, worker: str, reason: str) -> bool:
        """Quarantine ``worker`` for ``reason`` (its key was revoked); False if it already was."""
        rec = self.record(worker)
        if rec.quarantined and rec.reason == reason:
            return False
        rec.quarantined, rec.reason, rec.quarantined_at = True, reason, time.time()
        return True

    def lift(self, worker: str, at: float) -> bool:
        """End ``worker``'s quarantine if it began before ``at`` (the organiser lifted it then);
        a revoked key stays out. True if it was lifted now."""
        rec = self.workers.get(worker)
        if rec is None or not rec.quarantined or rec.quarantined_at > at:
            return False
        if rec.reason.startswith("key revoked"):
            return False
        rec.quarantined, rec.reason, rec.failures_in_a_row = False, "", 0
        return True

    @classmethod
    def from_summary(cls, summary: dict[str, dict[str, object]]) -> WorkersHealth:
        """The records ``summary`` kept in a run's metadata (a resumed run's quarantines stand)."""
        health = cls()
        for name, d in summary.items():
            health.workers[name] = WorkerRecord(
                name,
                accepted=int(str(d.get("accepted", 0))),
                system_errors=int(str(d.get("system_errors", 0))),
                mismatches=int(str(d.get("mismatches", 0))),
                unplayed_starts=int(str(d.get("unplayed_starts", 0))),
                quarantined=bool(d.get("quarantined", False)),
                reason=str(d.get("reason", "")),
                quarantined_at=float(str(d.get("quarantined_at", 0.0))),
                suspect=str(d.get("suspect", "")),
            )
        return health

    def flag_suspect(self, worker: str, why: str) -> None:
        rec = self.record(worker)
        rec.suspect = why

    def suspects(self) -> list[WorkerRecord]:
        return [r for r in self.workers.values() if r.suspect]

    def quarantined(self) -> list[WorkerRecord]:
        return [r for r in self.workers.values() if r.quarantined]

    def is_quarantined(self, worker: str) -> bool:
        rec = self.workers.get(worker)
        return rec is not None and rec.quarantined

    def summary(self) -> dict[str, dict[str, object]]:
        """Per worker counts, as kept in the run's metadata (report, ``tourney standings``)."""
        return {
            r.name: {
                "accepted": r.accepted,
                "system_errors": r.system_errors,
                "mismatches": r.mismatches,
                **({"unplayed_starts": r.unplayed_starts} if r.unplayed_starts else {}),
                "quarantined": r.quarantined,
                "reason": r.reason,
                **({"quarantined_at": r.quarantined_at} if r.quarantined else {}),
                **({"suspect": r.suspect} if r.suspect else {}),
            }
            for r in self.workers.values()
        }
