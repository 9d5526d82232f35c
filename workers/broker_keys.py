"""The names both sides use in the broker: the queue, the task, and the run's own keys.

Kept apart from ``workers.celery_app`` so that the coordinator, which only
writes to the broker (``runner.orchestration.celery_dispatcher``), names them without
importing Celery (issue 13: about 0.2 s of its start).

Besides Celery's own keys the run uses (``KEYS``):

* ``tourney:artifact:<digest>``: packed entries (content-addressed, no TTL);
* ``tourney:artifact:<digest>:sig:<key id>``: its signature by an organiser key
  (``runner.domain.signing.artifact_signature``); tasks and notes are signed too;
* ``tourney.<organiser key id>``: the queue of one organiser's tasks (``queue_for``):
  a worker consumes only the queues of the organisers whose public key it holds,
  so no task reaches a worker that cannot verify it (docs/fleet.md);
* ``tourney:run:<run>:inbox``: a list the workers ``RPUSH`` notes onto
  (``started``, ``result``, ``skipped``) and the coordinator pops (it expires
  a week after the last note; the coordinator deletes it when the run ends);
* ``tourney:run:<run>:alive``: a sentinel the coordinator sets to its organiser's key
  id; gone means the broker came back empty (artifacts, queue and ``current`` lost
  with it); a starting worker counts the ones of its organisers (``ALIVE_PATTERN``);
* ``tourney:run:<run>:current``: hash match id -> the attempt the coordinator
  wants; a task for any other attempt is skipped without running;
* ``tourney:run:<run>:hb:<match>:<attempt>``: a heartbeat with a TTL while a
  worker plays the match (the coordinator's lease follows it);
* ``tourney:run:<run>:hbx:<execution>``: the same heartbeat, per task execution (the
  ``execution`` of its ``started`` note): proof that the execution a note names is playing, so
  a ``started`` note nobody plays changes nothing (docs/fleet.md);
* ``tourney:run:<run>:verify``: hash match id -> the accepted attempt the coordinator wants
  replayed on a second worker (``timing.verify_sample``); a verification task for any other
  is skipped; ``tourney:run:<run>:vhb:<match>:<attempt>``: its heartbeat while one plays it;
* ``tourney:worker:<organiser key id>:<name>``: a worker's presence (TTL), value = its
  concurrency, one key per organiser it serves: a coordinator counts and names only the
  workers of its own organiser (``worker_pattern``), never another's on the same broker;
* ``tourney:share:<organiser key id>:<run>``: a live run's signed ``RunShare`` (its priority
  and how much it would queue), rewritten every second with a short TTL: the runs of one
  organiser share its workers by them (``runner.domain.fair_share``);
* ``tourney:quarantine:<worker key id>``: a notice signed by the organiser that the
  worker holding that key must stop taking work (revoked: every run of the organiser);
* ``tourney:run:<run>:quarantine:<worker key id>``: the same for one run (a run's
  quarantine): the worker passes that run's tasks on and serves the others.
"""

from __future__ import annotations

#: the prefix of every organiser's queue (``queue_for``)
QUEUE_PREFIX = "tourney"


def queue_for(organiser_key_id: str) -> str:
    """The queue an organiser's tasks go to (its key's id: public, and unique per organiser)."""
    return f"{QUEUE_PREFIX}.{organiser_key_id}"


#: the task a match is played by (``workers.tasks``)
TASK_NAME = "tourney.play_match"
#: when the Redis transport hands an unacked message out again (see ``workers.celery_app``)
VISIBILITY_TIMEOUT_S = 12 * 3600
#: how long a quarantine notice stands (a fixed machine is restarted under a new name, or after this)
QUARANTINE_TTL_S = 24 * 3600


class KEYS:
    """Redis key names shared by the coordinator and the workers."""

    @staticmethod
    def artifact(digest: str) -> str:
        return f"tourney:artifact:{digest}"

    @staticmethod
    def artifact_sig(digest: str, key_id: str) -> str:
        """An organiser key's signature of an artifact (per key: other organisers share the broker)."""
        return f"tourney:artifact:{digest}:sig:{key_id}"

    @staticmethod
    def inbox(run: str) -> str:
        return f"tourney:run:{run}:inbox"

    @staticmethod
    def wake(run: str) -> str:
        """The coordinator side's own nudge to its waiting ``poll`` (``Dispatcher.wake``): new
        work to send; read and written by that side only, a worker never sees it."""
        return f"tourney:run:{run}:wake"

    @staticmethod
    def alive(run: str) -> str:
        """Set by the coordinator, never expires: its absence means the broker lost its data."""
        return f"tourney:run:{run}:alive"

    @staticmethod
    def current(run: str) -> str:
        return f"tourney:run:{run}:current"

    @staticmethod
    def heartbeat(run: str, match_id: str, attempt: int) -> str:
        return f"tourney:run:{run}:hb:{match_id}:{attempt}"

    @staticmethod
    def execution_heartbeat(run: str, execution: str) -> str:
        """The heartbeat of one task execution (its ``started`` note's ``execution``)."""
        return f"tourney:run:{run}:hbx:{execution}"

    @staticmethod
    def live(run: str) -> str:
        """Hash match id -> signed ``LiveMatch``: what workers are doing now (display only)."""
        return f"tourney:run:{run}:live"

    @staticmethod
    def verify(run: str) -> str:
        """Hash match id -> the attempt a verification replay is wanted for (docs/fleet.md)."""
        return f"tourney:run:{run}:verify"

    @staticmethod
    def verify_heartbeat(run: str, match_id: str, attempt: int) -> str:
        return f"tourney:run:{run}:vhb:{match_id}:{attempt}"

    @staticmethod
    def worker(organiser_key_id: str, name: str) -> str:
        """A worker's presence among one organiser's workers (one key per organiser it serves)."""
        return f"tourney:worker:{organiser_key_id}:{name}"

    @staticmethod
    def worker_pattern(organiser_key_id: str) -> str:
        """The presence keys of one organiser's workers (``SCAN`` pattern)."""
        return f"tourney:worker:{organiser_key_id}:*"

    @staticmethod
    def quarantine(worker_key_id: str) -> str:
        """Set (signed) by a coordinator: the worker holding that key stops consuming
        (``orchestration.workers_health``)."""
        return f"tourney:quarantine:{worker_key_id}"

    @staticmethod
    def run_quarantine(run: str, worker_key_id: str) -> str:
        """Set (signed) by a run's coordinator: the worker holding that key takes no more of
        this run's tasks (it passes them on); other runs of the organiser are not concerned."""
        return f"tourney:run:{run}:quarantine:{worker_key_id}"

    @staticmethod
    def share(organiser_key_id: str, run: str) -> str:
        """A live run's signed ``RunShare`` among its organiser's runs (TTL: ``SHARE_TTL_S``)."""
        return f"tourney:share:{organiser_key_id}:{run}"

    @staticmethod
    def share_pattern(organiser_key_id: str) -> str:
        """The share records of one organiser's live runs (``SCAN`` pattern)."""
        return f"tourney:share:{organiser_key_id}:*"

    ALIVE_PATTERN = "tourney:run:*:alive"
