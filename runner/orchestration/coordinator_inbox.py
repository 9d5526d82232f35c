"""The coordinator's handling of the inbox: what each note means for its match, and who may
answer (docs/fleet.md, docs/scale-out.md).

A worker's ``Started`` opens the lease, its ``Finished`` is bound to this run, match and
code, re-judged (``runner.domain.verify``) and given to the store; a ``Skipped`` hands the
attempt back; notes nobody enrolled signed are counted, a revoked or quarantined worker's
are handed to the others. Failures are charged to the worker that caused them
(``runner.orchestration.workers_health``), which may quarantine it.
"""

from __future__ import annotations

import logging
import time
from collections import deque

from runner.domain.match_values import MatchResult, system_error_result
from runner.domain.verify import ResultMismatch, verify_result
from runner.orchestration.coordinator_state import CoordinatorState, limits_key
from runner.orchestration.dispatcher import (
    Finished,
    InboxNote,
    Lifted,
    NoWorkerCanServe,
    Rejected,
    Revoked,
    Skipped,
    Started,
    Unbound,
    worker_identity,
)
from runner.orchestration.stragglers import match_kind

log = logging.getLogger("tourney.coordinator")

#: rejected (unsigned/altered) notes written to the run's events per claimed worker name
REJECTED_LOGGED_PER_WORKER = 100
#: a match a quarantined or revoked worker took waits this long before it is dispatched again
HOLD_AFTER_IGNORED_S = 1.0
#: how often such a worker's taking a match re-dispatches it uncharged (then the sweeper decides)
IGNORED_HANDBACKS_PER_MATCH = 100
#: attempts of one match an untrusted key's note sends back to the queue at once (then marked only)
UNTRUSTED_QUICK_PER_MATCH = 3
#: unproven ``started`` notes remembered at most (a flood beyond it is not even remembered)
UNPROVEN_KEPT = 10_000


