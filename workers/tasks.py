"""The ``play_match`` task: a JSON envelope in, notes to the run's inbox out.

The envelope is a ``runner.domain.wire.TaskEnvelope``, signed, as a string; the notes are
``Started``, ``Finished`` and ``Skipped`` from the same module, signed and pushed as JSON.

Paths never travel: a worker shares no file system with the coordinator.
Entries come as artifacts by digest from Redis (``tourney:artifact:<digest>``),
built once per digest in this machine's cache (``workers.executor.work_dir``).

What the task does, in order:

1. skip unless the run is alive (its coordinator's ``alive`` key: one that stopped
   withdrew it) and still wants this attempt (``current`` hash), so a redelivered,
   superseded or orphaned message costs nothing;
2. ``RPUSH`` a ``started`` note and keep a heartbeat key alive while playing
   and until the result is delivered (step 1, this note, the first beat and the
   first live record are one Lua script, one round trip: ``_BEGIN_LUA``; the
   beats and live record after it come from one thread per pool process,
   ``workers.beacon``, not from threads started per match);
3. play the match (``workers.executor.execute_match``, which never raises:
   a failure of this machine (artifact, sandbox) becomes a result whose games
   carry a ``system_error`` verdict, which the coordinator retries elsewhere);
4. ``RPUSH`` the ``result`` note, retrying through a Redis outage.

The task's own return value is a small status dict; nothing reads it.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import redis
from celery.signals import worker_init

from runner.domain.fleet import WorkerKey, load_worker_key
from runner.domain.match_values import MatchResult, MatchSpec
from runner.domain.redaction import register_broker_url
from runner.domain.signing import Keyring, SignatureError, open_message, signed
from runner.domain.wire import (
    Finished,
    Note,
    QuarantineNotice,
    Skipped,
    Started,
    TaskEnvelope,
    WireError,
    task_digest,
)
from runner.errors import BrokerRefused, BrokerWireError
from workers.artifact_fetch import artifact_fetcher
from workers.broker_wire import TaskWire, wire_errors
from workers.celery_app import KEYS, TASK_NAME, app
from workers.executor import execute_match, work_dir
from workers.executor import machine_error_result as machine_error_result
from workers.passed_on import PassedOn
from workers.policy import POLICY_ENV, CeilingRefused, PolicyRefused, WorkerPolicy
from workers.warm import preload_playing, switches

if TYPE_CHECKING:
    from workers.match import MatchObserver

log = logging.getLogger("tourney.worker")

#: how long a finished match's result is retried against an unreachable Redis
RESULT_PUSH_PATIENCE_S = 600.0
#: an inbox nobody reads expires (the coordinator drains it constantly while it runs)
INBOX_TTL_S = 7 * 24 * 3600

_client: tuple[int, str, redis.Redis] | None = None


def _redis() -> redis.Redis:
    """This process's client for the broker's Redis (one per pool process)."""
    global _client
    url = _broker_url()
    if _client is None or _client[0] != os.getpid() or _client[1] != url:
        register_broker_url(url)  # however this process was started (runner.domain.redaction)
        _client = (
            os.getpid(),
            url,
            redis.Redis.from_url(
                url, socket_timeout=10.0, socket_connect_timeout=5.0, health_check_interval=10
            ),
        )
    return _client[2]


def _broker_url() -> str:
    return str(app.conf.broker_url or os.environ.get("TOURNEY_BROKER_URL", ""))


_key: WorkerKey | None = None


def worker_key() -> WorkerKey:
    """This worker's key file (``tourney worker`` checked at start that there is one)."""
    global _key
    if _key is None:
        _key = load_worker_key()
    return _key


def worker_name() -> str:
    return os.environ.get("TOURNEY_WORKER_NAME") or f"{socket.gethostname()}-{os.getpid()}"


#: how long a worker holds a task it refuses before handing it back: another worker, or a
#: later one, takes it meanwhile instead of this one taking it again at once
REFUSE_PAUSE_S = 2.0
#: the tasks this process passed on: one it takes back goes to the queue's tail
_passed_on = PassedOn()


