"""How matches reach workers: the ``Dispatcher`` protocol and its two kinds.

The coordinator hands a dispatcher ``(spec, attempt)`` pairs and polls it for
notes (``Started``, ``Finished``, ``Skipped``). It never learns how matches
are run; the store decides what a note means (docs/scale-out.md).

* ``InlineDispatcher`` (``tourney run --inline``, ``tourney rerun``): plays
  each match in this process, one at a time in submission order. Entries
  still go through the artifact cache (packed, digest-checked, built once).
* ``CeleryDispatcher``: sends ``tourney.play_match`` tasks over a Redis
  broker (Celery's message, written without Celery: ``workers.task_message``);
  workers answer through the run's inbox list (``workers.broker_keys``).

``LocalWorkers`` (``runner.orchestration.local_workers``) starts, supervises and stops
the ``tourney worker`` process on this machine (the embedded one-command setup). This
module is the one place where the coordinator side reaches into ``workers`` (docs/architecture.md).
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import logging
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import redis

from runner.domain.fleet import Member, RegistryView
from runner.domain.match_values import MatchSpec
from runner.domain.signing import (
    SignatureError,
    SigningKey,
    artifact_signature,
    open_message,
    open_note,
    signed,
)
from runner.domain.wire import (
    Finished,
    LiveMatch,
    Note,
    QuarantineNotice,
    Skipped,
    Started,
    TaskEnvelope,
    WireError,
)
from runner.errors import InfrastructureFailure, RunHalted
from runner.orchestration import procs as procs_mod
from runner.orchestration.local_workers import LocalWorkers

if TYPE_CHECKING:
    import threading

    from runner.domain.match_values import EntryRef, Limits
    from workers.prebuild import PrebuildPlan as PrebuildPlan
    from workers.prebuild import PrebuildReport as PrebuildReport

log = logging.getLogger("tourney.dispatch")

#: the live hash (what workers are doing now) is read at most this often
LIVE_READ_EVERY_S = 0.5

#: the notes are wire messages (``runner.domain.wire``); re-exported here
__all__ = [
    "BrokerDown",
    "CeleryDispatcher",
    "Dispatcher",
    "Finished",
    "InboxNote",
    "InlineDispatcher",
    "LocalWorkers",
    "NoWorkerCanServe",
    "Rejected",
    "Revoked",
    "Skipped",
    "Started",
    "Timing",
]


@dataclass(frozen=True)
class Rejected:
    """A note no enrolled key signed (forged, altered), or one signed by a revoked key
    (``revoked``: then ``claimed_worker`` is the name the registry gives that key).

    Never on the wire: the dispatcher makes it from what failed to verify."""

    match_id: str
    attempt: int
    claimed_worker: str
    reason: str
    revoked: bool = False
    kind: str = ""


def worker_identity(label: str) -> str:
    """The enrolled worker a note's worker label names (``NAME`` of ``NAME/INSTANCE``: enrolled
    names have no slash, ``runner.domain.fleet``)."""
    return label.split("/", 1)[0]


@dataclass(frozen=True)
class Revoked:
    """The organiser revoked a worker's key since the registry was last read (docs/fleet.md).

    Never on the wire: the dispatcher makes it when the registry file changes."""

    worker: str
    reason: str


#: what the coordinator reads from the inbox: the workers' notes, the ones refused, and
#: revocations read from the fleet registry
InboxNote = Note | Rejected | Revoked


@dataclass(frozen=True)
class Timing:
    """Heartbeats and leases. ``TOURNEY_HEARTBEAT_S`` scales them all (tests use 0.5).

    A worker refreshes its heartbeat every ``heartbeat_s`` with a TTL of 3
    beats; the coordinator's lease on a running match is extended while the
    heartbeat lives and expires ``lease_s`` after it stops; a queued match
    that no worker started while the broker queue stood empty for
    ``lost_s`` is presumed lost.
    """

    heartbeat_s: float = 5.0

    @property
    def heartbeat_ttl_s(self) -> float:
        return 3 * self.heartbeat_s

    @property
    def lease_s(self) -> float:
        return 4 * self.heartbeat_s

    @property
    def lost_s(self) -> float:
        return 6 * self.heartbeat_s

    @property
    def sweep_s(self) -> float:
        return self.heartbeat_s

    @classmethod
    def from_env(cls) -> Timing:
        raw = os.environ.get("TOURNEY_HEARTBEAT_S")
        return cls(float(raw)) if raw else cls()


class Dispatcher(Protocol):
    def submit(self, spec: MatchSpec, attempt: int) -> None:
        """Send one attempt of a match to be played."""

    def poll(self, timeout: float) -> list[InboxNote]:
        """Notes that arrived, waiting up to ``timeout`` seconds for the first."""

    def forget(self, match_id: str) -> None:
        """The run wants no attempt of this match any more (done, failed, obsolete)."""

    def alive(self, match_id: str, attempt: int) -> bool | None:
        """Whether a worker is known to be playing the attempt now (None: cannot tell)."""

    def queue_empty(self) -> bool | None:
        """Whether no submitted task is waiting for a worker (None: cannot tell)."""

    def healthy_for(self) -> float:
        """Seconds since the broker was last found unreachable (inf when it never was)."""

    def down_for(self) -> float | None:
        """Seconds the broker has not answered for (None: it answers)."""

    @property
    def patience_s(self) -> float:
        """How long an unreachable broker is waited for before the run stops (``BrokerDown``)."""

    def workers(self) -> int:
        """Worker processes available (0 when inline)."""

    def live(self) -> list[LiveMatch]:
        """What workers report doing now (builds, game and move counts): display only."""

    def close(self) -> None: ...


# -- inline ---------------------------------------------------------------------
class InlineDispatcher:
    """Plays matches in this process, in submission order (deterministic)."""

    def __init__(self, artifacts_dir: Path, cache_dir: Path, *, worker: str = "inline") -> None:
        self.artifacts_dir = artifacts_dir
        self.cache_dir = cache_dir
        self.worker = worker
        self._queue: collections.deque[tuple[MatchSpec, int]] = collections.deque()
        #: called (cheaply, often) while a match is played in ``poll``: the coordinator redraws
        #: its progress from there, since it gets control back only when the match is over
        self.on_live: Callable[[], None] | None = None
        self._playing: Any = None  # the LiveState of the match being played

    def _fetch(self, digest: str) -> bytes:
        return (self.artifacts_dir / f"{digest}.tar.gz").read_bytes()

    def submit(self, spec: MatchSpec, attempt: int) -> None:
        self._queue.append((spec, attempt))

    def poll(self, timeout: float) -> list[InboxNote]:
        if not self._queue:
            time.sleep(min(timeout, 0.01))
            return []
        spec, attempt = self._queue.popleft()
        from workers.executor import execute_match
        from workers.live import LiveState

        self._playing = LiveState(spec, attempt, self.worker, on_change=self.on_live)
        try:
            result = execute_match(
                spec, self._fetch, self.cache_dir, worker=self.worker, observer=self._playing
            )
        finally:
            self._playing = None
        return [
            Started(spec.match_id, attempt, self.worker),
            Finished(spec.match_id, attempt, result, self.worker),
        ]

    def forget(self, match_id: str) -> None:
        pass  # nothing of it is queued: submit plays in order, poll returns its result

    def alive(self, match_id: str, attempt: int) -> bool | None:
        return True  # nothing is ever lost in-process

    def queue_empty(self) -> bool | None:
        return not self._queue

    def healthy_for(self) -> float:
        return float("inf")

    def down_for(self) -> float | None:
        return None  # no broker

    @property
    def patience_s(self) -> float:
        return 0.0

    def workers(self) -> int:
        return 0

    def live(self) -> list[LiveMatch]:
        playing = self._playing
        return [] if playing is None else [playing.snapshot()[1]]

    def close(self) -> None:
        self._queue.clear()


# -- what the coordinator side asks of this machine's workers side ----------------------
class SandboxUnavailable(InfrastructureFailure):
    """Entries cannot be isolated here with the sandbox asked for (exit 3, as a worker whose
    sandbox fails its health check)."""


def probe_sandbox(kind: str) -> str:
    """Fail early, with the sandbox's own message, if entries cannot be isolated here;
    else say how the sandboxes' memory is charged ("memory: cgroup v1", or why
    it is "memory: rlimit only" and how to fix that)."""
    from workers.sandbox import HostError, host_factory
    from workers.sandbox.cgroups import sandbox_memory_note

    try:
        factory = host_factory(kind)  # the bwrap factory probes the machine; HostError says why not
    except HostError as e:
        raise SandboxUnavailable(f"sandbox {kind} unavailable: {e}") from e
    return sandbox_memory_note() if factory.name == "bwrap" else ""


def plan_local_prebuild(
    refs: list[EntryRef],
    work_dirs: list[Path],
    *,
    requested_sandbox: str,
    limits: Limits,
    allow_unsandboxed: bool,
    exclusive_cores: bool,
) -> PrebuildPlan | None:
    """What the local workers would build, and how (``workers.prebuild.plan_prebuild``),
    under the policy ``tourney worker`` makes of the flags ``LocalWorkers`` starts it with
    (no limit ceilings of its own; its health check is made here instead)."""
    from workers.policy import WorkerPolicy
    from workers.prebuild import plan_prebuild

    return plan_prebuild(
        refs,
        work_dirs,
        requested_sandbox=requested_sandbox,
        limits=limits,
        policy=WorkerPolicy(allow_unsandboxed=allow_unsandboxed),
        exclusive_cores=exclusive_cores,
    )


def run_local_prebuild(
    plan: PrebuildPlan, fetch: Callable[[str], bytes], stop: threading.Event
) -> PrebuildReport:
    """Build ``plan`` into the local workers' caches, as they would (``workers.prebuild``)."""
    from workers.prebuild import prebuild

    return prebuild(plan, fetch, stop)


