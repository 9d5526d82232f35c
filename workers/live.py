"""What a worker is doing with a match right now, for the coordinator's live progress.

``LiveState`` watches a match as it is played (a ``MatchObserver``: builds,
games, moves) and keeps a ``LiveMatch`` in memory: the referee loop pays a
counter increment per move, no I/O. The pool process's beacon thread
(``workers.beacon``, beside the heartbeat) writes it to the run's live hash in
Redis at most once a second, and only when it changed, so a match costs at
most one small ``HSET`` a second however fast its moves are; the task removes
the record with the match's result (``workers.tasks``). The record is signed
with the worker's key like every note, although it only feeds a display: the
coordinator shows nothing it cannot verify.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any

from runner.domain.games.base import Game
from runner.domain.match_values import GameRecord, MatchSpec, MoveRecord
from runner.domain.wire import LiveMatch
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
        self._live = LiveMatch(
            spec.match_id, attempt, worker, tuple(spec.plan.players), len(spec.planned_games())
        )
        self._moves = 0  # counted apart: a move costs an increment, the record is made when read
        self._version = 0
        self._on_change = on_change

    def snapshot(self) -> tuple[int, LiveMatch]:
        """(version, record): the version grows with every change."""
        with self._lock:
            if self._live.moves != self._moves:
                self._live = dataclasses.replace(self._live, moves=self._moves)
            return self._version, self._live

    def _changed(self) -> None:
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
