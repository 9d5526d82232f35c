"""The coordinator's watch over matches in flight (docs/scale-out.md): leases that expire
without a heartbeat, queued matches no worker took, straggling matches sent a second copy,
and a broker that came back without its data.

Each is charged as the store decides (``RunStore.lease_lost``, ``requeue``); none waits for
a worker to say anything.
"""

from __future__ import annotations

import time

from runner.domain.match_values import MatchPlan
from runner.orchestration.coordinator_state import CoordinatorState
from runner.orchestration.dispatcher import worker_identity
from runner.orchestration.stragglers import MIN_SAMPLES as STRAGGLER_MIN_SAMPLES
from runner.orchestration.stragglers import Flight, match_kind, straggler_copies

#: how often missing artifacts are pushed to Redis again (a flushed or replaced broker)
REPUBLISH_EVERY_S = 30.0
#: how often the broker is checked for having lost its data (a cheap EXISTS)
BROKER_CHECK_EVERY_S = 1.0


class LeaseKeeping(CoordinatorState):
    """The coordinator's part that sweeps what is in flight (``Coordinator`` is the whole)."""

    def _check_broker_data(self) -> None:
        """A broker that came back empty lost every queued message, the artifacts and the
        ``current`` hash: notice it within a second or two, republish the artifacts and
        re-dispatch the queued matches at once, without charging their attempts. Matches a
        worker is playing go on: the worker reports to the inbox as before."""
        mono = time.monotonic()
        if mono - self._last_data_check < BROKER_CHECK_EVERY_S:
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
        self.verifier.broker_emptied()
        self._queue_empty_since = None
        self.store.log("broker_emptied", None, f"{len(requeued)} queued match(es) re-dispatched")
        self.progress.log(
            f"the broker lost its data (restarted empty): artifacts republished, "
            f"{len(requeued)} queued match(es) re-dispatched, no attempt charged"
        )

    def _stragglers(self) -> None:
        """Send second copies of straggling matches (``runner.orchestration.stragglers``): a slow
        machine no longer holds the run. The first valid result is accepted; the other, a
        duplicate of the same attempt, is ignored. A dispatcher without idle workers (inline:
        ``workers`` is 0) is never asked for a copy."""
        mono = time.monotonic()
        if mono - self._last_straggler_check < self.timing.sweep_s:
            return
        self._last_straggler_check = mono
        if all(len(d) < STRAGGLER_MIN_SAMPLES for d in self._durations.values()):
            return
        flights = [
            Flight(
                f.match_id,
                f.attempt,
                f.worker,
                f.state == "running",
                None if f.match_id not in self._started_mono else mono - self._started_mono[f.match_id],
                match_kind(self._plan(f.match_id)),
            )
            for f in self.store.in_flight_leases()
        ]
        copies = straggler_copies(
            flights,
            self._durations,
            factor=self.config.timing.straggler_factor,
            processes=self.dispatcher.processes(),
            copied=frozenset(self._copied),
            pending=bool(self.store.pending()),
        )
        for c in copies:
            spec = self._specs.get(c.match_id) or self.store.spec(c.match_id)
            self.dispatcher.submit_copy(spec, c.attempt, worker_identity(c.worker))
            self._copied.add(c.match_id)
            self.store.log("straggler_copy", c.match_id, c.detail)
            self.progress.log(f"match {c.match_id}: {c.detail}")

    def _plan(self, match_id: str) -> MatchPlan:
        return self._specs.get(match_id) or self.store.spec(match_id)

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
                if (f.match_id, f.attempt) in self._untrusted_marked:
                    # a key nobody trusts said it had this task: it costs the match nothing
                    why = "taken by a worker whose notes are refused (not enrolled, revoked, quarantined)"
                    self._hand_back(f.match_id, f.attempt, why, ignored_worker=True)
                    continue
                acc = self.store.lease_lost(
                    f.match_id, f.attempt, "no worker started it (message lost)", attempt_cap=self.attempt_cap
                )
                self._lost(f.match_id, acc.status, acc.detail)
