"""What a worker is doing with a match right now, for the coordinator's live progress.

``LiveState`` watches a match as it is played (a ``MatchObserver``: builds,
games, moves) and keeps a ``LiveMatch`` in memory: the referee loop pays a
counter increment per move, no I/O. ``LivePublisher`` (a thread, beside the
heartbeat) writes it to the run's live hash in Redis at most once a second,
and only when it changed, so a match costs at most one small ``HSET`` a
second however fast its moves are; it removes the record when the match is
over. The record is signed with the run key like every message, although it
only feeds a display: the coordinator shows nothing it cannot verify.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
from collections.abc import Callable
from typing import Any

import redis

from runner.domain.contracts import GameRecord, LiveMatch, MatchSpec, MoveRecord
from runner.domain.games.base import Game
from runner.domain.signing import RunKey, sign
from workers.match import MatchObserver

#: the most often a match's live record is rewritten
LIVE_EVERY_S = 1.0
#: a live hash nobody refreshes goes away (a run whose workers all died)
LIVE_TTL_S = 3600


class LiveState(MatchObserver):
    """The current ``LiveMatch`` of one attempt, updated by the referee loop.

    ``on_change`` (the inline dispatcher's) is called after each update; it must be cheap.
    """

    def __init__(
        self, spec: MatchSpec, attempt: int, worker: str, on_change: Callable[[], None] | None = None
    ) -> None:
        self._lock = threading.Lock()
        self._live = LiveMatch(spec.match_id, attempt, worker, tuple(spec.plan.players), len(spec.orders))
        self._moves = 0  # counted apart: a move costs an increment, the record is made when read
        self._version = 0
        self._on_change = on_change
        #: set on every change: wakes the publisher, which then waits out its interval
        self.changed = threading.Event()

    def snapshot(self) -> tuple[int, LiveMatch]:
        """(version, record): the version grows with every change."""
        with self._lock:
            if self._live.moves != self._moves:
                self._live = dataclasses.replace(self._live, moves=self._moves)
            return self._version, self._live

    def _changed(self) -> None:
        if not self.changed.is_set():  # set() takes a lock and notifies: once per move adds up
            self.changed.set()
        if self._on_change is not None:
            self._on_change()

    def _set(self, **changes: Any) -> None:
        with self._lock:
            self._live = dataclasses.replace(self._live, **changes)
            self._moves = self._live.moves
            self._version += 1
        self._changed()

    def building(self, names: list[str]) -> None:
        self._set(phase="building", building=tuple(names))

    def game_started(self, number: int, order: list[str], game: Game[Any, Any], state: Any) -> None:
        self._set(phase="playing", game=number, moves=0, building=())

    def move_played(self, number: int, move: MoveRecord, game: Game[Any, Any], state: Any) -> None:
        with self._lock:
            self._moves += 1
            self._version += 1
        self._changed()

    def game_finished(self, number: int, record: GameRecord, game: Game[Any, Any], state: Any) -> None:
        """Nothing: the count stays on the finished game until the next one starts."""


class LivePublisher:
    """Writes a ``LiveState`` to ``key`` (a hash, field = match id) at most every ``every_s``."""

    def __init__(
        self, r: redis.Redis, key: str, state: LiveState, run_key: RunKey, every_s: float = LIVE_EVERY_S
    ) -> None:
        self._r, self._key, self._state, self._run_key = r, key, state, run_key
        self._every = every_s
        self._published = -1
        #: set once the record went with the result (``workers.tasks``): nothing left to delete
        self.removed = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="tourney-live", daemon=True)

    def _publish(self) -> None:
        version, live = self._state.snapshot()
        if version == self._published:
            return
        blob = json.dumps(sign(live.to_dict(), self._run_key))
        with contextlib.suppress(redis.exceptions.RedisError):
            with self._r.pipeline(transaction=False) as pipe:
                pipe.hset(self._key, live.match_id, blob)
                pipe.expire(self._key, LIVE_TTL_S)
                pipe.execute()
            self._published = version

    def _loop(self) -> None:
        # the first record at once, then each change as it comes but at most once per interval:
        # a build or a new game shows within a second, a burst of fast moves costs one write
        while not self._stop.is_set():
            self._state.changed.clear()
            self._publish()
            if self._stop.wait(self._every):
                return
            while not self._state.changed.wait(self._every):
                if self._stop.is_set():
                    return

    def __enter__(self) -> LivePublisher:
        self._thread.start()
        return self

    def stop(self) -> None:
        """End the publishing thread at once (the record stays until removed)."""
        self._stop.set()
        self._state.changed.set()  # wakes it if it waits for a change rather than on the stop
        self._thread.join(5.0)

    def remove_in(self, pipe: redis.client.Pipeline) -> None:
        """Queue the record's removal in ``pipe`` (sent with the match's result)."""
        pipe.hdel(self._key, self._state.snapshot()[1].match_id)

    def __exit__(self, *exc: object) -> None:
        self.stop()
        if self.removed:
            return
        _, live = self._state.snapshot()
        with contextlib.suppress(redis.exceptions.RedisError):
            self._r.hdel(self._key, live.match_id)
