"""Verification replays during a run (``timing.verify_sample``; docs/fleet.md, "Verification").

The coordinator tells this module each accepted result; a sampled one
(``runner.domain.verification.sampled``: by seed and match id, so a resumed run picks the same)
is sent again, as a verification task, for a worker other than the one that played it
(``Dispatcher.submit_copy(..., verification=True)``: that worker hands it back). The
replay's notes come back here, never to the store's match life: its result is kept in the
``verifications`` table (``runner.storage.verifications``) and never changes the standings.

The replay is judged like any result (bound to this run and the spec's code, re-judged by the
referee); one refused for that counts against its worker as a refused result does. A good one
is compared with the official result (``runner.domain.verification.compare``). A transcript
that differs is recorded (``verify_mismatch``), and the run's differences read together
(``runner.domain.verification.blame``) flag what they follow: an entry that falsely declares
``deterministic: true`` (differences across worker pairs; the run's ``suspect_entries`` and an
``entry_suspect`` event), never the honest workers that replayed it, or a worker (differences
across entries; the run's workers record, its events, the organiser's fleet registry). A
suspect worker is not quarantined: a quarantine is proof-based (docs/fleet.md, "Quarantine binds").

The run does not end while a replay is open: one a worker plays is waited for while its
heartbeat lives; one nobody took is given up ``WAIT_BEATS`` heartbeats after everything else
of the run is over (there may be no other worker at all).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

from runner.config import TournamentConfig
from runner.domain.fleet import Fleet
from runner.domain.match_values import MatchResult
from runner.domain.progress import ProgressSink
from runner.domain.verification import Difference, blame, compare, sampled
from runner.domain.verify import ResultMismatch, verify_result
from runner.domain.wire import Finished, Started
from runner.orchestration.dispatcher import Dispatcher, Timing, worker_identity
from runner.orchestration.workers_health import WorkersHealth
from runner.storage.store import RunStore, StoreError
from runner.storage.verifications import Verifications

log = logging.getLogger("tourney.verification")

#: a replay nobody started is given up this many heartbeats after the rest of the run is over
WAIT_BEATS = 20


@dataclass
class _Open:
    attempt: int
    played_by: str  # the enrolled name of the worker whose result is official
    started: float | None = None  # monotonic, once a worker said it plays the replay


class Verifier:
    """The verification replays of one coordinator session."""

    def __init__(
        self,
        config: TournamentConfig,
        store: RunStore,
        dispatcher: Dispatcher,
        health: WorkersHealth,
        progress: ProgressSink,
        timing: Timing,
        *,
        run_id: str,
        quarantine: Callable[[str], None],
    ) -> None:
        self.config = config
        self.store = store
        self.fraction = config.timing.verify_sample
        self.dispatcher = dispatcher if dispatcher.replays_elsewhere else None
        self.health = health
        self.progress = progress
        self.timing = timing
        self.run_id = run_id
        self.quarantine = quarantine
        self.table = Verifications(store)
        self._open: dict[str, _Open] = {}
        self._idle_since: float | None = None
        self._last_tick = 0.0
        self._said_waiting = False
        if self.fraction > 0 and self.dispatcher is None:
            progress.log("timing.verify_sample is ignored by --inline (no second worker to replay on)")

    @property
    def active(self) -> bool:
        return self.dispatcher is not None and self.fraction > 0

    # -- sending ----------------------------------------------------------------------------
    def resume(self) -> None:
        """At the start of a session: send again what the previous one left open, and the
        sampled matches it accepted without sending their replay."""
        if not self.active:
            return
        for v in self.table.open():
            self._send(v.match_id, v.attempt, v.played_by, new=False)
        for match_id, attempt, worker in self.table.done_without():
            if worker and sampled(self.config.seed, match_id, self.fraction):
                self._send(match_id, attempt, worker_identity(worker), new=True)

    def accepted(self, match_id: str, attempt: int, worker: str) -> None:
        """A result was accepted as official: replay it if the sample picks it."""
        if self.active and sampled(self.config.seed, match_id, self.fraction):
            self._send(match_id, attempt, worker_identity(worker), new=True)

    def broker_emptied(self) -> None:
        """The broker came back empty: the replays nobody started were lost with its queue."""
        for match_id, pending in list(self._open.items()):
            if pending.started is None:
                self._send(match_id, pending.attempt, pending.played_by, new=False)

    def _send(self, match_id: str, attempt: int, played_by: str, *, new: bool) -> None:
        assert self.dispatcher is not None
        if new and not self.table.add(match_id, attempt, played_by):
            return
        self.dispatcher.submit_copy(self.store.spec(match_id), attempt, played_by, verification=True)
        self._open[match_id] = _Open(attempt, played_by)

    # -- notes ------------------------------------------------------------------------------
    def on_note(self, note: Started | Finished) -> None:
        """A verification replay's ``started`` or ``result`` note."""
        worker = worker_identity(note.worker)
        pending = self._open.get(note.match_id)
        other_run = bool(note.run) and note.run != self.run_id  # a replay of another run's notes
        if (
            pending is None
            or pending.attempt != note.attempt
            or self.health.is_quarantined(worker)
            or other_run
        ):
            log.info(
                "ignored a verification note for %s attempt %d from %s", note.match_id, note.attempt, worker
            )
            return
        if worker == pending.played_by:
            # the worker that played it cannot vouch for itself: wait for another one
            log.warning("ignored %s's replay of its own result for %s", worker, note.match_id)
            return
        if isinstance(note, Started):
            pending.started = time.monotonic()
            self.table.started(note.match_id, note.attempt, note.worker)
            return
        self._judge(note, pending, worker)

    def _judge(self, note: Finished, pending: _Open, worker: str) -> None:
        match_id, attempt = note.match_id, note.attempt
        spec = self.store.spec(match_id)
        result = note.result
        refused = ""
        if result.system_error is not None:
            self._close(match_id, attempt, "given_up", f"the verifier {note.worker}'s machine failed: "
                        f"{result.system_error.detail}"[:500], worker=note.worker)  # fmt: skip
            return
        elif result.digests != {name: ref.digest for name, ref in spec.entries.items()}:
            refused = f"the replay from {note.worker} played other code"
        else:
            try:
                verify_result(spec, result)
            except ResultMismatch as e:
                refused = f"the replay from {note.worker} is rejected by the referee: {e}"
        if refused:
            # no honest worker sends one: it counts against the verifier as a refused result does
            decision = self.health.failed(worker, match_id, refused, mismatch=True)
            if decision.quarantine_now:
                self.quarantine(worker)
            self._close(match_id, attempt, "invalid", refused[:500], worker=note.worker, result=result)
            return
        games = self.store.official_games(match_id)
        if games is None:  # no longer official (a dispute replaced it): nothing to compare
            self._close(match_id, attempt, "not_compared", "the official result changed meanwhile",
                        worker=note.worker, result=result)  # fmt: skip
            return
        deterministic = {name: self._deterministic(name) for name in spec.entries}
        verdict = compare(MatchResult(match_id, games), result, deterministic)
        detail = (
            f"attempt {attempt} played by {pending.played_by}, replayed by {note.worker}: {verdict.detail}"
        )
        if verdict.outcome != "differs":
            self._close(match_id, attempt, verdict.outcome, detail, worker=note.worker, result=result)
            return
        self._close(
            match_id, attempt, "differs", detail, worker=note.worker, result=result, event="verify_mismatch"
        )
        log.warning("VERIFICATION MISMATCH for %s: %s", match_id, detail)
        self.progress.log(f"match {match_id}: VERIFICATION MISMATCH ({detail})")
        self._blame()

    def _deterministic(self, name: str) -> bool:
        try:
            return self.config.resolve_player(name).deterministic
        except KeyError:
            return False

    def _differences(self) -> list[Difference]:
        out = []
        for v in self.table.all(("differs",)):
            try:
                entries = frozenset(self.store.spec(v.match_id).entries)
            except StoreError:
                continue
            workers = frozenset({v.played_by, worker_identity(v.verifier)})
            out.append(Difference(v.match_id, workers, entries))
        return out

    def _blame(self) -> None:
        """Flag what the run's differences follow (``blame``), once each: an entry in the run's
        ``suspect_entries``; a worker in this run's workers record and in the organiser's fleet
        registry (``tourney fleet list``)."""
        found = blame(self._differences())
        suspects = dict(self.store.meta().get("suspect_entries") or {})
        for name, diffs in found.entries.items():
            if name in suspects:
                continue
            pairs = "; ".join(sorted({" vs ".join(sorted(d.workers)) for d in diffs}))
            why = (
                f"declares deterministic: true, but replays of its matches differ on different worker "
                f"pairs ({pairs}; matches {', '.join(d.match_id for d in diffs)}, run {self.run_id})"
            )
            suspects[name] = why
            self.store.log("entry_suspect", diffs[-1].match_id, f"{name}: {why}")
            self.progress.log(f"entry {name} SUSPECT: {why}")
        self.store.set_meta(suspect_entries=suspects)
        fleet_dir = self.dispatcher.fleet_dir if self.dispatcher is not None else None
        fleet = Fleet(fleet_dir) if fleet_dir is not None else None
        for worker, diffs in found.workers.items():
            if self.health.record(worker).suspect:
                continue
            others = sorted({w for d in diffs for w in d.workers} - {worker})
            why = (
                f"transcript of match {diffs[-1].match_id} (run {self.run_id}) differs from "
                f"{', '.join(others)}'s, as in {len(diffs) - 1} more match(es) of other entries"
            )
            self.health.flag_suspect(worker, why)
            self.store.log("worker_suspect", diffs[-1].match_id, f"{worker}: {why}")
            if fleet is not None:
                try:
                    fleet.flag_suspect(worker, why)
                except OSError as e:  # the registry is the organiser's record: never the run's end
                    log.warning("could not flag %s in the fleet registry: %s", worker, e)
        self.store.set_meta(workers=self.health.summary())

    def _close(
        self,
        match_id: str,
        attempt: int,
        state: str,
        detail: str,
        *,
        worker: str = "",
        result: MatchResult | None = None,
        event: str = "",
    ) -> None:
        self._open.pop(match_id, None)
        if self.dispatcher is not None:
            self.dispatcher.forget_verification(match_id)
        try:
            self.table.finish(match_id, attempt, state, detail, verifier=worker, result=result, event=event)
        except StoreError as e:
            log.warning("could not record the verification of %s: %s", match_id, e)

    # -- giving up, ending ------------------------------------------------------------------
    def tick(self, run_idle: bool) -> None:
        """Give up replays that cannot come: one whose worker stopped beating, and one nobody
        took ``WAIT_BEATS`` heartbeats after the rest of the run is over."""
        if self.dispatcher is None or not self._open:
            return
        mono = time.monotonic()
        if mono - self._last_tick < self.timing.sweep_s:
            return
        self._last_tick = mono
        if not run_idle:
            self._idle_since = None
        elif self._idle_since is None:
            self._idle_since = mono
            if not self._said_waiting:  # once: the run looks done, and this is why it has not ended
                self._said_waiting = True
                self.progress.log(
                    f"nothing left to play; waiting for {len(self._open)} verification replay(s) on "
                    f"other workers (one nobody takes is given up after {self.wait_s:.0f}s)"
                )
        for match_id, pending in list(self._open.items()):
            if pending.started is not None:
                if mono - pending.started > self.timing.lease_s and (
                    self.dispatcher.verification_alive(match_id, pending.attempt) is False
                ):
                    self._give_up(match_id, pending, "its worker stopped beating")
            elif (
                self._idle_since is not None
                and mono - self._idle_since > WAIT_BEATS * self.timing.heartbeat_s
            ):
                self._give_up(match_id, pending, "no other worker took it")

    @property
    def wait_s(self) -> float:
        """How long a replay nobody took is waited for once the rest of the run is over."""
        return WAIT_BEATS * self.timing.heartbeat_s

    def _give_up(self, match_id: str, pending: _Open, why: str) -> None:
        detail = f"attempt {pending.attempt} played by {pending.played_by}: replay given up ({why})"
        self._close(match_id, pending.attempt, "given_up", detail)
        self.progress.log(f"match {match_id}: verification {detail}")

    def settled(self) -> bool:
        """No replay is open: the run may end."""
        return not self._open

    def summary(self) -> str:
        """One line for the end of the run ("" when nothing was replayed)."""
        states = [v.state for v in self.table.all()]
        if not states:
            return ""
        counts = {s: states.count(s) for s in dict.fromkeys(states)}
        parts = ", ".join(f"{n} {s.replace('_', ' ')}" for s, n in counts.items())
        return f"verification replays: {len(states)} ({parts})"


__all__ = ["WAIT_BEATS", "Verifier"]
