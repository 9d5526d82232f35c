"""``InlineDispatcher`` (``tourney run --inline``, ``tourney rerun``): plays each match in this
process, one at a time, in submission order (deterministic).

Entries still go through the artifact cache (packed, digest-checked, built once), as on a
worker. There is no broker: whatever the ``Dispatcher`` protocol asks of one (leases,
quarantine, the broker's health) has its local answer here, so the coordinator never asks
which kind of dispatcher it has.
"""

from __future__ import annotations

import collections
import time
from pathlib import Path
from typing import TYPE_CHECKING

from runner.domain.fair_share import Sharing
from runner.domain.match_values import MatchSpec
from runner.domain.wire import Finished, LiveMatch, Started
from runner.orchestration.dispatcher import DispatchObserver, InboxNote
from runner.orchestration.workers_gate import execute_here, live_state
from runner.storage.artifacts import read_artifact

if TYPE_CHECKING:
    from collections.abc import Callable

    from runner.orchestration.workers_gate import LiveState


class InlineDispatcher:
    """Plays matches in this process, in submission order (deterministic)."""

    def __init__(self, artifacts_dir: Path, cache_dir: Path, *, worker: str = "inline") -> None:
        self.artifacts_dir = artifacts_dir
        self.cache_dir = cache_dir
        self.worker = worker
        self._queue: collections.deque[tuple[MatchSpec, int]] = collections.deque()
        #: called (cheaply, often) while a match is played in ``poll`` (``DispatchObserver.playing``)
        self.on_live: Callable[[], None] | None = None
        self._playing: LiveState | None = None  # the match being played

    def _fetch(self, digest: str) -> bytes:
        return read_artifact(self.artifacts_dir, digest)  # a tar.gz, or the refusal standing for it

    def observe(self, observer: DispatchObserver) -> None:
        self.on_live = observer.playing  # never waits for a broker: ``waiting`` is not called

    def submit(self, spec: MatchSpec, attempt: int, *, refused_by: tuple[str, ...] = ()) -> None:
        self._queue.append((spec, attempt))

    def submit_copy(self, spec: MatchSpec, attempt: int, avoid: str, *, verification: bool = False) -> None:
        pass  # never asked: no worker is ever idle here (``workers``), and no other replays

    @property
    def replays_elsewhere(self) -> bool:
        return False  # one process plays everything: no second worker to replay on

    def verification_alive(self, match_id: str, attempt: int) -> bool | None:
        return None  # never asked: no replay is sent (``replays_elsewhere``)

    def forget_verification(self, match_id: str) -> None:
        pass  # no replay sent

    @property
    def fleet_dir(self) -> Path | None:
        return None  # no enrolled worker plays here

    def want(self, match_id: str, attempt: int) -> None:
        pass  # no broker to tell: the queue here holds exactly what was submitted

    def poll(self, timeout: float) -> list[InboxNote]:
        if not self._queue:
            time.sleep(min(timeout, 0.01))
            return []
        spec, attempt = self._queue.popleft()
        self._playing = live_state(spec, attempt, self.worker, self.on_live)
        try:
            result = execute_here(
                spec, self._fetch, self.cache_dir, worker=self.worker, observer=self._playing
            )
        finally:
            self._playing = None
        return [
            Started(spec.match_id, attempt, self.worker),
            Finished(spec.match_id, attempt, result, self.worker),
        ]

    def wake(self) -> None:
        pass  # its poll waits at most 10 ms, and plays what is queued in the calling thread

    def forget(self, match_id: str) -> None:
        pass  # nothing of it is queued: submit plays in order, poll returns its result

    def quarantine(self, worker: str, reason: str, *, every_run: bool = False) -> None:
        pass  # the only worker is this process, whose results the coordinator judges as any

    def lift_quarantine(self, worker: str) -> None:
        pass

    @property
    def results_name_their_run(self) -> bool:
        return False  # played here, for the run that submitted them

    def alive(self, match_id: str, attempt: int) -> bool | None:
        return True  # nothing is ever lost in-process

    def execution_alive(self, execution: str) -> bool | None:
        return None  # played in this process: its notes are its own

    def queue_empty(self) -> bool | None:
        return not self._queue

    def present(self) -> set[str] | None:
        return None  # no worker process to count: no match is refused here for a ceiling

    def mark_alive(self) -> None:
        pass  # no broker whose data could be lost

    def lost_its_data(self) -> bool:
        return False

    def healthy_for(self) -> float:
        return float("inf")

    def down_for(self) -> float | None:
        return None  # no broker

    @property
    def patience_s(self) -> float:
        return 0.0

    def workers(self) -> int:
        return 0

    def processes(self) -> dict[str, int]:
        return {}  # no worker process: nothing a straggler's copy could go to

    def share(self, demand: int, *, local: int = 0) -> Sharing | None:
        return None  # played here, in submission order: no queue shared with other runs

    def live(self) -> list[LiveMatch]:
        playing = self._playing
        return [] if playing is None else [playing.snapshot()[1]]

    def forget_run(self) -> None:
        pass  # nothing kept outside the store

    def close(self) -> None:
        self._queue.clear()
