"""The ``Dispatcher`` protocol: everything the coordinator asks of whatever plays its matches.

The coordinator hands a dispatcher ``(spec, attempt)`` pairs and polls it for notes
(``Started``, ``Finished``, ``Skipped``, and the ``Rejected`` and ``Revoked`` made here). It
never learns how matches are run, and never asks which kind of dispatcher it has: each method
below is on both kinds, the inline one doing the local or empty thing where a broker's would
talk to Redis. The store decides what a note means (docs/scale-out.md).

* ``runner.orchestration.inline_dispatcher.InlineDispatcher`` (``tourney run --inline``,
  ``tourney rerun``): plays each match in this process, one at a time, in submission order.
* ``runner.orchestration.celery_dispatcher.CeleryDispatcher``: sends ``tourney.play_match``
  tasks over a Redis broker; workers answer through the run's inbox list.

``runner.orchestration.cluster.LocalCluster`` makes the one a run uses.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from runner.domain.fair_share import Sharing
from runner.domain.match_values import MatchSpec
from runner.domain.wire import Finished, LiveMatch, Note, Skipped, Started
from runner.errors import RunHalted

#: the notes are wire messages (``runner.domain.wire``); re-exported here
__all__ = [
    "BrokerDown",
    "DispatchObserver",
    "Dispatcher",
    "Finished",
    "InboxNote",
    "Lifted",
    "NoWorkerCanServe",
    "Rejected",
    "Revoked",
    "Skipped",
    "Started",
    "Timing",
    "Unbound",
    "worker_identity",
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
    #: the key id the note's signature names (not enrolled here: it could not be checked), or ""
    key_id: str = ""


@dataclass(frozen=True)
class Unbound:
    """A ``started`` note an enrolled key signed that is not bound to a task this coordinator
    sent (another run, an attempt not current, or no envelope of it): it proves nothing about
    its signer and changes nothing (docs/fleet.md). Never on the wire."""

    match_id: str
    attempt: int
    worker: str
    reason: str


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


@dataclass(frozen=True)
class Lifted:
    """The organiser lifted a worker's quarantine (``tourney fleet unquarantine``) at ``at``
    (seconds since the epoch): a quarantine made before then ends. Never on the wire."""

    worker: str
    at: float


#: what the coordinator reads from the inbox: the workers' notes, the ones refused, and
#: revocations and lifted quarantines read from the fleet registry
InboxNote = Note | Rejected | Revoked | Unbound | Lifted


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


class BrokerDown(RunHalted, RuntimeError):
    """The broker stayed unreachable longer than the coordinator is willing to wait."""


class NoWorkerCanServe(RunHalted, RuntimeError):
    """Every connected worker refused a match for a limit above its ceilings (exit 1, resumable)."""


@dataclass(frozen=True)
class DispatchObserver:
    """What a dispatcher calls while it holds the coordinator's thread (``Dispatcher.observe``)."""

    #: called (cheaply, often) while a match is played in this process: the coordinator redraws
    #: its progress from there, since it gets control back only when the match is over
    playing: Callable[[], None]
    #: called between the tries of a call that waits for an unreachable broker: the coordinator
    #: redraws its progress and restarts an embedded Redis from there (without it, a submit
    #: waiting for the broker froze the display for up to the patience)
    waiting: Callable[[], None]