def _push(
    r: redis.Redis,
    run: str,
    note: Note,
    patience_s: float,
    also: Callable[[redis.client.Pipeline], object] | None = None,
) -> bool:
    """``RPUSH`` a note, retrying while Redis is unreachable (bounded by ``patience_s``);
    ``also`` adds commands to the same transaction (one round trip, applied together)."""
    deadline = time.monotonic() + patience_s
    blob = signed(note, worker_key().key)  # encoded once (its signature covers these bytes)
    pause = 0.2
    while True:
        try:
            with wire_errors(), r.pipeline(transaction=True) as pipe:
                pipe.rpush(KEYS.inbox(run), blob)
                # a run that is over (or whose coordinator never comes back) leaves nothing for good
                pipe.expire(KEYS.inbox(run), INBOX_TTL_S)
                if also is not None:
                    also(pipe)
                pipe.execute()
            return True
        except BrokerWireError as e:
            if time.monotonic() > deadline:
                log.error("could not deliver %s note for %s: %s", note.kind, note.match_id, e)
                return False
            time.sleep(pause)
            pause = min(pause * 2, 5.0)


def quarantine_notice(r: redis.Redis, wk: WorkerKey) -> str | None:
    """The reason this worker's key was revoked by its organiser (for every run), if it was."""
    try:
        with wire_errors():
            raw = r.get(KEYS.quarantine(wk.key.key_id))
    except BrokerWireError:
        return None
    return _quarantine_reason(raw, wk)


def _quarantine_reason(raw: object, wk: WorkerKey, run: str | None = None) -> str | None:
    """The reason in a stored quarantine notice ``raw``, if it names this worker's key and an
    organiser it serves signed it; ``run``: a run's own notice, which counts only for the run it
    names (a genuine notice copied under another run's key stops nothing there)."""
    if not isinstance(raw, (bytes, str)):
        return None
    try:
        notice, _ = open_message(raw, QuarantineNotice, wk.organiser_ring())
    except (SignatureError, WireError):
        log.warning("ignoring a quarantine notice for %s not signed by its organiser", wk.name)
        return None
    if notice.worker_key != wk.key.key_id or (run is not None and notice.run != run):
        log.warning("ignoring a quarantine notice for another key or run (%s)", notice.run)
        return None
    return notice.reason


def _notices_reason(notices: tuple[object, object], wk: WorkerKey, run: str) -> str | None:
    """Why this worker must not play ``run``'s task: its revocation (every run) or that run's
    quarantine. Each notice is judged on its own: a forged one under one key never hides a
    genuine one under the other."""
    revoked, run_notice = notices
    return _quarantine_reason(revoked, wk) or _quarantine_reason(run_notice, wk, run)


def play(
    spec: MatchSpec,
    fetch: Callable[[str], bytes],
    worker: str,
    cache_root: Path,
    observer: MatchObserver | None = None,
) -> MatchResult:
    """Build what the match needs and play it; a failure of this machine becomes ``system_error``."""
    return execute_match(spec, fetch, cache_root, worker=worker, observer=observer)


#: the start of a match in one round trip: the quarantine and attempt checks and, only when
#: both let the match be played, the ``started`` note, the first heartbeat and the first live
#: record, and the execution's own heartbeat (``KEYS.execution_heartbeat``: the proof that the
#: execution the note names is playing; a match is short: every round trip shows in the run's wall). Returns
#: ``[revocation notice, run's quarantine notice, wanted attempt, 1 if started]``: both notices,
#: each judged on its own by ``execute`` (a forged one must not hide a genuine one); a notice,
#: even one that is not genuine, starts nothing here: ``execute`` starts the match itself then
_BEGIN_LUA = """
local revoked = redis.call('GET', KEYS[1])
local quarantined = redis.call('GET', KEYS[7])
if redis.call('EXISTS', KEYS[8]) == 0 then
  return {revoked, quarantined, false, 0}
end
local wanted = redis.call('HGET', KEYS[2], ARGV[1])
if revoked or quarantined or wanted ~= ARGV[2] then
  return {revoked, quarantined, wanted, 0}
end
redis.call('RPUSH', KEYS[3], ARGV[3])
redis.call('EXPIRE', KEYS[3], ARGV[4])
redis.call('SET', KEYS[4], ARGV[5], 'PX', ARGV[6])
redis.call('SET', KEYS[6], ARGV[5], 'PX', ARGV[6])
redis.call('HSET', KEYS[5], ARGV[1], ARGV[7])
redis.call('EXPIRE', KEYS[5], ARGV[8])
return {false, false, wanted, 1}
"""

