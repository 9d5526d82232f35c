"""The submission server's checks on the workers: sent, watched, re-sent, read (docs/submissions.md).

``CheckLoop`` runs in a thread of ``tourney serve`` beside the web app. It owns the dispatcher
(a ``CeleryDispatcher`` on the organiser's queue, the same signed task path a run uses) and
the contest store's ``checking`` rows:

- a submission whose check was never sent (new, or pending when the server stopped: every
  restart sends each pending check again, as a new attempt) is published (its artifact and the
  house entry's) and sent as the match ``check-<id>`` (``runner.submissions.checks.smoke_spec``);
- a check a worker started whose heartbeat then stopped for a lease, or one queued while the
  queue stood empty for ``Timing.lost_s``, is lost: sent again (``MAX_ATTEMPTS`` in all);
- a result is checked (signed by an enrolled worker: the dispatcher; for this attempt and
  this run; replayed by the game's referee, ``runner.domain.verify``) and read into steps;
  a ``system_error`` is the worker's failure and sends the check again.

Each check is its own task, so a broken submission never blocks another team's.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path

from runner.config import TournamentConfig
from runner.domain.entries import EntrySpec, load_entry
from runner.domain.match_values import EntryRef, MatchResult
from runner.domain.verify import verify_result
from runner.errors import TourneyError
from runner.orchestration.dispatcher import Dispatcher, Finished, Rejected, Started
from runner.orchestration.workers_gate import first_build_error
from runner.submissions.checks import read_outcome, smoke_spec, submission_of
from runner.submissions.contest_dir import ContestDir
from runner.submissions.intake import ensure_artifact
from runner.submissions.store import Submission, SubmissionStore

log = logging.getLogger("tourney.serve")

#: attempts of one check before it is given up as the workers' failure (never the team's)
MAX_ATTEMPTS = 5


class CheckLoop:
    """Sends and watches the checks of every ``checking`` submission (one thread)."""

    def __init__(
        self,
        config: TournamentConfig,
        store: SubmissionStore,
        contest: ContestDir,
        dispatcher: Dispatcher,
        house: EntrySpec,
        publish: Callable[[dict[str, Path]], None],
        *,
        run_id: str,
        lease_s: float,
        lost_s: float,
        supervise: Callable[[], None] | None = None,
    ) -> None:
        self.config = config
        self.store = store
        self.contest = contest
        self.dispatcher = dispatcher
        self.house = house
        self.publish = publish
        self.run_id = run_id
        self.lease_s = lease_s
        self.lost_s = lost_s
        self.supervise = supervise
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        #: per check in flight: (attempt, when its heartbeat was last seen or it was sent)
        self._seen: dict[int, float] = {}
        self._queue_empty_since: float | None = None
        self.sent = 0
        self.finished = 0

    # -- the thread ------------------------------------------------------------
    def start(self) -> CheckLoop:
        # every check pending at start is sent again: what an earlier server sent is in a broker
        # that may have restarted empty; a new attempt supersedes the old one on the workers
        for sub in self.store.checking():
            self._send(sub)
        self._thread = threading.Thread(target=self._run, name="tourney-checks", daemon=True)
        self._thread.start()
        return self

    def wake(self) -> None:
        """A new submission is waiting (the intake calls this once one is unpacked): the loop's
        poll ends now and the check is sent, not at the poll's timeout (half a second: it was
        most of a lone check's wait, and a third of 16 checks' on one worker)."""
        try:
            self.dispatcher.wake()
        except TourneyError as e:  # the broker is down: the loop says so, and sends at its next pass
            log.debug("checks: no wake for the loop: %s", e)

    def stop(self) -> None:
        self._stop.set()
        self.wake()
        if self._thread is not None:
            self._thread.join(15.0)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self.step()
            except TourneyError as e:  # a broker down for long: said once a pass, the server stays up
                log.error("checks: %s", e)
                self._stop.wait(2.0)
            except Exception:
                log.exception("checks: unexpected failure; going on")
                self._stop.wait(1.0)

    def step(self) -> None:
        """One pass: send what waits, read notes, re-send what was lost."""
        if self.supervise is not None:
            self.supervise()
        for sub in self.store.checking():
            if sub.check_sent is None:
                self._send(sub)
        for note in self.dispatcher.poll(0.5):
            self._note(note)
        self._sweep()

    # -- sending -----------------------------------------------------------------
    def _send(self, sub: Submission) -> None:
        if sub.entry_digest is None:
            return
        if sub.check_attempt >= MAX_ATTEMPTS:
            self._give_up(sub)
            return
        self.publish(
            {
                # packed here, off the upload's answer (runner.submissions.intake)
                sub.entry_digest: ensure_artifact(self.contest, sub.entry_digest),
                self.house.digest: self.contest.artifact(self.house.digest),
            }
        )
        attempt = self.store.check_sent(sub.id)
        spec = smoke_spec(self.config, sub.id, self._team_ref(sub), self.house)
        self.dispatcher.submit(spec, attempt)
        self._seen[sub.id] = time.monotonic()
        self.store.set_step(sub.id, "built", "running", "waiting for a worker")
        self.sent += 1
        log.info("check %s (%s v%d) sent, attempt %d", spec.match_id, sub.team, sub.version, attempt)

    def _team_ref(self, sub: Submission) -> EntryRef:
        """The team's entry as a match needs it, read from its kept entry directory."""
        assert sub.entry_digest is not None
        (spec,) = load_entry(self.contest.entry(sub.entry_digest))
        return spec.ref()

    def _give_up(self, sub: Submission) -> None:
        said = f"the workers lost this check {MAX_ATTEMPTS} times; the organiser has been told"
        self.store.finish_check(
            sub.id,
            sub.check_attempt,
            ready=False,
            failure=said,
            first_error="",
            build_log="",
            result="",
            steps=[("built", "failed", said)],
        )
        log.error("check of %s v%d given up after %d attempts", sub.team, sub.version, MAX_ATTEMPTS)

    # -- reading notes -----------------------------------------------------------
    def _note(self, note: object) -> None:
        if isinstance(note, Rejected):
            log.warning("checks: refused a note for %s: %s", note.match_id, note.reason)
            return
        match_id = getattr(note, "match_id", "")
        sid = submission_of(match_id)
        if sid is None:
            return
        sub = self.store.submission(sid)
        if sub is None or sub.state != "checking" or getattr(note, "attempt", -1) != sub.check_attempt:
            return  # an earlier attempt's, or a check already read
        if isinstance(note, Started):
            self.store.check_started(sid, sub.check_attempt)
            self.store.set_step(sid, "built", "running", f"building on {note.worker}")
            self._seen[sid] = time.monotonic()
        elif isinstance(note, Finished):
            if note.run and note.run != self.run_id:
                log.warning("checks: a result for run %s, not this contest's; ignored", note.run)
                return
            self._finished(sub, note.result)

    def _finished(self, sub: Submission, result: MatchResult) -> None:
        spec = smoke_spec(self.config, sub.id, self._team_ref(sub), self.house)
        try:
            verify_result(spec, result)  # the referee replays the transcript, as a run's coordinator does
        except TourneyError as e:
            log.warning("checks: result of %s rejected by the referee: %s; sent again", spec.match_id, e)
            self._send(sub)
            return
        outcome = read_outcome(sub.team, result, first_build_error)
        if outcome.retry:
            log.warning("checks: %s: %s; sent again", spec.match_id, outcome.failure)
            self._send(sub)
            return
        self.store.finish_check(
            sub.id,
            sub.check_attempt,
            ready=outcome.ready,
            failure=outcome.failure,
            first_error=outcome.first_error,
            build_log=outcome.build_log,
            result=outcome.result_json,
            steps=outcome.steps,
        )
        self.dispatcher.forget(spec.match_id)
        self._seen.pop(sub.id, None)
        self.finished += 1
        log.info("check %s: %s", spec.match_id, "ready" if outcome.ready else outcome.failure)

    # -- lost checks -----------------------------------------------------------------
    def _sweep(self) -> None:
        now = time.monotonic()
        empty = self.dispatcher.queue_empty()
        if empty:
            self._queue_empty_since = self._queue_empty_since or now
        else:
            self._queue_empty_since = None
        for sub in self.store.checking():
            if sub.check_sent is None or sub.id not in self._seen:
                continue
            if sub.check_started is not None:
                alive = self.dispatcher.alive(f"check-{sub.id}", sub.check_attempt)
                if alive:
                    self._seen[sub.id] = now
                elif alive is False and now - self._seen[sub.id] > self.lease_s:
                    log.warning(
                        "check-%d: its worker stopped (no heartbeat for %.0fs); sent again",
                        sub.id,
                        self.lease_s,
                    )
                    self._send(sub)
            elif (
                self._queue_empty_since is not None
                and now - self._queue_empty_since > self.lost_s
                and now - self._seen[sub.id] > self.lost_s
            ):
                log.warning(
                    "check-%d: queued but never started while the queue stood empty; sent again", sub.id
                )
                self._send(sub)