@dataclass(frozen=True)
class LocalBuild:
    """One entry built here as a worker builds it (``build_here``)."""

    built_dir: Path | None  # the built entry directory; None when its build failed
    failure: str = ""  # why not: the build's one line (how it ended, its first error lines)
    first_error: str = ""  # the compiler's first error-like line, if it printed one


def build_here(
    entries: Mapping[str, tuple[EntryRef, Path]], sandbox: str, limits: Limits, cache_root: Path
) -> dict[str, LocalBuild]:
    """Build each entry (name -> its ref and directory) into ``cache_root`` in ``sandbox``,
    the way a worker builds it before its first match (``workers.artifacts.ArtifactCache``);
    ``SandboxUnavailable`` if the sandbox cannot run here."""
    from workers.artifacts import ArtifactCache, BuildFailed, error_lines, local_fetch
    from workers.sandbox import HostError, host_factory

    try:
        hosts = host_factory(sandbox)
    except HostError as e:
        raise SandboxUnavailable(f"sandbox {sandbox} unavailable: {e}") from e
    cache = ArtifactCache(cache_root, hosts, limits)
    fetch = local_fetch({ref.digest: path for ref, path in entries.values()})
    out: dict[str, LocalBuild] = {}
    for name, (ref, _) in entries.items():
        got = cache.ensure(ref, fetch)
        if isinstance(got, BuildFailed):
            first = error_lines(got.log, 1)
            out[name] = LocalBuild(None, got.detail.split(" (full log:")[0], first[0] if first else "")
        else:
            out[name] = LocalBuild(got)
    return out