class Dispatcher(Protocol):
    """The whole of what the coordinator uses (``tests/core/test_dispatcher_interface.py``)."""

    def observe(self, observer: DispatchObserver) -> None:
        """Call ``observer`` back from now on (the coordinator's loop sets it as it starts)."""

    def submit(self, spec: MatchSpec, attempt: int, *, refused_by: tuple[str, ...] = ()) -> None:
        """Send one attempt of a match to be played (``refused_by``: the worker processes whose
        ceilings refused it, which pass it on to the others)."""

    def submit_copy(self, spec: MatchSpec, attempt: int, avoid: str, *, verification: bool = False) -> None:
        """Send a second copy of ``attempt`` (a straggler) to a worker other than ``avoid``
        (never asked of a dispatcher that reports no idle worker: ``workers``).
        ``verification``: a replay of an accepted attempt, never official (docs/fleet.md)."""

    @property
    def replays_elsewhere(self) -> bool:
        """Whether a match can be replayed on a worker other than the one that played it
        (``timing.verify_sample``); never in this process alone."""

    def verification_alive(self, match_id: str, attempt: int) -> bool | None:
        """Whether a worker is playing the verification replay of the attempt (None: cannot tell)."""

    def forget_verification(self, match_id: str) -> None:
        """No worker is to play the verification replay of this match any more."""

    @property
    def fleet_dir(self) -> Path | None:
        """The organiser's fleet registry directory (suspect flags: ``tourney fleet list``),
        None when no enrolled worker plays for this run."""

    def want(self, match_id: str, attempt: int) -> None:
        """Record again that ``attempt`` is the one the run wants (a broker that lost its data)."""

    def poll(self, timeout: float) -> list[InboxNote]:
        """Notes that arrived, waiting up to ``timeout`` seconds for the first (or a ``wake``)."""

    def wake(self) -> None:
        """End a ``poll`` that another thread is waiting in now, or the next one, at once: new
        work is waiting to be sent (the submission server's check loop sends a check as its
        upload is unpacked, not at its poll's timeout)."""

    def forget(self, match_id: str) -> None:
        """The run wants no attempt of this match any more (done, failed, obsolete)."""

    def quarantine(self, worker: str, reason: str, *, every_run: bool = False) -> None:
        """Tell the worker enrolled as ``worker`` to take no more of this run's tasks (``every_run``:
        of any run of this organiser, and to stop: its key was revoked)."""

    def lift_quarantine(self, worker: str) -> None:
        """The run's quarantine of ``worker`` is lifted: it may take this run's tasks again."""

    @property
    def results_name_their_run(self) -> bool:
        """Whether results come from workers elsewhere, each naming the run it answers, which
        must be this one (docs/fleet.md); a result played in this process is this run's."""

    def alive(self, match_id: str, attempt: int) -> bool | None:
        """Whether a worker is known to be playing the attempt now (None: cannot tell)."""

    def execution_alive(self, execution: str) -> bool | None:
        """Whether the task execution a ``started`` note names still beats (None: cannot tell)."""

    def queue_empty(self) -> bool | None:
        """Whether no submitted task is waiting for a worker (None: cannot tell)."""

    def present(self) -> set[str] | None:
        """The names of the worker processes connected now (None: cannot tell)."""

    def mark_alive(self) -> None:
        """Set the sentinel whose disappearance tells that the broker lost its data."""

    def lost_its_data(self) -> bool:
        """True when the broker answers but lost what it held (restarted empty, flushed)."""

    def healthy_for(self) -> float:
        """Seconds since the broker was last found unreachable (inf when it never was)."""

    def down_for(self) -> float | None:
        """Seconds the broker has not answered for (None: it answers)."""

    @property
    def patience_s(self) -> float:
        """How long an unreachable broker is waited for before the run stops (``BrokerDown``)."""

    def workers(self) -> int:
        """Worker processes available (0 when inline)."""

    def processes(self) -> dict[str, int]:
        """The connected worker processes: presence name -> matches it plays at once (empty when
        inline)."""

    def share(self, demand: int, *, local: int = 0) -> Sharing | None:
        """How many tasks not yet started this run may keep queued, with ``demand`` matches it
        could queue now, among its organiser's live runs (``runner.domain.fair_share``;
        ``local``: its own local worker's match slots). None: no limit (played in this process)."""

    def live(self) -> list[LiveMatch]:
        """What workers report doing now (builds, game and move counts): display only."""

    def forget_run(self) -> None:
        """The run is over: drop what the broker holds for it."""

    def close(self) -> None: ...
