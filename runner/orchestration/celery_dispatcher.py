"""``CeleryDispatcher``: matches as Celery tasks over a Redis broker, notes back through the
run's inbox (docs/scale-out.md).

It sends ``tourney.play_match`` tasks to its organiser's queue (Celery's message, by default
written without Celery: ``workers.broker_wire``, through ``runner.orchestration.workers_gate``) and
reads the workers' notes from the run's inbox list (``workers.broker_keys``), each attributed
to the enrolled worker whose key signed it. A broker that stops answering is waited for up to
``PATIENCE_S`` (then ``BrokerDown``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import logging
import time
from pathlib import Path
from typing import Any

import redis

from runner.domain.fair_share import Sharing
from runner.domain.fleet import RegistryView
from runner.domain.match_values import MatchSpec
from runner.domain.signing import (
    SignatureError,
    SigningKey,
    open_message,
    open_note,
    signed,
)
from runner.domain.wire import (
    LiveMatch,
    Note,
    QuarantineNotice,
    TaskEnvelope,
    WireError,
)
from runner.errors import BrokerWireError
from runner.orchestration.artifact_publish import publish_artifact
from runner.orchestration.broker_health import BrokerHealth
from runner.orchestration.dispatcher import (
    DispatchObserver,
    InboxNote,
    Lifted,
    Revoked,
    Timing,
)
from runner.orchestration.note_binding import SentTasks, attributed, rejected_note
from runner.orchestration.pool import OrganiserPool
from runner.orchestration.workers_gate import KEYS, QUARANTINE_TTL_S, TaskWire, queue_for, wire_errors

# the run's log names each line's logger: the dispatcher's lines keep the name they had
log = logging.getLogger("tourney.dispatch")

#: the live hash (what workers are doing now) is read at most this often
LIVE_READ_EVERY_S = 0.5
#: how long an unread wake is kept (a poll reads it within its timeout, at most 5 s)
WAKE_TTL_S = 60


class CeleryDispatcher(BrokerHealth):
    """Sends matches as Celery tasks to its organiser's queue; reads notes from the run's
    inbox in Redis, each attributed to the enrolled worker whose key signed it."""

    def __init__(
        self,
        broker_url: str,
        run_id: str,
        timing: Timing,
        key: SigningKey,
        registry: RegistryView,
        *,
        priority: int = 0,
    ) -> None:
        #: the organiser's key: signs tasks, artifacts and quarantine notices
        self.key = key
        self.registry = registry
        self.queue = queue_for(key.key_id)
        self.url = broker_url
        self.run_id = run_id
        self.timing = timing
        self.keys = KEYS
        self.redis = redis.Redis.from_url(broker_url, socket_timeout=10.0, socket_connect_timeout=5.0)
        BrokerHealth.__init__(self, self.redis, broker_url)
        #: how tasks go onto the broker (the hand-built message or Celery's producer: ``workers.warm``)
        self.wire = TaskWire(self.redis, broker_url)
        self._published: set[str] = set()
        #: the organiser's workers and the live runs sharing them (``tourney run --priority``)
        self.pool = OrganiserPool(self.redis, key, run_id, priority=priority)
        self._live_cache: tuple[float, list[LiveMatch]] = (float("-inf"), [])
        #: matches forgotten since the last poll: their ``current`` entries go with the next one
        self._to_forget: set[str] = set()
        #: revocations read from the registry, not yet handed to the coordinator
        self._revocations: list[Revoked | Lifted] = []
        #: the envelopes sent: a ``started`` note must answer one of them
        self._sent = SentTasks(run_id)
        self._unread_at_check: set[str] = set()  # heartbeats answered "cannot tell yet" (_beating)

    def observe(self, observer: DispatchObserver) -> None:
        self.on_wait = observer.waiting  # no match plays in this process: ``playing`` is not called

    @property
    def results_name_their_run(self) -> bool:
        return True  # from workers anywhere: a result for another run is refused (docs/fleet.md)

    # artifacts --------------------------------------------------------------------
    def publish_artifacts(self, blobs: dict[str, Path]) -> None:
        """Make sure every artifact (digest -> packed file) is in Redis (cheap when it is)."""
        for digest, path in blobs.items():
            while True:
                try:
                    with wire_errors():
                        publish_artifact(self.redis, self.key, digest, path)
                    self._ok()
                    break
                except BrokerWireError as e:
                    self._failed(e)
                    self._wait(1.0)

    # dispatching ------------------------------------------------------------------
    def envelope(self, spec: MatchSpec, attempt: int) -> TaskEnvelope:
        return TaskEnvelope(
            run=self.run_id,
            attempt=attempt,
            spec=spec,
            heartbeat_s=self.timing.heartbeat_s,
            heartbeat_ttl_s=self.timing.heartbeat_ttl_s,
        )

    def submit(self, spec: MatchSpec, attempt: int, *, refused_by: tuple[str, ...] = ()) -> None:
        """Want ``attempt`` of the match and queue its task, in one round trip (the ``current``
        entry first: Redis runs a connection's commands in order, so no worker can take the
        task before it). The message is Celery's own (``workers.broker_wire``)."""
        self._to_forget.discard(spec.match_id)  # wanted again: a forget not yet sent must not undo it
        envelope = dataclasses.replace(self.envelope(spec, attempt), refused_by=refused_by)
        args = [signed(envelope, self.key).decode()]
        self._sent.sent(spec.match_id, attempt, args[0])
        current = self.keys.current(self.run_id)
        while True:
            try:
                self.wire.send(
                    self.queue,
                    f"{self.run_id}.{spec.match_id}.{attempt}",
                    args,
                    argsrepr=f"[match {spec.match_id} attempt {attempt}]",
                    first=lambda pipe: pipe.hset(current, spec.match_id, str(attempt)),
                )
                self._ok()
                return
            except BrokerWireError as e:
                # sent again: should the first one have arrived, the attempt is delivered
                # twice, which the workers' attempt check and the store already absorb
                self._failed(e)
                self._wait(1.0)

    def submit_copy(self, spec: MatchSpec, attempt: int, avoid: str, *, verification: bool = False) -> None:
        """Queue a second copy of ``attempt`` (a straggler) for a worker other than ``avoid``
        (the enrolled name of the one playing it: that worker passes the copy on).
        ``verification``: a replay of an accepted attempt (``timing.verify_sample``), wanted in
        the run's verification hash first (no worker can take the task before it), never official."""
        what = "verify" if verification else "copy"
        envelope = self.envelope(spec, attempt)
        if verification:
            envelope = dataclasses.replace(envelope, verify_of=avoid)
        else:
            envelope = dataclasses.replace(envelope, copy_of=avoid)
        verify_key = self.keys.verify(self.run_id)
        body = signed(envelope, self.key).decode()
        if not verification:
            self._sent.copy_sent(spec.match_id, attempt, body)
        with contextlib.suppress(BrokerWireError):
            self.wire.send(
                self.queue,
                f"{self.run_id}.{spec.match_id}.{attempt}.{what}",
                [body],
                argsrepr=f"[match {spec.match_id} attempt {attempt} {what}]",
                first=(lambda pipe: pipe.hset(verify_key, spec.match_id, str(attempt)))
                if verification
                else None,
            )

    @property
    def replays_elsewhere(self) -> bool:
        return True

    @property
    def fleet_dir(self) -> Path | None:
        return self.registry.path.parent

    def verification_alive(self, match_id: str, attempt: int) -> bool | None:
        """Whether a worker is playing the verification replay of the attempt (None: cannot tell)."""
        try:
            return self._beating(self.keys.verify_heartbeat(self.run_id, match_id, attempt))
        except BrokerWireError:
            return None

    def _beating(self, heartbeat: str) -> bool | None:
        """Whether ``heartbeat`` lives; None the first time it is gone while notes wait unread (a
        worker removes it in the transaction delivering its result: read them first). Once per
        heartbeat: the coordinator polls before it asks again, and a flood must not stop leases."""
        with wire_errors(), self.redis.pipeline(transaction=True) as pipe:  # both of one moment
            pipe.exists(heartbeat)
            pipe.llen(self.keys.inbox(self.run_id))
            beating, waiting = pipe.execute()
        if not beating and waiting and heartbeat not in self._unread_at_check:
            self._unread_at_check.add(heartbeat)
            return None
        self._unread_at_check.discard(heartbeat)
        return bool(beating)

    def forget_verification(self, match_id: str) -> None:
        """Workers skip the verification replay of this match from now on (done or given up)."""
        with contextlib.suppress(BrokerWireError), wire_errors():
            self.redis.hdel(self.keys.verify(self.run_id), match_id)

    def want(self, match_id: str, attempt: int) -> None:
        """Record in the broker that ``attempt`` is the one the run wants (``current`` hash)."""
        self._to_forget.discard(match_id)
        with contextlib.suppress(BrokerWireError), wire_errors():
            self.redis.hset(self.keys.current(self.run_id), match_id, str(attempt))

    def mark_alive(self) -> None:
        """Set the sentinel whose disappearance tells that the broker lost its data."""
        try:
            # its value names the organiser: a starting worker counts the runs it can serve
            with wire_errors():
                self.redis.set(self.keys.alive(self.run_id), self.key.key_id)
            self._ok()
        except BrokerWireError as e:
            self._failed(e)

    def lost_its_data(self) -> bool:
        """True when the broker answers but the sentinel is gone (restarted empty, flushed)."""
        try:
            with wire_errors():
                gone = not self.redis.exists(self.keys.alive(self.run_id))
            self._ok()
            return gone
        except BrokerWireError as e:
            self._failed(e)
            return False

    def forget(self, match_id: str) -> None:
        """Workers skip any attempt of this match from now on (``current`` hash). Sent with the
        next ``poll`` (the same round trip: the coordinator forgets a match per result, and polls
        right after), or by ``close``; ``submit``/``want`` of the match before that cancel it."""
        self._to_forget.add(match_id)
        self._sent.forget(match_id)

    def _flush_forgotten(self) -> None:
        forget = sorted(self._to_forget)
        if forget:
            with contextlib.suppress(BrokerWireError), wire_errors():
                self.redis.hdel(self.keys.current(self.run_id), *forget)
                self._to_forget.difference_update(forget)

    def quarantine(self, worker: str, reason: str, *, every_run: bool = False) -> None:
        """Tell the worker enrolled as ``worker`` (signed, so nobody else can) to take no more of
        this run's tasks, or (``every_run``: revoked) of any run of the organiser; the notice
        names its key, not its name."""
        key_ids = [k for k, m in self.registry.by_key.items() if m.name == worker]
        for key_id in key_ids:
            notice = signed(QuarantineNotice(worker, key_id, self.run_id, reason), self.key)
            where = (
                self.keys.quarantine(key_id) if every_run else self.keys.run_quarantine(self.run_id, key_id)
            )
            with contextlib.suppress(BrokerWireError), wire_errors():
                self.redis.set(where, notice, ex=QUARANTINE_TTL_S)

    def lift_quarantine(self, worker: str) -> None:
        """The run's notice for ``worker`` goes: it takes this run's tasks again."""
        for key_id in [k for k, m in self.registry.by_key.items() if m.name == worker]:
            with contextlib.suppress(BrokerWireError), wire_errors():
                self.redis.delete(self.keys.run_quarantine(self.run_id, key_id))

    def forget_run(self) -> None:
        """The run is over: drop its keys from the broker (artifacts stay: other runs share them)."""
        self._to_forget.clear()  # the whole ``current`` hash goes
        with contextlib.suppress(BrokerWireError), wire_errors():
            self.redis.delete(
                self.keys.current(self.run_id),
                self.keys.inbox(self.run_id),
                self.keys.wake(self.run_id),
                self.keys.alive(self.run_id),
                self.keys.live(self.run_id),
                self.keys.verify(self.run_id),
                *(self.keys.run_quarantine(self.run_id, k) for k in self.registry.by_key),
            )

    def wake(self) -> None:
        # a second connection of the pool: the waiting poll holds the first in its BLPOP
        with wire_errors(), self.redis.pipeline(transaction=False) as pipe:
            pipe.rpush(self.keys.wake(self.run_id), b"1")
            pipe.expire(self.keys.wake(self.run_id), WAKE_TTL_S)
            pipe.execute()

    def poll(self, timeout: float) -> list[InboxNote]:
        inbox, wake = self.keys.inbox(self.run_id), self.keys.wake(self.run_id)
        forget = sorted(self._to_forget)
        try:
            # one round trip: the matches forgotten since the last poll, the first note or a
            # wake (waiting for it: Redis runs a connection's commands in order, so the LPOP
            # waits too), whatever else has come by then, and the wakes spent
            with wire_errors(), self.redis.pipeline(transaction=False) as pipe:
                if forget:
                    pipe.hdel(self.keys.current(self.run_id), *forget)
                pipe.blpop([inbox, wake], timeout=min(max(timeout, 0.05), 5.0))
                pipe.lpop(inbox, 200)
                pipe.delete(wake)
                *_, first, more, _spent = pipe.execute()
            self._to_forget.difference_update(forget)
            raw: list[Any] = []
            if first is not None and first[0].decode() == inbox:
                raw.append(first[1])
            if more:
                raw.extend(more)
            self._ok()
        except BrokerWireError as e:
            self._failed(e)
            time.sleep(min(timeout, 1.0))
            return []
        self._read_registry()
        notes: list[InboxNote] = list(self._revocations)
        self._revocations.clear()
        ring = self.registry.keyring()
        for blob in raw:
            try:
                try:
                    # checks the signature over the bytes as sent, then decodes them once
                    note, key_id = open_note(blob, ring)
                except SignatureError as first:
                    if str(first).startswith("signed with another key"):
                        # a worker enrolled a moment ago: its key may be newer than our last read
                        self._read_registry(force=True)
                        ring = self.registry.keyring()
                        with contextlib.suppress(SignatureError):
                            note, key_id = open_note(blob, ring)
                            notes.append(self._sent.bound(attributed(note, self.registry.by_key[key_id])))
                            continue
                    notes.append(rejected_note(blob, str(first)))
                    continue
                notes.append(self._read(note, key_id))
            except (ValueError, WireError, TypeError, AttributeError) as e:
                log.warning("ignoring a malformed note in %s: %s", inbox, e)
        return notes

    def _read_registry(self, *, force: bool = False) -> None:
        """The fleet registry again if its file changed (a revocation counts within a second);
        the revocations it brings go out with the next poll."""
        for m in self.registry.refresh(time.monotonic(), force=force):
            self._revocations.append(Revoked(m.name, m.reason or "no reason given"))
        for m in self.registry.take_lifts():
            self._revocations.append(Lifted(m.name, m.lifted))

    def execution_alive(self, execution: str) -> bool | None:
        """Whether the execution a ``started`` note names still beats (``KEYS.execution_heartbeat``)."""
        if not execution:
            return False
        try:
            with wire_errors():
                return bool(self.redis.exists(self.keys.execution_heartbeat(self.run_id, execution)))
        except BrokerWireError:
            return None

    def _read(self, note: Note, key_id: str) -> InboxNote:
        """A verified note as the coordinator reads it: attributed to its key, and bound."""
        return self._sent.bound(attributed(note, self.registry.by_key[key_id]))

    def alive(self, match_id: str, attempt: int) -> bool | None:
        try:
            alive = self._beating(self.keys.heartbeat(self.run_id, match_id, attempt))
            self._ok()
            return alive
        except BrokerWireError as e:
            self._failed(e)
            return None

    def queue_empty(self) -> bool | None:
        try:
            with wire_errors():
                return int(self.redis.llen(self.queue)) == 0
        except BrokerWireError as e:
            self._failed(e)
            return None

    def present(self) -> set[str] | None:
        """The names of the workers connected now (their presence keys; None: cannot tell)."""
        return self.pool.present()

    def workers(self) -> int:
        return sum(self.processes().values())

    def processes(self) -> dict[str, int]:
        """The organiser's connected worker processes (presence name -> matches at once)."""
        return self.pool.processes()

    def share(self, demand: int, *, local: int = 0) -> Sharing | None:
        """This run's queue slots among the organiser's live runs (``runner.orchestration.pool``)."""
        return self.pool.share(demand, local=local)

    def live(self) -> list[LiveMatch]:
        """The run's live hash, verified (a record no enrolled worker key signed is not shown);
        read at most twice a second."""
        at, cached = self._live_cache
        if time.monotonic() - at < LIVE_READ_EVERY_S:
            return cached
        try:
            with wire_errors():
                raw = self.redis.hgetall(self.keys.live(self.run_id))
        except BrokerWireError:
            return cached
        found = []
        self._read_registry()
        ring = self.registry.keyring()
        for blob in raw.values():
            with contextlib.suppress(SignatureError, WireError, ValueError, TypeError, AttributeError):
                live, key_id = open_message(blob, LiveMatch, ring)
                member = self.registry.by_key[key_id]
                if not member.revoked:
                    name = member.name if live.worker in ("", member.name) else f"{member.name}/{live.worker}"
                    found.append(dataclasses.replace(live, worker=name))
        self._live_cache = (time.monotonic(), found)
        return found

    def withdraw(self) -> None:
        """The coordinator stops (cleanly, finished or not): its ``alive`` key and wanted attempts
        go (a worker checks both before it starts a task) and its queued tasks are taken off the
        queue; a resumed coordinator sets them again and dispatches afresh."""
        self.pool.withdraw()
        with contextlib.suppress(BrokerWireError), wire_errors():
            self.redis.delete(self.keys.alive(self.run_id), self.keys.current(self.run_id))
            for raw in self.redis.lrange(self.queue, 0, -1):
                with contextlib.suppress(ValueError, KeyError, TypeError):  # not a task of ours
                    if str(json.loads(raw)["headers"]["id"]).startswith(f"{self.run_id}."):
                        self.redis.lrem(self.queue, 0, raw)  # type: ignore[arg-type]

    def close(self) -> None:
        self.withdraw()
        self._flush_forgotten()
        self.wire.close()
        with contextlib.suppress(Exception):
            self.redis.close()