_begin_script: tuple[redis.Redis, Any] | None = None


def _begin(
    r: redis.Redis, run: str, spec_id: str, attempt: int, worker: str, worker_key_id: str, started: bytes,
    hb_ttl_ms: int, live: bytes, *, execution_key: str, verify: bool = False,
) -> tuple[tuple[object, object], bytes | None, bool, bool]:  # fmt: skip
    """((revocation notice, run's quarantine notice), wanted attempt, checked, started):
    ``_BEGIN_LUA`` run, or, where the broker refuses scripts, the checks alone (``started``
    False: the caller sends it).
    ``verify``: the attempt is checked against the run's verification hash, not ``current``."""
    global _begin_script
    from workers.live import LIVE_TTL_S

    wanted_key = KEYS.verify(run) if verify else KEYS.current(run)

    if switches().begin_script:
        try:
            if _begin_script is None or _begin_script[0] is not r:
                _begin_script = (r, r.register_script(_BEGIN_LUA))
            keys = [
                KEYS.quarantine(worker_key_id),
                wanted_key,
                KEYS.inbox(run),
                (KEYS.verify_heartbeat if verify else KEYS.heartbeat)(run, spec_id, attempt),
                KEYS.live(run),
                execution_key,
                KEYS.run_quarantine(run, worker_key_id),
                KEYS.alive(run),  # a run whose coordinator stopped wants nothing played
            ]
            args: list[bytes | str | int] = [
                spec_id, str(attempt), started, INBOX_TTL_S, worker, hb_ttl_ms, live, LIVE_TTL_S,
            ]  # fmt: skip
            with wire_errors():
                revoked, quarantined, wanted, began = _begin_script[1](keys=keys, args=args)
            return (revoked, quarantined), wanted if isinstance(wanted, bytes) else None, True, bool(began)
        except BrokerRefused as e:  # scripting disabled (an ACL): the plain way
            log.debug("begin script refused (%s): checking with a pipeline", e)
        except BrokerWireError:
            pass  # the pipeline below says the same, or plays unchecked
    try:
        with wire_errors(), r.pipeline(transaction=False) as pipe:
            pipe.get(KEYS.quarantine(worker_key_id))
            pipe.hget(wanted_key, spec_id)
            pipe.get(KEYS.run_quarantine(run, worker_key_id))
            pipe.exists(KEYS.alive(run))
            revoked, wanted, quarantined, alive = pipe.execute()
            if not alive:
                wanted = None
    except BrokerWireError:
        log.warning("cannot check attempt of %s; playing it", spec_id)
        return (None, None), None, False, False
    return (revoked, quarantined), wanted if isinstance(wanted, bytes) else None, True, False


_policy: tuple[str | None, WorkerPolicy] | None = None


def worker_policy() -> WorkerPolicy:
    """``WorkerPolicy.from_env()``, parsed again only when the environment's value changes."""
    global _policy
    raw = os.environ.get(POLICY_ENV)
    if _policy is None or _policy[0] != raw:
        _policy = (raw, WorkerPolicy.from_env())
    return _policy[1]