def check_local_sandbox(kind: str) -> str:
    """The health check a worker makes at start (``workers.preflight``: a sandboxed C build
    and move), made once here for all the local workers of a run, which skip their own;
    ``SandboxUnavailable`` with its one line if it fails. Returns what ``probe_sandbox`` does."""
    from workers.preflight import PreflightFailed, check_sandbox

    try:
        check_sandbox(kind)
    except PreflightFailed as e:
        raise SandboxUnavailable(str(e)) from e
    return probe_sandbox(kind) if kind != "none" else ""


def check_broker_url(url: str) -> None:
    """The rules a worker applies to a broker URL (a password, a known scheme), applied
    before a run starts; ``BrokerURLError`` (a ``UsageError``) if it breaks them."""
    from workers.worker_cli import check_broker_url as worker_check

    worker_check(url, allow_no_password=False)


# -- Celery ---------------------------------------------------------------------------
class BrokerDown(RunHalted, RuntimeError):
    """The broker stayed unreachable longer than the coordinator is willing to wait."""


class NoWorkerCanServe(RunHalted, RuntimeError):
    """Every connected worker refused a match for a limit above its ceilings (exit 1, resumable)."""


class CeleryDispatcher:
    """Sends matches as Celery tasks to its organiser's queue; reads notes from the run's
    inbox in Redis, each attributed to the enrolled worker whose key signed it."""

    #: how long the coordinator keeps trying an unreachable broker before giving up
    PATIENCE_S = 600.0

    def __init__(
        self, broker_url: str, run_id: str, timing: Timing, key: SigningKey, registry: RegistryView
    ) -> None:
        from workers.broker_keys import KEYS, queue_for
        from workers.task_message import origin

        #: the organiser's key: signs tasks, artifacts and quarantine notices
        self.key = key
        self.registry = registry
        self.queue = queue_for(key.key_id)
        self.url = broker_url
        self.run_id = run_id
        self.timing = timing
        self.keys = KEYS
        self.origin = origin()
        self.redis = redis.Redis.from_url(broker_url, socket_timeout=10.0, socket_connect_timeout=5.0)
        self._down_since: float | None = None
        self._up_since = float("-inf")
        self._published: set[str] = set()
        self._workers_cache = (0.0, 0)
        self._live_cache: tuple[float, list[LiveMatch]] = (float("-inf"), [])
        #: matches forgotten since the last poll: their ``current`` entries go with the next one
        self._to_forget: set[str] = set()
        #: called between the tries of a call that waits for an unreachable broker (the
        #: coordinator redraws its progress and restarts an embedded Redis from there: without
        #: it, a submit waiting for the broker froze the display for up to ``PATIENCE_S``)
        self.on_wait: Callable[[], None] | None = None
        #: revocations read from the registry, not yet handed to the coordinator
        self._revocations: list[Revoked] = []

    # broker health ---------------------------------------------------------------
    def _failed(self, e: Exception) -> None:
        now = time.monotonic()
        if self._down_since is None:
            self._down_since = now
            log.warning("broker unreachable: %s; waiting for it", e)
        elif now - self._down_since > self.PATIENCE_S:
            raise BrokerDown(f"broker {self._safe_url()} unreachable for {self.PATIENCE_S:.0f}s: {e}") from e

    def _wait(self, seconds: float) -> None:
        """Between two tries at an unreachable broker."""
        if self.on_wait is not None:
            self.on_wait()
        time.sleep(seconds)

    def down_for(self) -> float | None:
        return None if self._down_since is None else time.monotonic() - self._down_since

    @property
    def patience_s(self) -> float:
        return self.PATIENCE_S

    def _ok(self) -> None:
        if self._down_since is not None:
            log.warning("broker reachable again")
            self._down_since = None
            self._up_since = time.monotonic()

    def _safe_url(self) -> str:
        from urllib.parse import urlsplit

        p = urlsplit(self.url)
        return f"{p.scheme}://{p.hostname}:{p.port}{p.path}"

    def healthy_for(self) -> float:
        if self._down_since is not None:
            return 0.0
        return time.monotonic() - self._up_since

    def ping(self) -> None:
        """Fail early, with a clear message, if the broker cannot be used at all."""
        try:
            self.redis.ping()
        except redis.exceptions.AuthenticationError as e:
            raise BrokerDown(f"broker {self._safe_url()} refused the password: {e}") from e
        except redis.exceptions.InvalidResponse as e:  # something answers there, in another protocol
            raise BrokerDown(f"broker {self._safe_url()} answers but is not a Redis server ({e})") from e
        except redis.exceptions.RedisError as e:
            raise BrokerDown(f"broker {self._safe_url()} unreachable: {e}") from e

    # artifacts --------------------------------------------------------------------
    def publish_artifacts(self, blobs: dict[str, Path]) -> None:
        """Make sure every artifact (digest -> packed file) is in Redis (cheap when it is)."""
        for digest, path in blobs.items():
            key = self.keys.artifact(digest)
            sig_key = self.keys.artifact_sig(digest, self.key.key_id)
            while True:
                try:
                    if self.redis.exists(key, sig_key) != 2:
                        blob = path.read_bytes()
                        with self.redis.pipeline(transaction=True) as pipe:
                            pipe.set(key, blob)
                            pipe.set(sig_key, artifact_signature(self.key, digest, blob))
                            pipe.execute()
                    self._ok()
                    break
                except redis.exceptions.RedisError as e:
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

    def submit(self, spec: MatchSpec, attempt: int) -> None:
        """Want ``attempt`` of the match and queue its task, in one round trip (the ``current``
        entry first: Redis runs a connection's commands in order, so no worker can take the
        task before it). The message is Celery's own (``workers.task_message``)."""
        from workers.task_message import task_message

        self._to_forget.discard(spec.match_id)  # wanted again: a forget not yet sent must not undo it
        message = task_message(
            f"{self.run_id}.{spec.match_id}.{attempt}",
            [signed(self.envelope(spec, attempt), self.key).decode()],
            # what a worker's log shows for the task: the match, not its whole signed envelope
            argsrepr=f"[match {spec.match_id} attempt {attempt}]",
            sender=self.origin,
            queue=self.queue,
        )
        while True:
            try:
                with self.redis.pipeline(transaction=False) as pipe:
                    pipe.hset(self.keys.current(self.run_id), spec.match_id, str(attempt))
                    pipe.lpush(self.queue, message)
                    pipe.execute()
                self._ok()
                return
            except redis.exceptions.RedisError as e:
                # sent again: should the first one have arrived, the attempt is delivered
                # twice, which the workers' attempt check and the store already absorb
                self._failed(e)
                self._wait(1.0)

    def submit_copy(self, spec: MatchSpec, attempt: int, avoid: str) -> None:
        """Queue a second copy of ``attempt`` (a straggler) for a worker other than ``avoid``
        (the enrolled name of the one playing it: that worker passes the copy on)."""
        from workers.task_message import task_message

        envelope = dataclasses.replace(self.envelope(spec, attempt), copy_of=avoid)
        message = task_message(
            f"{self.run_id}.{spec.match_id}.{attempt}.copy",
            [signed(envelope, self.key).decode()],
            argsrepr=f"[match {spec.match_id} attempt {attempt} copy]",
            sender=self.origin,
            queue=self.queue,
        )
        with contextlib.suppress(redis.exceptions.RedisError):
            self.redis.lpush(self.queue, message)

    def want(self, match_id: str, attempt: int) -> None:
        """Record in the broker that ``attempt`` is the one the run wants (``current`` hash)."""
        self._to_forget.discard(match_id)
        with contextlib.suppress(redis.exceptions.RedisError):
            self.redis.hset(self.keys.current(self.run_id), match_id, str(attempt))

    def mark_alive(self) -> None:
        """Set the sentinel whose disappearance tells that the broker lost its data."""
        try:
            # its value names the organiser: a starting worker counts the runs it can serve
            self.redis.set(self.keys.alive(self.run_id), self.key.key_id)
            self._ok()
        except redis.exceptions.RedisError as e:
            self._failed(e)

    def lost_its_data(self) -> bool:
        """True when the broker answers but the sentinel is gone (restarted empty, flushed)."""
        try:
            gone = not self.redis.exists(self.keys.alive(self.run_id))
            self._ok()
            return gone
        except redis.exceptions.RedisError as e:
            self._failed(e)
            return False

    def forget(self, match_id: str) -> None:
        """Workers skip any attempt of this match from now on (``current`` hash). Sent with the
        next ``poll`` (the same round trip: the coordinator forgets a match per result, and polls
        right after), or by ``close``; ``submit``/``want`` of the match before that cancel it."""
        self._to_forget.add(match_id)

    def _flush_forgotten(self) -> None:
        forget = sorted(self._to_forget)
        if forget:
            with contextlib.suppress(redis.exceptions.RedisError):
                self.redis.hdel(self.keys.current(self.run_id), *forget)
                self._to_forget.difference_update(forget)

    def quarantine(self, worker: str, reason: str) -> None:
        """Tell the worker enrolled as ``worker`` (signed, so nobody else can) to stop taking
        this organiser's work; the notice names its key, not its name."""
        from workers.broker_keys import QUARANTINE_TTL_S

        key_ids = [k for k, m in self.registry.by_key.items() if m.name == worker]
        for key_id in key_ids:
            notice = signed(QuarantineNotice(worker, key_id, self.run_id, reason), self.key)
            with contextlib.suppress(redis.exceptions.RedisError):
                self.redis.set(self.keys.quarantine(key_id), notice, ex=QUARANTINE_TTL_S)

    def forget_run(self) -> None:
        """The run is over: drop its keys from the broker (artifacts stay: other runs share them)."""
        self._to_forget.clear()  # the whole ``current`` hash goes
        with contextlib.suppress(redis.exceptions.RedisError):
            self.redis.delete(
                self.keys.current(self.run_id),
                self.keys.inbox(self.run_id),
                self.keys.alive(self.run_id),
                self.keys.live(self.run_id),
            )

    def poll(self, timeout: float) -> list[InboxNote]:
        inbox = self.keys.inbox(self.run_id)
        forget = sorted(self._to_forget)
        try:
            # one round trip: the matches forgotten since the last poll, the first note (waiting
            # for it: Redis runs a connection's commands in order, so the LPOP waits too) and
            # whatever else has come by then
            with self.redis.pipeline(transaction=False) as pipe:
                if forget:
                    pipe.hdel(self.keys.current(self.run_id), *forget)
                pipe.blpop([inbox], timeout=min(max(timeout, 0.05), 5.0))
                pipe.lpop(inbox, 200)
                *_, first, more = pipe.execute()
            self._to_forget.difference_update(forget)
            raw: list[Any] = []
            if first is not None:
                raw.append(first[1])
            if more:
                raw.extend(more)
            self._ok()
        except redis.exceptions.RedisError as e:
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
                            notes.append(self._attributed(note, self.registry.by_key[key_id]))
                            continue
                    signed = json.loads(blob)  # decoded whole only to name what it claims
                    notes.append(
                        Rejected(
                            str(signed.get("match_id", "?")),
                            int(signed.get("attempt", 0) or 0),
                            str(signed.get("worker", "?")),
                            str(first),  # "signed with another key (<id>)": no enrolled worker's
                            kind=str(signed.get("kind", "")),
                        )
                    )
                    continue
                notes.append(self._attributed(note, self.registry.by_key[key_id]))
            except (ValueError, WireError, TypeError, AttributeError) as e:
                log.warning("ignoring a malformed note in %s: %s", inbox, e)
        return notes

    def _read_registry(self, *, force: bool = False) -> None:
        """The fleet registry again if its file changed (a revocation counts within a second);
        the revocations it brings go out with the next poll."""
        for m in self.registry.refresh(time.monotonic(), force=force):
            self._revocations.append(Revoked(m.name, m.reason or "no reason given"))

    @staticmethod
    def _attributed(note: Note, member: Member) -> InboxNote:
        """``note`` as from the worker whose key signed it: named ``NAME`` (the registry's name
        for that key), or ``NAME/INSTANCE`` when the worker process calls itself otherwise
        (``tourney run``'s restarted local workers share one key). The identity is the part
        before the slash (``worker_identity``): the key, never what the note says."""
        if member.revoked:
            return Rejected(
                note.match_id,
                note.attempt,
                member.name,
                f"the key of worker {member.name} is revoked ({member.reason})",
                revoked=True,
                kind=note.kind,
            )
        label = member.name if note.worker in ("", member.name) else f"{member.name}/{note.worker}"
        if isinstance(note, Finished):
            return dataclasses.replace(
                note, worker=label, result=dataclasses.replace(note.result, worker=label)
            )
        return dataclasses.replace(note, worker=label)

    def alive(self, match_id: str, attempt: int) -> bool | None:
        try:
            alive = bool(self.redis.exists(self.keys.heartbeat(self.run_id, match_id, attempt)))
            self._ok()
            return alive
        except redis.exceptions.RedisError as e:
            self._failed(e)
            return None

    def queue_empty(self) -> bool | None:
        try:
            return int(self.redis.llen(self.queue)) == 0
        except redis.exceptions.RedisError as e:
            self._failed(e)
            return None

    def present(self) -> set[str] | None:
        """The names of the workers connected now (their presence keys; None: cannot tell)."""
        prefix = len(self.keys.worker(""))
        try:
            return {
                k.decode()[prefix:] for k in self.redis.scan_iter(match=self.keys.WORKER_PATTERN, count=200)
            }
        except redis.exceptions.RedisError:
            return None

    def workers(self) -> int:
        at, n = self._workers_cache
        if time.monotonic() - at < 2.0:
            return n
        total = 0
        try:
            for key in self.redis.scan_iter(match=self.keys.WORKER_PATTERN, count=200):
                v = self.redis.get(key)
                if v is not None:
                    total += int(v)
        except (redis.exceptions.RedisError, ValueError):
            return n
        self._workers_cache = (time.monotonic(), total)
        return total

    def live(self) -> list[LiveMatch]:
        """The run's live hash, verified (a record no enrolled worker key signed is not shown);
        read at most twice a second."""
        at, cached = self._live_cache
        if time.monotonic() - at < LIVE_READ_EVERY_S:
            return cached
        try:
            raw = self.redis.hgetall(self.keys.live(self.run_id))
        except redis.exceptions.RedisError:
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

    def close(self) -> None:
        self._flush_forgotten()
        with contextlib.suppress(Exception):
            self.redis.close()


# -- local worker processes --------------------------------------------------------
# ``LocalWorkers`` (one ``tourney worker`` process, supervised) lives in its own module
# (``runner.orchestration.local_workers``), imported above and re-exported here.


def sweep_sandbox_cgroups() -> None:
    """Remove the sandbox cgroups of worker processes that are gone (a pool process killed
    with sandboxes kept for reuse leaves their cgroups; only a dead owner's are removed)."""
    from workers.sandbox.cgroups import shared_cgroups

    with contextlib.suppress(Exception):  # tidying up: never the reason a run fails
        shared_cgroups().sweep()


def kill_group(pgid: int) -> None:
    """SIGKILL a process group we created; only while its leader, our child, is unreaped
    (``runner.orchestration.procs.wait_unreaped``), so that the group id cannot name anyone else's."""
    procs_mod.kill_own_group(pgid)


def kill_stale(pid_file: Path, expect: str = "") -> bool:
    """Kill a process a previous, killed coordinator left behind (normally PDEATHSIG did).

    Only if the recorded pid still belongs to the very process recorded (same
    kernel start time, ``runner.orchestration.procs``); never by name. ``expect`` is kept
    for callers' readability only."""
    return procs_mod.kill_recorded(pid_file)
