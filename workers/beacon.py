"""One thread per pool process that keeps the match being played visible to the coordinator.

While a worker plays a match it keeps two things fresh in Redis: the attempt's
heartbeat key (``tourney:run:<run>:hb:<match>:<attempt>``, a TTL the
coordinator's lease follows) and, for the live progress only, the match's
signed ``LiveMatch`` record. Both used to be a thread each, started and joined
for every match (a heartbeat thread and a live-record publisher, both now gone):
two thread starts, two joins and their wake-ups per match, about a tenth of a
pool process's work outside the games on a round robin of short matches
(issue 13). Here one daemon thread per process serves whatever match the
process is playing (a pool process plays one at a time):

* ``Beacon.watch(...)`` hands it the match; its first beat and first live
  record were already written by the caller (``workers.tasks`` writes them in
  the round trip that checks the attempt and sends the ``started`` note);
* the thread beats every ``every_s`` and rewrites the live record at most
  every ``LIVE_EVERY_S``, only when it changed (a build, a new game, moves);
* ``Watch.stop_live()`` ends the live writes (before the result is sent, which
  removes the record in its own transaction); the beats go on until
  ``Watch.end()``, so a result waiting for an absent broker keeps its attempt
  alive; once ``end`` returns, nothing more is written for that match.

The thread does its Redis writes while holding the beacon's lock, so ``end``
and ``stop_live`` return only once a write in progress is done: no write for a
match can land after them.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from dataclasses import dataclass, field

import redis

from runner.domain.signing import SigningKey, signed
from runner.errors import BrokerWireError
from workers.broker_wire import wire_errors
from workers.live import LIVE_EVERY_S, LIVE_TTL_S, LiveState


@dataclass
class LiveTarget:
    """Where and how a match's live record is written (a hash field, signed)."""

    key: str
    state: LiveState
    signing_key: SigningKey  # the worker's own key: the coordinator names the record's worker by it
    #: the state version already in Redis (-1: none yet)
    published: int = -1
    every_s: float = LIVE_EVERY_S

    def record(self) -> tuple[int, str, bytes]:
        """(version, match id, signed JSON) of the state now."""
        version, live = self.state.snapshot()
        return version, live.match_id, signed(live, self.signing_key)


@dataclass
class Watch:
    """One match the beacon keeps alive (see the module docstring)."""

    beacon: Beacon
    r: redis.Redis
    key: str
    worker: str
    every_s: float
    ttl_ms: int
    live: LiveTarget | None
    #: a second key beaten with ``key`` (the task execution's own heartbeat), or ""
    also_key: str = ""
    #: beats written so far (the caller's first one included when it says so)
    beats: int = 0
    next_beat: float = 0.0
    next_live: float = 0.0
    live_on: bool = True
    ended: bool = field(default=False)

    def due(self) -> float:
        """When the thread next has something to do for this match."""
        if self.live is not None and self.live_on:
            return min(self.next_beat, self.next_live)
        return self.next_beat

    def stop_live(self) -> None:
        """No more live writes for this match (one in progress is finished first)."""
        with self.beacon.lock:
            self.live_on = False

    def end(self) -> int:
        """No more writes at all for this match; the number of beats written."""
        with self.beacon.lock:
            self.ended = True
            self.live_on = False
            if self.beacon.current is self:
                self.beacon.current = None
                self.beacon.lock.notify_all()
            return self.beats

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.end()

    # -- the thread's side (called with the beacon's lock held) --------------------
    def beat(self, now: float) -> None:
        with contextlib.suppress(BrokerWireError), wire_errors():
            if self.also_key:
                with self.r.pipeline(transaction=False) as pipe:
                    pipe.set(self.key, self.worker, px=self.ttl_ms)
                    pipe.set(self.also_key, self.worker, px=self.ttl_ms)
                    pipe.execute()
            else:
                self.r.set(self.key, self.worker, px=self.ttl_ms)
            self.beats += 1
        self.next_beat = now + self.every_s

    def publish(self, now: float) -> None:
        live = self.live
        assert live is not None
        self.next_live = now + live.every_s
        if live.state.snapshot()[0] == live.published:
            return  # nothing new since the last write
        version, match_id, blob = live.record()
        with contextlib.suppress(BrokerWireError), wire_errors():
            with self.r.pipeline(transaction=False) as pipe:
                pipe.hset(live.key, match_id, blob)
                pipe.expire(live.key, LIVE_TTL_S)
                pipe.execute()
            live.published = version


class Beacon:
    """The per-process thread (``beacon()``); see the module docstring."""

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.current: Watch | None = None
        self._thread = threading.Thread(target=self._loop, name="tourney-beacon", daemon=True)
        self._thread.start()

    def watch(
        self,
        r: redis.Redis,
        key: str,
        worker: str,
        every_s: float,
        ttl_s: float,
        live: LiveTarget | None = None,
        *,
        beaten: bool,
        also_key: str = "",
    ) -> Watch:
        """Keep ``key`` beating (and ``live`` fresh) from now until the watch ends; ``beaten``:
        the caller just wrote the first beat (and the live record at ``live.published``)."""
        now = time.monotonic()
        w = Watch(self, r, key, worker, every_s, max(1, int(ttl_s * 1000)), live, also_key)
        w.beats = 1 if beaten else 0
        w.next_beat = now + every_s if beaten else now
        if live is not None:
            w.next_live = now + live.every_s if live.published >= 0 else now
        with self.lock:
            if self.current is not None:  # a watch left open (a bug): it stops beating now
                self.current.ended = True
            self.current = w
            self.lock.notify_all()
        return w

    def _loop(self) -> None:
        with self.lock:
            while True:
                w = self.current
                if w is None:
                    self.lock.wait()
                    continue
                now = time.monotonic()
                wait = w.due() - now
                if wait > 0:
                    self.lock.wait(wait)
                    continue
                if now >= w.next_beat:
                    w.beat(now)
                if w.live is not None and w.live_on and now >= w.next_live:
                    w.publish(now)


_beacon: tuple[int, Beacon] | None = None
_beacon_lock = threading.Lock()


def beacon() -> Beacon:
    """This process's beacon (started at first use; a forked child starts its own)."""
    global _beacon
    with _beacon_lock:
        if _beacon is None or _beacon[0] != os.getpid():
            _beacon = (os.getpid(), Beacon())
        return _beacon[1]


__all__ = ["Beacon", "LiveTarget", "Watch", "beacon"]