def execute(signed_envelope: str) -> dict[str, Any]:
    """The task body (callable without Celery, for tests).

    An envelope that no organiser this worker serves signed is dropped unplayed: it came
    through that organiser's own queue (``workers.broker_keys.queue_for``), so it is a
    forgery by someone who can reach Redis (docs/fleet.md)."""
    wk = worker_key()
    organisers: Keyring = wk.organiser_ring()
    try:
        if not isinstance(signed_envelope, str):  # version 1 sent a JSON object
            raise WireError("an envelope of version 1 (an older coordinator); upgrade it")
        task, organiser_id = open_message(signed_envelope, TaskEnvelope, organisers)
    except (SignatureError, WireError) as e:
        log.error("REFUSED a task that is not ours (%s): %s", e, _claimed(signed_envelope))
        return {"status": "refused", "reason": str(e)}
    run, attempt, spec = task.run, task.attempt, task.spec
    worker = worker_name()
    r = _redis()
    if wk.name in (task.copy_of, task.verify_of):
        # a second copy of a match this worker (this key) is playing, or a replay of one it
        # played (a verification is worth something only from another machine): another worker's
        return _pass_on_copy(r, signed_envelope, task, organiser_id)
    verify = bool(task.verify_of)
    if worker in task.refused_by:
        # this worker's ceilings refused the match before: another connected worker gets it
        # (the coordinator stops once every one of them has refused it: docs/fleet.md)
        return _pass_on_copy(r, signed_envelope, task, organiser_id)
    try:
        worker_policy().limits_for(spec.limits)
    except CeilingRefused as e:
        if verify:  # a replay is nobody's attempt: another worker may serve it, or it is given up
            return _pass_on_copy(r, signed_envelope, task, organiser_id)
        # a ceiling refuses, never rewrites: the task goes back, played elsewhere at its own
        # limits; held a moment first, so that this worker does not take it straight back
        time.sleep(REFUSE_PAUSE_S)
        _push(r, run, Skipped(spec.match_id, attempt, worker, str(e)), 60.0)
        log.warning("handed back %s attempt %d: %s", spec.match_id, attempt, e)
        return {"status": "refused", "match_id": spec.match_id, "attempt": attempt, "reason": str(e)}
    key = wk.key
    status: dict[str, Any] = {"match_id": spec.match_id, "attempt": attempt, "worker": worker}
    # what this match is doing now (builds, game, move count), for the live progress only;
    # imported here, like the referee (workers.executor): Celery loads this module everywhere
    from workers.beacon import LiveTarget, beacon
    from workers.live import LiveState

    live = LiveState(spec, attempt, worker)
    live_target = LiveTarget(KEYS.live(run), live, key)
    version, _, live_record = live_target.record()
    # names this execution: a second one of the same attempt means the broker redelivered it
    # bound to this run and this very task (docs/fleet.md): it proves nothing for any other
    started = Started(
        spec.match_id, attempt, worker, execution=uuid.uuid4().hex, ts=time.time(), copy=bool(task.copy_of),
        verify=verify, run=run, task=task_digest(signed_envelope),
    )  # fmt: skip
    exec_key = KEYS.execution_heartbeat(run, started.execution)
    # a verification replay has its own wanted-hash and heartbeat: the match itself is done
    hb_key = (KEYS.verify_heartbeat if verify else KEYS.heartbeat)(run, spec.match_id, attempt)
    hb_ttl_ms = max(1, int(task.heartbeat_ttl_s * 1000))
    notices, wanted, checked, began = _begin(
        r,
        run,
        spec.match_id,
        attempt,
        worker,
        key.key_id,
        signed(started, key),
        hb_ttl_ms,
        live_record,
        execution_key=exec_key,
        verify=verify,
    )
    quarantined = _notices_reason(notices, wk, run)
    if quarantined is not None:
        # this key's notes count for nothing in that run: the task itself goes back on the queue,
        # unplayed and unchanged, for a worker still trusted (the run sees nothing of it)
        log.error("quarantined (%s): passing on %s attempt %d", quarantined, spec.match_id, attempt)
        _pass_on_copy(r, signed_envelope, task, organiser_id)
        return {"status": "quarantined", **status}
    if checked and (wanted is None or int(wanted) != attempt):
        if verify:  # a verification the run no longer wants (done, given up): nothing to hand back
            return {"status": "skipped", **status}
        _push(r, run, Skipped(spec.match_id, attempt, worker), 60.0)
        log.info("skipped %s attempt %d (run wants %s)", spec.match_id, attempt, wanted)
        return {"status": "skipped", **status}
    if began:
        live_target.published = version
    else:  # a notice not ours stood in the way, or no script: started the plain way, its
        # execution's heartbeat in the same transaction (the note is believed only with it)
        _push(r, run, started, 60.0, also=lambda pipe: pipe.set(exec_key, worker, px=hb_ttl_ms))
    t0 = time.monotonic()
    pushed = tidy = False
    try:
        with beacon().watch(
            r, hb_key, worker, task.heartbeat_s, task.heartbeat_ttl_s, live_target, beaten=began,
            also_key=exec_key,
        ) as watch:  # fmt: skip
            try:
                mine = worker_policy().apply(spec, worker)
            except PolicyRefused as e:
                log.error("%s (match %s)", e, spec.match_id)
                result = machine_error_result(spec, str(e), worker)
            else:
                fetch = artifact_fetcher(r, organisers[organiser_id])
                result = play(mine, fetch, worker, work_dir() / "artifacts", live)
            # still beating while the result is delivered: if Redis is away (or restarted empty)
            # the push waits for it, up to seconds between tries, and a silent attempt would be
            # charged a lease expiry meanwhile. The heartbeat key and the live record go in the
            # very transaction that delivers the result; the live writes stop first (they only
            # show progress), the beats after, and a beat that slipped in after that transaction
            # (it wrote the key again) is undone below
            watch.stop_live()
            beats = watch.beats

            def _tidy(pipe: redis.client.Pipeline) -> None:
                pipe.delete(hb_key, exec_key)
                pipe.hdel(KEYS.live(run), spec.match_id)

            pushed = _push(
                r,
                run,
                Finished(spec.match_id, attempt, result, worker, run, verify=verify),
                RESULT_PUSH_PATIENCE_S,
                also=_tidy,
            )
            tidy = watch.end() == beats and pushed
    finally:
        if not tidy:  # a late beat, an undelivered result, or a failure of this code
            with contextlib.suppress(BrokerWireError), wire_errors(), r.pipeline(transaction=False) as pipe:
                pipe.delete(hb_key, exec_key)
                if not pushed:
                    pipe.hdel(KEYS.live(run), spec.match_id)
                pipe.execute()
    log.info("played %s attempt %d in %.1fs", spec.match_id, attempt, time.monotonic() - t0)
    return {"status": "done" if pushed else "undelivered", **status}


