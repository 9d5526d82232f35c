"""The coordinator: drive a tournament to its end, or resume one (README.md, docs/scale-out.md).

The loop is a fixed point of a pure planner over the run store::

    results = store.official_results()      # once; then kept up to date in memory
    state   = advance(config, results)      # every match that exists now
    store.sync_plan(state.matches)          # new -> pending, unwanted -> obsolete
    dispatch every pending match; accept notes; sweep leases; repeat
    until state.finished

The cost per match stays flat however many matches were played before
(issue 13): stored results are decoded once, at the start, and each accepted
one is added to the in-memory results as it arrives; ``advance`` is given a
``StageMemo`` so a stage is planned again only when one of its own matches got
a result; and while the running stage waits for all its matches (every
round-based planner: ``TournamentState.waits_for_every_result``) nothing is
re-planned until the last one is in. A round robin is planned lazily
(``runner.domain.stages.round_robin``): the plan holds a window of unplayed
matches, and the window object the plan hands back (``TournamentState.window``)
is fed each accepted result and plans the next matches, which are appended to
the store (``RunStore.add_planned``) without re-planning anything; specs are
kept only for matches not yet played.

Because ``advance`` is pure and match ids are deterministic, resuming is the
same loop on an existing store: whatever was in flight when the previous
coordinator died is dispatched again as a new attempt, and results of the
old attempts are ignored if they still arrive.

Where matches run:

* ``--inline``: in this process, one at a time (debugging, tests);
* default: an embedded Redis (``runner.orchestration.redis_server``) plus one local
  ``tourney worker`` process per core (``--workers N``), all stopped at the end;
* ``--broker URL``: an existing Redis; local workers too unless
  ``--no-local-workers`` (then ``tourney worker --broker URL`` elsewhere).

A match whose attempts keep failing (lost workers, ``system_error`` results)
is given up after ``ATTEMPT_CAP`` failures: its state is ``failed`` and it
holds a ``system_error`` result, which the stages never count. A stage that
needs it cannot finish, so the run stops once nothing else can be played,
lists the failed matches and exits 1; running the same command again retries
them (after the cause is fixed).
"""

from __future__ import annotations

import logging
import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field, replace

from runner.config import TournamentConfig
from runner.domain.disputes import adoption_chains, explained_by_adoption
from runner.domain.match_values import (
    GameRecord,
    MatchPlan,
    MatchResult,
    MatchSpec,
    VerdictKind,
    system_error_result,
)
from runner.domain.progress import ProgressSink, ProgressSnapshot, StageProgress, format_duration
from runner.domain.stages.base import PlanWindow, TournamentState
from runner.domain.stages.memo import StageMemo
from runner.domain.stages.tournament import advance, match_spec
from runner.domain.verify import ResultMismatch, verify_result
from runner.domain.wire import to_builtins
from runner.orchestration.dispatch import (
    CeleryDispatcher,
    Dispatcher,
    Finished,
    InboxNote,
    InlineDispatcher,
    NoWorkerCanServe,
    Rejected,
    Revoked,
    Skipped,
    Started,
    Timing,
    worker_identity,
)
from runner.orchestration.stragglers import MIN_SAMPLES as STRAGGLER_MIN_SAMPLES
from runner.orchestration.stragglers import Flight, straggler_copies
from runner.orchestration.workers_health import WorkersHealth
from runner.storage.disputes import Disputes
from runner.storage.run_dir import (
    ResumeRefused,
)
from runner.storage.store import DEFAULT_ATTEMPT_CAP, RunStore, StoreError

log = logging.getLogger("tourney.coordinator")

