"""The coordinator: drive a tournament to its end, or resume one (README.md, docs/scale-out.md).

The loop is a fixed point of a pure planner over the run store::

    results = store.official_results()      # once; then kept up to date in memory
    state   = advance(config, results)      # every match that exists now
    store.sync_plan(state.matches)          # new -> pending, unwanted -> obsolete
    dispatch pending matches (this run's share of the queue); accept notes; sweep leases; repeat
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
from dataclasses import dataclass, field

from runner.domain.disputes import adoption_chains, explained_by_adoption
from runner.domain.match_values import MatchPlan
from runner.domain.progress import ProgressSnapshot, StageProgress, format_duration
from runner.domain.stages.base import TournamentState
from runner.domain.stages.tournament import advance, match_spec
from runner.domain.wire import to_builtins
from runner.orchestration.coordinator_inbox import InboxHandling
from runner.orchestration.coordinator_leases import LeaseKeeping
from runner.orchestration.coordinator_state import ATTEMPT_CAP, limits_key
from runner.orchestration.dispatcher import DispatchObserver, NoWorkerCanServe
from runner.storage.disputes import Disputes
from runner.storage.run_dir import ResumeRefused

log = logging.getLogger("tourney.coordinator")

#: at most this often the planner runs while matches are in flight (it is pure, but not free)
REPLAN_EVERY_S = 0.5
PROGRESS_EVERY_S = 0.5
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


class Coordinator(InboxHandling, LeaseKeeping):
    """Plans, dispatches and accepts until the tournament is finished (or blocked): the loop
    and the plan here, the notes in ``InboxHandling``, what is in flight in ``LeaseKeeping``,
    their shared state in ``CoordinatorState``."""

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

    # -- the loop ---------------------------------------------------------------------
    def run(self) -> SessionOutcome:
        cpu0 = time.process_time()
        try:
            return self._run()
        finally:
            self.cpu_s = time.process_time() - cpu0

    def _run(self) -> SessionOutcome:
        t0 = time.monotonic()
        self.dispatcher.observe(
            DispatchObserver(
                # a match played inside poll (inline): its moves redraw the progress as they come
                playing=lambda: self._show(t0),
                # a call waiting for an unreachable broker still shows it, and lets ``on_tick``
                # restart an embedded Redis that died (else it would wait for itself)
                waiting=lambda: self._waiting_for_broker(t0),
            )
        )
        dirty = True
        last_plan = 0.0
        state: TournamentState | None = None
        self.verifier.resume()
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
                if state.finished and self.verifier.settled():
                    break
            self._dispatch_pending()
            idle = not dirty and not self.store.pending() and not self.store.has_in_flight()
            if idle and self.verifier.settled():
                break  # nothing can be played: only failed matches block the plan
            self.verifier.tick(idle)
            dirty |= self._handle(self.dispatcher.poll(0.5))
            self._check_broker_data()
            self._sweep()
            self._unplayed_starts()
            self._stragglers()
            if self.on_tick is not None:
                self.on_tick()
            self._show(t0)
        self._show(t0, force=True)
        if self.verifier.summary():
            self.progress.log(self.verifier.summary())
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
        """Send pending matches, as many as this run's share of the queue leaves room for: the
        runs of one organiser share its workers in turns (``runner.domain.fair_share``)."""
        now = time.monotonic()
        pending = self.store.pending()
        queued = self.store.queued_count()
        self._sharing = self.dispatcher.share(len(pending) + queued, local=self.slots)
        room = len(pending) if self._sharing is None else self._sharing.slots - queued
        for mid in pending:
            if room <= 0:
                break  # the rest wait for this run's next turn on the queue
            if self._held.get(mid, 0.0) > now:
                continue  # handed back by a worker we do not listen to: not straight back to it
            self._held.pop(mid, None)
            spec, attempt = self.store.dispatch(mid)
            refused = self._ceiling_refusals.get(limits_key(spec))
            self.dispatcher.submit(spec, attempt, refused_by=tuple(sorted(refused)) if refused else ())
            room -= 1

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
                pool_runs=self._sharing.runs if self._sharing is not None else 0,
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