def _claimed(signed_envelope: object) -> str:
    """What a refused envelope says it is (run, match), for the log: decoded only to be named."""
    try:
        d: Any = json.loads(signed_envelope) if isinstance(signed_envelope, str) else signed_envelope
        spec = d.get("spec")
        return f"run {d.get('run')!r} match {spec.get('match_id') if isinstance(spec, dict) else None!r}"
    except (ValueError, TypeError, AttributeError):
        return "unreadable"


def _pass_on_copy(
    r: redis.Redis, signed_envelope: str, task: TaskEnvelope, organiser_id: str
) -> dict[str, Any]:
    """Put a straggler's second copy (or a verification replay, or a task of a run that
    quarantined this worker) back on its queue for another worker, only while the run still
    wants it: at the head of the queue the first time (the next task any worker takes;
    Celery's Redis transport pushes on the left and pops on the right), at the tail once this
    process took it back (``workers.passed_on``), then this worker's slot is held for a pause,
    so that it does not take the task straight back."""
    from workers.broker_keys import queue_for

    match_id = task.spec.match_id
    wanted = KEYS.verify(task.run) if task.verify_of else KEYS.current(task.run)
    with contextlib.suppress(BrokerWireError), wire_errors():
        if r.hget(wanted, match_id) == str(task.attempt).encode():
            what = "verify" if task.verify_of else "copy" if task.copy_of else ""
            suffix = f".{what}" if what else ""
            TaskWire(r, _broker_url()).send(
                queue_for(organiser_id), f"{task.run}.{match_id}.{task.attempt}{suffix}", [signed_envelope],
                argsrepr=f"[match {match_id} attempt {task.attempt}{' ' + what if what else ''}]",
                at_head=_passed_on.at_head(task_digest(signed_envelope)),
            )  # fmt: skip
    time.sleep(REFUSE_PAUSE_S)
    log.info(
        "passed on the %s of %s attempt %d (for another worker)",
        "verification" if task.verify_of else "second copy" if task.copy_of else "task",
        match_id,
        task.attempt,
    )
    return {"status": "passed on", "match_id": match_id, "attempt": task.attempt}


def _preload_for_pool(**_: object) -> None:
    """Before the pool forks: what playing a match imports (``workers.warm.preload_playing``)."""
    preload_playing()


# in the main process: Celery imports this module before it sends ``worker_init``
worker_init.connect(_preload_for_pool, weak=False)


def _play_match_task(envelope: str) -> dict[str, Any]:
    return execute(envelope)


# registered by call, not as a decorator: Celery's decorator is untyped
play_match_task: Any = app.task(name=TASK_NAME, acks_late=True, reject_on_worker_lost=True)(_play_match_task)