ATTEMPT_CAP = DEFAULT_ATTEMPT_CAP
#: at most this often the planner runs while matches are in flight (it is pure, but not free)
REPLAN_EVERY_S = 0.5
PROGRESS_EVERY_S = 0.5
#: how often missing artifacts are pushed to Redis again (a flushed or replaced broker)
REPUBLISH_EVERY_S = 30.0
#: rejected (unsigned/altered) notes written to the run's events per claimed worker name
REJECTED_LOGGED_PER_WORKER = 100
#: how often the broker is checked for having lost its data (a cheap EXISTS)
BROKER_CHECK_EVERY_S = 1.0
#: a match a quarantined or revoked worker took waits this long before it is dispatched again
HOLD_AFTER_IGNORED_S = 1.0
#: how often such a worker's taking a match re-dispatches it uncharged (then the sweeper decides)
IGNORED_HANDBACKS_PER_MATCH = 100
#: the progress line's store counts are read again after this many times their last read's time
COUNTS_COST_FACTOR = 20.0


@dataclass
class SessionOutcome:
    finished: bool
    state: TournamentState
    failed: list[str] = field(default_factory=list)  # matches given up (when not finished)
    failed_details: dict[str, str] = field(default_factory=dict)
    matches: int = 0  # results accepted in this session
    games: int = 0
    moves: int = 0
    elapsed_s: float = 0.0


