"""What a run says about its progress, and where it says it.

The coordinator (``runner.orchestration.coordinator``) builds a ``ProgressSnapshot``
whenever something changes and hands it, with its log lines, to a ``ProgressSink``;
``tourney run`` wires the report's display (``runner.report.progress.RunProgress``) to it.
Progress flows by this callback, so the coordinator imports nothing of the report
(docs/architecture.md, "Layers").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from runner.domain.wire import LiveMatch


@dataclass(frozen=True)
class StageProgress:
    name: str
    done: int  # matches with a result
    total: int  # matches planned so far (grows as rounds open)
    status: str  # waiting | running | done | skipped
    #: where the stage stands beyond its matches (sprt: "SPRT running: LLR +1.20 in [-2.94, 2.94]
    #: after 40 pairs"), shown beside its bar and in the plain line
    detail: str = ""


@dataclass(frozen=True)
class ProgressSnapshot:
    stages: list[StageProgress]
    games_done: int
    moves_done: int
    elapsed_s: float
    verdicts: dict[str, int] = field(default_factory=dict)  # non-normal verdict kind -> count
    workers: int = 0  # workers connected (0 when inline)
    running: int = 0  # matches a worker is playing
    queued: int = 0  # matches sent, not yet taken by a worker
    failed: int = 0  # matches given up (not done: shown apart)
    quarantined: tuple[str, ...] = ()  # workers taken out (runner.orchestration.workers_health)
    #: matches in flight as their workers report them (builds, game and move counts)
    live: tuple[LiveMatch, ...] = ()
    #: the broker has not answered for this long (None: it answers)
    broker_down_s: float | None = None
    #: how long the run waits for an unreachable broker before it stops
    broker_patience_s: float = 0.0
    #: live runs of the organiser sharing its workers, this one included (0: not known, inline)
    pool_runs: int = 0

    @property
    def matches_done(self) -> int:
        return sum(s.done for s in self.stages)

    @property
    def matches_total(self) -> int:
        return sum(s.total for s in self.stages)


class ProgressSink(Protocol):
    """Where the coordinator sends its progress: log lines and snapshots (both return at once)."""

    def log(self, message: str) -> None: ...

    def update(self, snap: ProgressSnapshot) -> None: ...


def format_duration(seconds: float | None) -> str:
    """``"42s"``, ``"3m05s"``, ``"2h04m"``; ``"?"`` when unknown."""
    if seconds is None or seconds != seconds or seconds < 0:
        return "?"
    s = round(seconds)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"
