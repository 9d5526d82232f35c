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
from runner.orchestration.coordinator_state import CoordinatorState
from runner.orchestration.dispatcher import (
    Finished,
    InboxNote,
    NoWorkerCanServe,
    Rejected,
    Revoked,
    Skipped,
    Started,
    worker_identity,
)
from runner.orchestration.stragglers import match_kind
from runner.storage.store import StoreError

log = logging.getLogger("tourney.coordinator")

#: rejected (unsigned/altered) notes written to the run's events per claimed worker name
REJECTED_LOGGED_PER_WORKER = 100
#: a match a quarantined or revoked worker took waits this long before it is dispatched again
HOLD_AFTER_IGNORED_S = 1.0
#: how often such a worker's taking a match re-dispatches it uncharged (then the sweeper decides)
IGNORED_HANDBACKS_PER_MATCH = 100


class InboxHandling(CoordinatorState):
    """The coordinator's part that reads the notes (``Coordinator`` is the whole)."""

    def _handle(self, notes: list[InboxNote]) -> bool:
        changed = False
        for note in notes:
            if isinstance(note, (Started, Finished)) and note.verify:
                self.verifier.on_note(note)  # a replay: never the match's own life
            elif isinstance(note, Revoked):
                self._revoked(note)
            elif isinstance(note, (Started, Finished)) and self.health.is_quarantined(
                worker_identity(note.worker)
            ):
                # quarantine binds: nothing a quarantined worker's key signs is acted on
                why = f"worker {note.worker} is quarantined"
                self._hand_back(note.match_id, note.attempt, why, ignored_worker=True)
            elif isinstance(note, Started) and note.copy:
                detail = f"attempt {note.attempt}: the second copy started on {note.worker}"
                self.store.log("straggler_copy_started", note.match_id, detail)
            elif isinstance(note, Started):
                acc = self.store.mark_started(
                    note.match_id,
                    note.attempt,
                    note.worker,
                    time.time() + self.timing.lease_s,
                    execution=note.execution,
                    attempt_cap=self.attempt_cap,
                )
                if acc.status == "accepted":
                    self._started_mono[note.match_id] = time.monotonic()
                if acc.status == "failed":
                    changed = True
                    self._failed(note.match_id)
                    self.progress.log(f"match {note.match_id} FAILED: {acc.detail}")
                elif acc.status == "redelivered":
                    self.progress.log(f"match {note.match_id}: {acc.detail}")
            elif isinstance(note, Rejected):
                self._rejected(note)
            elif isinstance(note, Finished):
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
                self.store.requeue(
                    note.match_id, note.attempt, f"handed back by {note.worker}: {note.reason}"
                )
                if note.reason.startswith("ceiling:"):
                    self._check_servable(note)
            elif isinstance(note, Skipped) and self.store.requeue(
                note.match_id, note.attempt, f"worker {note.worker} found the attempt unknown to the broker"
            ):
                log.info("requeued %s: skipped by %s", note.match_id, note.worker)
        return changed

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
        refusals = self._ceiling_refusals.setdefault(note.match_id, {})
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
        """The organiser revoked a worker's key: it is quarantined for good, told to stop, and
        what it holds goes to the others."""
        if self.health.revoke(note.worker, f"key revoked: {note.reason}"):
            self.store.log("worker_revoked", None, f"{note.worker}: {note.reason}")
            self._quarantine(note.worker)

    def _bound(self, note: Finished) -> bool:
        """Whether a result is for this run, a match of it, and played the code the spec names;
        if not, a named event (``result_wrong_run``, ``result_wrong_code``), the result is
        dropped and counted against the worker whose key signed it (no honest worker sends
        one), and the attempt goes to another worker uncharged."""
        worker = worker_identity(note.worker)
        if self.dispatcher.results_name_their_run and note.run != self.run_id:
            kind = "result_wrong_run"
            detail = f"attempt {note.attempt} from {note.worker} names run {note.run!r}, not {self.run_id!r}"
        else:
            try:
                spec = self._specs.get(note.match_id) or self.store.spec(note.match_id)
            except StoreError:
                log.warning("ignoring a result from %s for no match of this run (%s)", worker, note.match_id)
                return False
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
        if note.revoked:
            self._hand_back(note.match_id, note.attempt, note.reason, ignored_worker=True)
            if note.kind == "skipped":
                return  # a revoked worker handing a task back does what it should
        self.rejected_notes[note.claimed_worker] += 1
        n = self.rejected_notes[note.claimed_worker]
        if n > REJECTED_LOGGED_PER_WORKER:
            return
        detail = f"attempt {note.attempt} claimed by worker {note.claimed_worker!r}: {note.reason}"
        if n == REJECTED_LOGGED_PER_WORKER:
            detail += " (further ones from this name are only counted)"
        log.warning("REJECTED a note no enrolled worker key signed for %s: %s", note.match_id, detail)
        self.store.log("rejected_note", note.match_id, detail)
        self.progress.log(f"rejected a note for {note.match_id} ({detail})")

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
        decision = self.health.failed(worker, note.match_id, err.detail, mismatch=mismatch is not None)
        if decision.quarantine_now:
            self._quarantine(worker)
        # a result the referee rejects says nothing about the match: it never uses up an attempt
        if decision.charge_match and (mismatch is None or decision.capped):
            return result
        reason = f"failure on {worker} not charged: {err.detail}"[:500]
        if not self.store.requeue(note.match_id, note.attempt, reason):
            return result  # not in flight (late or duplicate): the store records why it is ignored
        self.progress.log(f"match {note.match_id}: re-dispatching (failed on {worker}; not charged)")
        return None

    def _quarantine(self, worker: str) -> None:
        rec = self.health.record(worker)
        log.warning("worker %s QUARANTINED: %s", worker, rec.reason)
        self.store.log("quarantined", None, f"{worker}: {rec.reason}")
        self.store.set_meta(workers=self.health.summary())
        self.progress.log(f"worker {worker} QUARANTINED ({rec.reason}); its matches go to other workers")
        self.dispatcher.quarantine(worker, rec.reason)
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