class InboxHandling(CoordinatorState):
    """The coordinator's part that reads the notes (``Coordinator`` is the whole)."""

    def _handle(self, notes: list[InboxNote]) -> bool:
        changed = False
        for note in notes:
            if isinstance(note, (Started, Finished)) and note.verify:
                self.verifier.on_note(note)  # a replay: never the match's own life
            elif isinstance(note, Revoked):
                self._revoked(note)
            elif isinstance(note, Lifted):
                self._lifted(note)
            elif isinstance(note, Unbound):
                self._unbound(note)
            elif isinstance(note, (Started, Finished, Skipped)) and self.health.is_quarantined(
                worker_identity(note.worker)
            ):
                # quarantine binds: nothing a quarantined worker's key signs is acted on (what it
                # held was handed back once, when it was quarantined); a task it took now goes back
                self._untrusted_took(note.match_id, note.attempt, f"worker {note.worker} is quarantined")
            elif isinstance(note, Started) and note.copy:
                detail = f"attempt {note.attempt}: the second copy started on {note.worker}"
                self.store.log("straggler_copy_started", note.match_id, detail)
            elif isinstance(note, Started):
                changed |= self._started(note)
            elif isinstance(note, Rejected):
                self._rejected(note)
            elif isinstance(note, Finished):
                self._unproven.pop((worker_identity(note.worker), note.match_id, note.attempt), None)
                if not self._bound(note):
                    continue
                trusted = self._judge(note)
                if trusted is None:
                    continue  # an uncharged failure: requeued
                acc = self.store.accept(note.match_id, note.attempt, trusted, attempt_cap=self.attempt_cap)
                if acc.status == "accepted":
                    changed = True
                    self._timed(note)
                    self.verifier.accepted(note.match_id, note.attempt, note.worker)
                    accepted_spec = self._specs.get(note.match_id)
                    self._forget(note.match_id)
                    self._set_official(note.match_id, trusted.games)
                    if self.on_accepted is not None and accepted_spec is not None:
                        self.on_accepted(accepted_spec, trusted.games)
                elif acc.status == "failed":
                    changed = True
                    self._failed(note.match_id)
                if acc.status == "accepted":
                    self._session["matches"] += 1
                    self._session["games"] += len(note.result.games)
                    self._session["moves"] += sum(len(g.moves) for g in note.result.games)
                elif acc.status == "failed":
                    self.progress.log(f"match {note.match_id} FAILED: {acc.detail}")
                elif acc.status == "retry":
                    self.progress.log(f"match {note.match_id}: retrying ({acc.detail})")
                else:
                    log.info("ignored result for %s attempt %d: %s", note.match_id, note.attempt, acc.detail)
            elif isinstance(note, Skipped) and note.reason:
                self._refusing(note.worker, note.reason)
                if self._holds(note):
                    self.store.requeue(
                        note.match_id, note.attempt, f"handed back by {note.worker}: {note.reason}"
                    )
                if note.reason.startswith("ceiling:"):
                    self._check_servable(note)
            elif (
                isinstance(note, Skipped)
                and self._holds(note)
                and self.store.requeue(
                    note.match_id,
                    note.attempt,
                    f"worker {note.worker} found the attempt unknown to the broker",
                )
            ):
                log.info("requeued %s: skipped by %s", note.match_id, note.worker)
        return changed

    def _holds(self, note: Skipped) -> bool:
        """Whether the worker handing an attempt back may: it is queued (nobody started it), or
        running on that worker's own key. A hand-back never takes an attempt from another worker."""
        flight = self.store.flight(note.match_id)
        if flight is None or flight.attempt != note.attempt:
            return False
        return flight.state == "queued" or worker_identity(flight.worker) == worker_identity(note.worker)

    def _started(self, note: Started) -> bool:
        """A worker says it started an attempt. Believed only with its execution's heartbeat
        (``Dispatcher.execution_alive``): a note nobody plays is remembered, and if no result of
        its signer follows within a lease it counts against that key (``_unplayed_starts``). A
        second execution is charged only once the first one's heartbeat is gone (the store's
        ``previous_alive``). True if the match was given up."""
        proof = self.dispatcher.execution_alive(note.execution)
        if proof is False:
            if len(self._unproven) < UNPROVEN_KEPT:
                key = (worker_identity(note.worker), note.match_id, note.attempt)
                self._unproven.setdefault(key, time.monotonic() + self.timing.lease_s)
            return False
        acc = self.store.mark_started(
            note.match_id,
            note.attempt,
            note.worker,
            time.time() + self.timing.lease_s,
            execution=note.execution,
            attempt_cap=self.attempt_cap,
            previous_alive=None if proof is None else self.dispatcher.execution_alive,
        )
        if acc.status == "accepted":
            self._started_mono[note.match_id] = time.monotonic()
        elif acc.status == "failed":
            self._failed(note.match_id)
            self.progress.log(f"match {note.match_id} FAILED: {acc.detail}")
            return True
        elif acc.status == "redelivered":
            self.progress.log(f"match {note.match_id}: {acc.detail}")
        elif acc.status == "conflict":
            detail = f"attempt {note.attempt} from {note.worker}: {acc.detail}; nothing charged"
            self._note_limited("start_conflict", note.worker, note.match_id, detail)
        return False

    def _unplayed_starts(self) -> None:
        """``started`` notes that were never backed by a heartbeat nor followed by their signer's
        result within a lease: the key signed starts of attempts it never played (a stolen key's
        flood). Each counts as a failure of that key (3 in a row quarantine it), never of a match."""
        if not self._unproven:
            return
        now = time.monotonic()
        due = [k for k, deadline in self._unproven.items() if deadline <= now]
        for key in due:
            del self._unproven[key]
            worker, match_id, attempt = key
            if self.health.is_quarantined(worker):
                continue
            detail = f"started attempt {attempt} of {match_id} and never played it (no heartbeat, no result)"
            self._note_limited("unplayed_start", worker, match_id, f"{worker}: {detail}")
            if self.health.unplayed_start(worker, detail):
                self._quarantine(worker)

    def _note_limited(self, kind: str, worker: str, match_id: str | None, detail: str) -> None:
        """An event of ``kind`` about ``worker``, written out for the first
        ``REJECTED_LOGGED_PER_WORKER`` of them (then only counted): a flood costs no disk."""
        self._limited[(kind, worker_identity(worker))] += 1
        n = self._limited[(kind, worker_identity(worker))]
        if n > REJECTED_LOGGED_PER_WORKER:
            return
        if n == REJECTED_LOGGED_PER_WORKER:
            detail += " (further ones are only counted)"
        self.store.log(kind, match_id, detail)

    def _unbound(self, note: Unbound) -> None:
        """A ``started`` note not bound to a task sent here proves nothing: dropped, nobody charged."""
        detail = f"attempt {note.attempt} from {note.worker}: {note.reason}; ignored"
        self._note_limited("unbound_note", note.worker, note.match_id, detail)

    def _untrusted_took(self, match_id: str, attempt: int, why: str) -> None:
        """A key whose notes are not acted on (unknown, revoked, quarantined) says it has the
        attempt. If nobody trusted started it yet it goes back to the queue uncharged at once,
        for the first ``UNTRUSTED_QUICK_PER_MATCH`` such attempts of a match (a flood of such
        notes would otherwise keep every match from being played); later ones are only marked,
        and the sweeper requeues a marked attempt nobody started uncharged instead of charging
        it as a lost message. An attempt a trusted worker plays is never touched."""
        flight = self.store.flight(match_id)
        if flight is None or flight.attempt != attempt or flight.state != "queued":
            return
        if (match_id, attempt) in self._untrusted_marked:
            return
        self._untrusted_marked.add((match_id, attempt))
        if self._untrusted_quick[match_id] >= UNTRUSTED_QUICK_PER_MATCH:
            return
        if not self.health.may_requeue_uncharged(match_id, IGNORED_HANDBACKS_PER_MATCH):
            return  # the sweeper decides
        self._untrusted_quick[match_id] += 1
        self._hand_back(match_id, attempt, why, ignored_worker=True)

    # -- who may answer (docs/fleet.md) ----------------------------------------------------
    def _hand_back(self, match_id: str, attempt: int, why: str, *, ignored_worker: bool = False) -> None:
        """Re-dispatch an attempt without charging it, a bounded number of times per match;
        past that it counts as a failed attempt (so a match that only such workers take still
        ends). One a quarantined or revoked worker took is held back ``HOLD_AFTER_IGNORED_S``
        first: such a worker may keep taking tasks off the queue, and each would otherwise
        come straight back to it."""
        cap = IGNORED_HANDBACKS_PER_MATCH if ignored_worker else None
        if not self.health.may_requeue_uncharged(match_id, cap):
            acc = self.store.lease_lost(match_id, attempt, why, attempt_cap=self.attempt_cap)
            self._lost(match_id, acc.status, acc.detail)
        elif self.store.requeue(match_id, attempt, why):
            self.health.requeued_uncharged(match_id, cap)  # only one that happened counts
            log.info("re-dispatching %s attempt %d: %s", match_id, attempt, why)
            if ignored_worker:
                self._held[match_id] = time.monotonic() + HOLD_AFTER_IGNORED_S

    def _refusing(self, worker: str, reason: str) -> None:
        """A worker hands tasks back: say so once per worker and reason (event ``worker_refusing``)."""
        if (worker, reason) in self._refusals:
            return
        self._refusals.add((worker, reason))
        log.warning("worker %s refuses tasks: %s", worker, reason)
        self.store.log("worker_refusing", None, f"{worker}: {reason}")
        self.progress.log(f"worker {worker} refuses this run's tasks: {reason}")

    def _check_servable(self, note: Skipped) -> None:
        """A worker refused a match for a limit above its ceiling: once every connected worker
        has refused it, no one can serve it; say which limit and which workers, in one line,
        and stop (resumable) instead of waiting forever."""
        # a ceiling refuses limits, not a match: a refusal holds for every match with the same
        # limits (most runs have one set), so the stop comes once each worker refused any of them
        spec = self._specs.get(note.match_id) or self.store.spec(note.match_id)
        refusals = self._ceiling_refusals.setdefault(limits_key(spec), {})
        # the worker process's own name (its presence key): the part after the key's name
        refusals[note.worker.split("/", 1)[-1]] = note.reason.removeprefix("ceiling: ")
        present = self.dispatcher.present()  # None where no worker process can be counted
        if not present or not present <= set(refusals):
            return
        stage = self.store.spec(note.match_id).plan.stage
        why = "; ".join(f"{w}: {refusals[w]}" for w in sorted(present))
        detail = f"no connected worker can serve match {note.match_id} of stage {stage} ({why})"
        self.store.log("no_worker_can_serve", note.match_id, detail)
        raise NoWorkerCanServe(
            f"{detail}; start a worker whose ceilings allow the config's limits, or change the limits"
        )

    def _revoked(self, note: Revoked) -> None:
        """The organiser revoked a worker's key: it is told to stop and, if it took part in this
        run, quarantined here for good and what it holds goes to the others (one that took no
        part is not named in this run's standings and report)."""
        if note.worker not in self.health.workers and not any(
            worker_identity(f.worker) == note.worker for f in self.store.in_flight_leases()
        ):
            self.dispatcher.quarantine(note.worker, f"key revoked: {note.reason}", every_run=True)
            return
        if self.health.revoke(note.worker, f"key revoked: {note.reason}"):
            self.store.log("worker_revoked", None, f"{note.worker}: {note.reason}")
            self._quarantine(note.worker, every_run=True)

    def _lifted(self, note: Lifted) -> None:
        """The organiser lifted a worker's quarantine (``tourney fleet unquarantine``): if this run
        quarantined it before then, it takes this run's tasks again."""
        if self.health.lift(note.worker, note.at):
            self.store.log("unquarantined", None, f"{note.worker}: lifted by the organiser")
            self.store.set_meta(workers=self.health.summary())
            self.dispatcher.lift_quarantine(note.worker)
            self.progress.log(f"worker {note.worker}: quarantine lifted by the organiser")

    def _bound(self, note: Finished) -> bool:
        """Whether a result is for this run, the current attempt of a match of it, and played
        the code the spec names. A result for another run (``result_wrong_run``) or for an
        attempt that is not current proves nothing about the key that signed it (a replay of
        genuine notes): dropped, nobody charged, the attempt goes on. One for the current
        attempt that played other code (``result_wrong_code``) counts against its worker (no
        honest worker sends one) and the attempt goes to another worker uncharged."""
        worker = worker_identity(note.worker)
        if self.dispatcher.results_name_their_run and note.run != self.run_id:
            detail = f"attempt {note.attempt} from {note.worker} names run {note.run!r}, not {self.run_id!r}"
            log.warning("dropped a result for %s: %s", note.match_id, detail)
            self._note_limited("result_wrong_run", note.worker, note.match_id, f"{detail}; nobody charged")
            # whoever took this attempt off the queue answered with another run's note: should it
            # play nothing, the sweeper requeues the attempt uncharged (bounded), as for an
            # untrusted taker, rather than charge it as a lost message
            flight = self.store.flight(note.match_id)
            if flight is not None and flight.attempt == note.attempt and flight.state == "queued":
                self._untrusted_marked.add((note.match_id, note.attempt))
            return False
        flight = self.store.flight(note.match_id)
        if flight is None or flight.attempt != note.attempt:
            # late, duplicate or never sent: the store says why it is ignored, nobody is charged
            self.store.accept(note.match_id, note.attempt, note.result, attempt_cap=self.attempt_cap)
            return False
        spec = self._specs.get(note.match_id) or self.store.spec(note.match_id)
        wanted = {name: ref.digest for name, ref in spec.entries.items()}
        got = note.result.digests
        if got == wanted or note.result.system_error is not None:
            return True  # a machine's failure played no code: judged as such (``_judge``)
        changed = sorted(n for n in set(wanted) | set(got) if wanted.get(n) != got.get(n))
        kind = "result_wrong_code"
        detail = f"attempt {note.attempt} from {note.worker} played other code for {', '.join(changed)}"
        log.warning("REJECTED result for %s: %s", note.match_id, detail)
        self.store.log(kind, note.match_id, detail)
        decision = self.health.failed(worker, note.match_id, detail, mismatch=True)
        if decision.quarantine_now:
            self._quarantine(worker)
        self._hand_back(note.match_id, note.attempt, f"{kind.replace('_', ' ')} from {note.worker}")
        return False

    def _rejected(self, note: Rejected) -> None:
        """Log a note that is not ours with the worker it claims; a flood of them (anyone with
        the URL can push) is counted, and only the first ones per claimed name are written out.
        A revoked worker's started or result note hands its attempt back to the others."""
        # whoever signed it may hold the task: back to the queue if nobody trusted started it
        self._untrusted_took(note.match_id, note.attempt, note.reason)
        if note.revoked and note.kind == "skipped":
            return  # a revoked worker handing a task back does what it should
        self.rejected_notes[note.claimed_worker] += 1
        if not note.revoked:
            self._name_rejected_key(note)
        n = self.rejected_notes[note.claimed_worker]
        if n > REJECTED_LOGGED_PER_WORKER:
            return
        detail = f"attempt {note.attempt} claimed by worker {note.claimed_worker!r}: {note.reason}"
        if n == REJECTED_LOGGED_PER_WORKER:
            detail += " (further ones from this name are only counted)"
        log.warning("REJECTED a note no enrolled worker key signed for %s: %s", note.match_id, detail)
        self.store.log("rejected_note", note.match_id, detail)
        self.progress.log(f"rejected a note for {note.match_id} ({detail})")

    def _name_rejected_key(self, note: Rejected) -> None:
        """Count a refused note against the key its signature names, with the names it claimed
        (kept in the run's metadata: ``tourney standings`` and the report name the key)."""
        key = note.key_id or "unsigned"
        rec = self.rejected_keys.setdefault(key, {"notes": 0, "claimed": []})
        rec["notes"] = int(str(rec.get("notes", 0))) + 1
        claimed = rec.setdefault("claimed", [])
        if isinstance(claimed, list) and note.claimed_worker not in claimed and len(claimed) < 5:
            claimed.append(note.claimed_worker)
            self.store.set_meta(rejected_keys=self.rejected_keys)  # once per key and name: cheap

    def _judge(self, note: Finished) -> MatchResult | None:
        """The result to record for ``note``: as sent if the referee replay agrees, else a
        ``system_error`` counted against the worker that sent it; None if the failure was
        requeued without charging the match (an unproven or quarantined worker)."""
        result = note.result
        worker = worker_identity(result.worker or "?")  # its key's record, whatever instance sent it
        spec = self._specs.get(note.match_id) or self.store.spec(note.match_id)
        cpu0 = time.process_time()
        mismatch: str | None = None
        try:
            verify_result(spec, result)
        except ResultMismatch as e:
            mismatch = str(e)
        self.verify_cpu_s += time.process_time() - cpu0
        if mismatch is not None:
            log.warning(
                "REJECTED result for %s attempt %d from worker %s: %s",
                note.match_id,
                note.attempt,
                worker,
                mismatch,
            )
            self.store.log(
                "result_mismatch", note.match_id, f"attempt {note.attempt} from {worker}: {mismatch}"
            )
            result = system_error_result(
                spec,
                f"result from {worker} rejected by the referee: {mismatch}"[:500],
                worker=worker,
                digests=result.digests,
            )
        err = result.system_error
        if err is None:
            self.health.accepted(worker)
            return result
        # a fault of the worker's while it prepared one of this match's entries counts once in
        # a row for that entry (runner.orchestration.workers_health); any other digest is ignored
        digests = {ref.digest for ref in spec.entries.values()}
        entry = result.artifact_fault if mismatch is None and result.artifact_fault in digests else ""
        decision = self.health.failed(
            worker, note.match_id, err.detail, mismatch=mismatch is not None, entry=entry
        )
        if decision.quarantine_now:
            self._quarantine(worker)
        # a result the referee rejects says nothing about the match: it never uses up an attempt
        if decision.charge_match and (mismatch is None or decision.capped):
            return result
        reason = f"failure on {worker} not charged: {err.detail}"[:500]
        if not self.store.requeue(note.match_id, note.attempt, reason):
            return result  # not in flight (late or duplicate): the store records why it is ignored
        if not decision.charge_match:
            self.health.requeued_uncharged(note.match_id)  # only one that happened counts
        self.progress.log(f"match {note.match_id}: re-dispatching (failed on {worker}; not charged)")
        return None

    def _quarantine(self, worker: str, *, every_run: bool = False) -> None:
        """Quarantine ``worker`` in this run (``every_run``: its key was revoked) and hand back,
        once, what it holds."""
        rec = self.health.record(worker)
        log.warning("worker %s QUARANTINED: %s", worker, rec.reason)
        self.store.log("quarantined", None, f"{worker}: {rec.reason}")
        self.store.set_meta(workers=self.health.summary())
        self.progress.log(f"worker {worker} QUARANTINED ({rec.reason}); its matches go to other workers")
        self.dispatcher.quarantine(worker, rec.reason, every_run=every_run)
        # quarantine binds: what it holds goes to the others now, not when its leases run out
        for f in self.store.in_flight_leases():
            if worker_identity(f.worker) == worker:
                self._hand_back(f.match_id, f.attempt, f"worker {worker} is quarantined", ignored_worker=True)

    def _timed(self, note: Finished) -> None:
        """An accepted result: its match's time joins the median; a straggler's copies are told."""
        began = self._started_mono.pop(note.match_id, None)
        if began is not None:
            kind = match_kind(self._specs.get(note.match_id) or self.store.spec(note.match_id))
            self._durations.setdefault(kind, deque(maxlen=1000)).append(time.monotonic() - began)
        if note.match_id in self._copied:
            self._copied.discard(note.match_id)
            detail = (
                f"attempt {note.attempt}: first valid result from {note.worker}; the other copy is ignored"
            )
            self.store.log("straggler_result", note.match_id, detail)