class Coordinator:
    """Plans, dispatches and accepts until the tournament is finished (or blocked)."""

    def __init__(
        self,
        config: TournamentConfig,
        store: RunStore,
        dispatcher: Dispatcher,
        progress: ProgressSink,
        *,
        timing: Timing | None = None,
        attempt_cap: int = ATTEMPT_CAP,
        check_resume: bool = False,
        republish: Callable[[], None] | None = None,
        on_accepted: Callable[[MatchSpec, list[GameRecord]], None] | None = None,
        on_tick: Callable[[], None] | None = None,
        slots: int = 1,
    ) -> None:
        self.config = config
        #: matches this run's workers play at once: planners that keep every worker busy
        #: plan that many ahead (``StageContext.slots``; the sprt stage)
        self.slots = slots
        #: told each result accepted in this session, with its spec (``tourney run`` replays
        #: them for the report meanwhile: ``runner.report.replay_memo``); must return at once
        self.on_accepted = on_accepted
        self.store = store
        self.dispatcher = dispatcher
        self.progress = progress
        self.timing = timing or Timing.from_env()
        self.attempt_cap = attempt_cap
        self.check_resume = check_resume
        self.republish = republish
        #: called on every pass of the loop (``tourney run``: restart a dead local worker)
        self.on_tick = on_tick
        self._specs: dict[str, MatchSpec] = {}
        self._queue_empty_since: float | None = None
        self._last_sweep = 0.0
        self._last_republish = time.monotonic()
        self._last_data_check = 0.0
        self._last_progress = 0.0
        self._broker_down = False  # the broker's outage was said (``_note_broker``)
        self._counts_cache: tuple[dict[str, tuple[int, int]], dict[str, int]] | None = None
        self._counts_next = 0.0
        self._state: TournamentState | None = None
        #: the official results, read from the store once and then kept up to date here
        #: (None: read them again at the next replan)
        self._results: dict[str, list[GameRecord]] | None = None
        self._memo = StageMemo()
        #: the running stage's lazy plan, fed each official result (``TournamentState.window``)
        self._window: PlanWindow | None = None
        self._games = self._moves = 0  # over the official results, for progress
        self._verdicts = Counter[str]()
        self._session = Counter[str]()
        # a quarantine stands across sessions (resume): the workers' records are kept in the store
        self.health = WorkersHealth.from_summary(store.meta().get("workers") or {})
        #: claimed worker -> notes no enrolled key signed (or a revoked one)
        self.rejected_notes = Counter[str]()
        #: (worker, reason) of every refusal already reported (each is said once)
        self._refusals: set[tuple[str, str]] = set()
        #: match -> worker -> the ceiling it refused the match for (``_check_servable``)
        self._ceiling_refusals: dict[str, dict[str, str]] = {}
        #: match -> when (monotonic) its current attempt started, for the median match time
        self._started_mono: dict[str, float] = {}
        #: how long accepted matches took in this session (the last 1,000)
        self._durations: deque[float] = deque(maxlen=1000)
        #: matches a second copy was sent for (``_stragglers``)
        self._copied: set[str] = set()
        self._last_straggler_check = 0.0
        #: match -> when it may be dispatched again (after a hand-back by an ignored worker)
        self._held: dict[str, float] = {}
        #: results must name this run (a result of another run is refused: docs/fleet.md)
        self.run_id = str(store.meta().get("run_id", ""))
        #: CPU seconds this process spent re-judging results (runner.domain.verify), and in total
        self.verify_cpu_s = 0.0
        self.cpu_s = 0.0

    # -- planning -------------------------------------------------------------------
    def _spec(self, pm: MatchPlan) -> MatchSpec:
        spec = self._specs.get(pm.match_id)
        if spec is None:
            spec = self._specs[pm.match_id] = match_spec(self.config, pm)
        return spec

    def replan(self) -> TournamentState:
        results = self._official_results()
        state = advance(self.config, results, self._memo, slots=self.slots)
        if self.check_resume:
            self._check_same_plan(state.matches)
            self.check_resume = False
        # specs only for the matches new to the store: the played ones need none any more
        sync = self.store.sync_plans(state.matches, self._spec)
        self._window = state.window
        for mid in sync.obsolete:
            self._forget(mid)
        if sync.obsolete:
            self.progress.log(f"{len(sync.obsolete)} match(es) no longer planned (obsolete)")
        if sync.kept:
            self.progress.log(f"{len(sync.kept)} voided match(es) planned again as played: results kept")
        if sync.replayed:
            self.progress.log(
                f"{len(sync.replayed)} voided match(es) planned again with adopted code: replayed "
                f"({', '.join(sync.replayed)})"
            )
        if sync.obsolete or sync.revived:
            self._results = None  # which results are official changed: read them again next time
        self._state = state
        return state

    # -- the official results, in memory ------------------------------------------------
    def _official_results(self) -> dict[str, list[GameRecord]]:
        if self._results is None:
            self._window = None  # it reads the mapping being replaced: the next plan makes another
            self._results = {}
            self._games = self._moves = 0
            self._verdicts.clear()
            for match_id, games in self.store.iter_official_results():
                self._set_official(match_id, games)
        return self._results

    def _set_official(self, match_id: str, games: list[GameRecord]) -> None:
        """``games`` is now the official result of ``match_id`` (a new list object: the memo
        tells a changed result by identity)."""
        if self._results is None:
            return  # read from the store in full at the next replan
        for sign, rs in ((-1, self._results.get(match_id, [])), (1, games)):
            self._games += sign * len(rs)
            for g in rs:
                self._moves += sign * len(g.moves)  # 0 for the kept ones: see below
                if g.verdict.kind is not VerdictKind.NORMAL:
                    self._verdicts[g.verdict.kind.value] += sign
        # kept without transcripts: planners read who won, scores and verdicts, never the moves,
        # which were most of the memory a played match held (6.5 -> 1.4 KB at 3x3 tic-tac-toe;
        # far more in long games). A result is replaced only for a match given up, whose
        # system_error games have no moves, so the moves counter stays right.
        self._results[match_id] = [replace(g, moves=[], stderr={}) for g in games]
        if self._window is not None:
            # a lazily planned stage (round robin) plans its next matches from this result alone
            fresh = self._window.on_result(match_id, games)
            if fresh:
                self.store.add_planned([self._spec(pm) for pm in fresh])

    def _failed(self, match_id: str) -> None:
        """The store gave ``match_id`` up: it holds a ``system_error`` result now."""
        self._forget(match_id)
        games = self.store.official_games(match_id)
        if games is not None:
            self._set_official(match_id, games)

    def _check_same_plan(self, plans: list[MatchPlan]) -> None:
        """Resume guard: a match already in the store must be planned exactly as stored."""
        by_id = {plan.match_id: plan for plan in plans}
        adopted = adoption_chains(Disputes(self.store).acceptances())  # code a dispute adopted
        for match_id, stored in self.store.iter_specs():  # one at a time: a run can hold 500k
            plan = by_id.get(match_id)
            if plan is None:
                continue
            spec = match_spec(self.config, plan)  # not kept: most of them were played
            old, new = to_builtins(stored), to_builtins(spec)
            diff = sorted(k for k in set(old) | set(new) if old.get(k) != new.get(k))
            if diff == ["entries"] and explained_by_adoption(old["entries"], new["entries"], adopted):
                continue  # played (or planned) before `tourney accept --adopt-code`: kept as played
            if diff:
                raise ResumeRefused(
                    f"match {spec.match_id} is planned differently than when this run started "
                    f"({', '.join(diff)} changed: a board file or an entry changed?); "
                    "restore it, or start a new run with --run-dir"
                )

    def _forget(self, match_id: str) -> None:
        self.dispatcher.forget(match_id)
        self._specs.pop(match_id, None)  # read from the store again if a late result needs it

    # -- the loop ---------------------------------------------------------------------
    def run(self) -> SessionOutcome:
        cpu0 = time.process_time()
        try:
            return self._run()
        finally:
            self.cpu_s = time.process_time() - cpu0

    def _run(self) -> SessionOutcome:
        t0 = time.monotonic()
        if isinstance(self.dispatcher, InlineDispatcher):
            # an inline match plays inside poll: let its moves redraw the progress as they come
            self.dispatcher.on_live = lambda: self._show(t0)
        elif isinstance(self.dispatcher, CeleryDispatcher):
            # a call waiting for an unreachable broker still shows it, and lets ``on_tick``
            # restart an embedded Redis that died (else it would wait for itself)
            self.dispatcher.on_wait = lambda: self._waiting_for_broker(t0)
        dirty = True
        last_plan = 0.0
        state: TournamentState | None = None
        while True:
            now = time.monotonic()
            if dirty and (
                not self.store.has_in_flight()
                or (
                    now - last_plan >= REPLAN_EVERY_S
                    and not (state is not None and state.waits_for_every_result)
                )
            ):
                state = self.replan()
                dirty, last_plan = False, now
                if state.finished:
                    break
            self._dispatch_pending()
            if not dirty and not self.store.pending() and not self.store.has_in_flight():
                break  # nothing can be played: only failed matches block the plan
            dirty |= self._handle(self.dispatcher.poll(0.5))
            self._check_broker_data()
            self._sweep()
            self._stragglers()
            if self.on_tick is not None:
                self.on_tick()
            self._show(t0)
        self._show(t0, force=True)
        assert state is not None
        failed = [r.match_id for r in self.store.match_records(states=("failed",))]
        return SessionOutcome(
            finished=state.finished,
            state=state,
            failed=failed,
            matches=self._session["matches"],
            games=self._session["games"],
            moves=self._session["moves"],
            elapsed_s=time.monotonic() - t0,
        )

    def _waiting_for_broker(self, t0: float) -> None:
        if self.on_tick is not None:
            self.on_tick()
        self._show(t0)

    def _note_broker(self, down_s: float | None) -> None:
        """One log line when the broker stops answering and one when it answers again (the
        progress shows the outage while it lasts)."""
        if (down_s is not None) == self._broker_down:
            return
        self._broker_down = down_s is not None
        if down_s is not None:
            left = format_duration(self.dispatcher.patience_s - down_s)
            message = f"the broker does not answer; the run stops in {left} unless it answers again"
        else:
            message = "the broker answers again"
        log.warning("%s", message)
        self.progress.log(message)

    def _dispatch_pending(self) -> None:
        now = time.monotonic()
        for mid in self.store.pending():
            if self._held.get(mid, 0.0) > now:
                continue  # handed back by a worker we do not listen to: not straight back to it
            self._held.pop(mid, None)
            spec, attempt = self.store.dispatch(mid)
            self.dispatcher.submit(spec, attempt)

    def _handle(self, notes: list[InboxNote]) -> bool:
        changed = False
        for note in notes:
            if isinstance(note, Revoked):
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
        present = self.dispatcher.present() if isinstance(self.dispatcher, CeleryDispatcher) else None
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
        if isinstance(self.dispatcher, CeleryDispatcher) and note.run != self.run_id:
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
        if isinstance(self.dispatcher, CeleryDispatcher):
            self.dispatcher.quarantine(worker, rec.reason)
        # quarantine binds: what it holds goes to the others now, not when its leases run out
        for f in self.store.in_flight_leases():
            if worker_identity(f.worker) == worker:
                self._hand_back(f.match_id, f.attempt, f"worker {worker} is quarantined", ignored_worker=True)

    def _check_broker_data(self) -> None:
        """A broker that came back empty lost every queued message, the artifacts and the
        ``current`` hash: notice it within a second or two, republish the artifacts and
        re-dispatch the queued matches at once, without charging their attempts. Matches a
        worker is playing go on: the worker reports to the inbox as before."""
        mono = time.monotonic()
        if (
            not isinstance(self.dispatcher, CeleryDispatcher)
            or mono - self._last_data_check < BROKER_CHECK_EVERY_S
        ):
            return
        self._last_data_check = mono
        if not self.dispatcher.lost_its_data():
            return
        if self.republish is not None:
            self.republish()
            self._last_republish = mono
        requeued = [
            f.match_id
            for f in self.store.in_flight_leases()
            if f.state == "queued"
            and self.store.requeue(f.match_id, f.attempt, "the broker restarted empty: message lost")
        ]
        for f in self.store.in_flight_leases():  # running: their workers report as before
            self.dispatcher.want(f.match_id, f.attempt)
        self.dispatcher.mark_alive()
        self._queue_empty_since = None
        self.store.log("broker_emptied", None, f"{len(requeued)} queued match(es) re-dispatched")
        self.progress.log(
            f"the broker lost its data (restarted empty): artifacts republished, "
            f"{len(requeued)} queued match(es) re-dispatched, no attempt charged"
        )

    def _timed(self, note: Finished) -> None:
        """An accepted result: its match's time joins the median; a straggler's copies are told."""
        began = self._started_mono.pop(note.match_id, None)
        if began is not None:
            self._durations.append(time.monotonic() - began)
        if note.match_id in self._copied:
            self._copied.discard(note.match_id)
            detail = (
                f"attempt {note.attempt}: first valid result from {note.worker}; the other copy is ignored"
            )
            self.store.log("straggler_result", note.match_id, detail)

    def _stragglers(self) -> None:
        """Send second copies of straggling matches (``runner.orchestration.stragglers``): a slow
        machine no longer holds the run. The first valid result is accepted; the other, a
        duplicate of the same attempt, is ignored."""
        mono = time.monotonic()
        if (
            not isinstance(self.dispatcher, CeleryDispatcher)
            or mono - self._last_straggler_check < self.timing.sweep_s
        ):
            return
        self._last_straggler_check = mono
        if len(self._durations) < STRAGGLER_MIN_SAMPLES:
            return
        leases = self.store.in_flight_leases()
        flights = [
            Flight(
                f.match_id,
                f.attempt,
                f.worker,
                f.state == "running",
                None if f.match_id not in self._started_mono else mono - self._started_mono[f.match_id],
            )
            for f in leases
        ]
        copies = straggler_copies(
            flights,
            self._durations,
            factor=self.config.timing.straggler_factor,
            idle=self.dispatcher.workers() - len(flights) - len(self._copied),
            copied=frozenset(self._copied),
            pending=bool(self.store.pending()),
        )
        for c in copies:
            spec = self._specs.get(c.match_id) or self.store.spec(c.match_id)
            self.dispatcher.submit_copy(spec, c.attempt, worker_identity(c.worker))
            self._copied.add(c.match_id)
            self.store.log("straggler_copy", c.match_id, c.detail)
            self.progress.log(f"match {c.match_id}: {c.detail}")

    def _sweep(self) -> None:
        """Requeue attempts nobody is working on any more (docs/scale-out.md)."""
        mono = time.monotonic()
        if mono - self._last_sweep < self.timing.sweep_s:
            return
        self._last_sweep = mono
        if self.republish is not None and mono - self._last_republish > REPUBLISH_EVERY_S:
            self._last_republish = mono
            self.republish()
        if self.dispatcher.healthy_for() < self.timing.lease_s:
            return  # the broker was down: give heartbeats time to resume first
        now = time.time()
        empty = self.dispatcher.queue_empty()
        if empty is None:
            return
        if not empty:
            self._queue_empty_since = None
        elif self._queue_empty_since is None:
            self._queue_empty_since = now
        for f in self.store.in_flight_leases():
            if f.state == "running" and f.lease_expires is not None and f.lease_expires < now:
                alive = self.dispatcher.alive(f.match_id, f.attempt)
                if alive:
                    self.store.extend_lease(f.match_id, f.attempt, now + self.timing.lease_s)
                elif alive is False:
                    acc = self.store.lease_lost(
                        f.match_id,
                        f.attempt,
                        f"lease expired: no heartbeat from {f.worker or '?'}",
                        attempt_cap=self.attempt_cap,
                    )
                    self._lost(f.match_id, acc.status, acc.detail)
            elif (
                f.state == "queued"
                and self._queue_empty_since is not None
                and now - self._queue_empty_since > self.timing.lost_s
                and f.dispatched_at is not None
                and now - f.dispatched_at > self.timing.lost_s
            ):
                acc = self.store.lease_lost(
                    f.match_id, f.attempt, "no worker started it (message lost)", attempt_cap=self.attempt_cap
                )
                self._lost(f.match_id, acc.status, acc.detail)

    def _lost(self, match_id: str, status: str, detail: str) -> None:
        if status == "failed":
            self._failed(match_id)
            self.progress.log(f"match {match_id} FAILED: {detail}")
        elif status == "retry":
            self.progress.log(f"match {match_id}: re-dispatching ({detail})")

    def _store_counts(self, mono: float, force: bool) -> tuple[dict[str, tuple[int, int]], dict[str, int]]:
        """The store's per-stage and per-state counts for the progress line. They scan every
        match row (about 12 ms per 10,000 rows measured under load), so they are read again
        only once the time since the last read is ``COUNTS_COST_FACTOR`` times what that read
        took: the progress line costs at most about 1/20 of the coordinator's time at any size
        (a small store is still read at every redraw; a 500,000-match round robin every ten
        seconds or so, where reading it every 0.5 s would take all the time there is)."""
        cached = self._counts_cache
        if force or cached is None or mono >= self._counts_next:
            started = time.monotonic()
            cached = self._counts_cache = (self.store.stage_counts(), self.store.counts())
            self._counts_next = mono + COUNTS_COST_FACTOR * (time.monotonic() - started)
        return cached

    def _show(self, t0: float, *, force: bool = False) -> None:
        mono = time.monotonic()
        if not force and mono - self._last_progress < PROGRESS_EVERY_S:
            return
        self._last_progress = mono
        down_s = self.dispatcher.down_for()
        self._note_broker(down_s)
        state = self._state
        counts, c = self._store_counts(mono, force)
        stages = []
        if state is not None:
            for st in state.stages:
                done, total = counts.get(st.name, (0, 0))
                if st.status == "running" and self._window is not None:
                    total = max(total, self._window.total)  # a lazy plan: all its matches to come
                stages.append(StageProgress(st.name, done, total, st.status, st.summary))
        games, moves, verdicts = self._games, self._moves, self._verdicts
        reported = self.dispatcher.live()
        wanted = {(f.match_id, f.attempt) for f in self.store.in_flight_leases()} if reported else set()
        live = tuple(m for m in reported if (m.match_id, m.attempt) in wanted)
        self.progress.update(
            ProgressSnapshot(
                stages=stages,
                games_done=games,
                moves_done=moves,
                elapsed_s=mono - t0,
                verdicts=dict(verdicts),
                workers=self.dispatcher.workers(),
                running=c.get("running", 0),
                queued=c.get("queued", 0),
                failed=c.get("failed", 0),
                quarantined=tuple(r.name for r in self.health.quarantined()),
                live=live,
                broker_down_s=down_s,
                broker_patience_s=self.dispatcher.patience_s,
            )
        )


__all__ = ["ATTEMPT_CAP", "Coordinator", "NoWorkerCanServe", "SessionOutcome"]
