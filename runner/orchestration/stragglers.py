"""Which straggling matches get a second copy (docs/fleet.md, "Stragglers"): a pure rule.

A slow machine that still heartbeats would hold a run to its pace. The rule: once at least
``MIN_SAMPLES`` matches were timed, when *every* match still in flight is running and has run
longer than ``factor`` times the median match time, each of them (not yet copied) gets a
second copy, as many as there are idle worker processes. The coordinator sends them
(``CeleryDispatcher.submit_copy``) and accepts the first valid result.
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import dataclass

#: matches timed before a straggler can be told from a long match
MIN_SAMPLES = 3


@dataclass(frozen=True)
class Flight:
    """A match in flight as the rule sees it."""

    match_id: str
    attempt: int
    worker: str
    running: bool
    #: seconds since its attempt started (None: not known, e.g. started before a resume)
    elapsed_s: float | None


@dataclass(frozen=True)
class Copy:
    match_id: str
    attempt: int
    worker: str  # who plays the first copy
    detail: str  # why, for the run's events


def straggler_copies(
    flights: Sequence[Flight],
    durations: Sequence[float],
    *,
    factor: float,
    idle: int,
    copied: frozenset[str] = frozenset(),
    pending: bool = False,
) -> list[Copy]:
    """The second copies to send now (none while anything is pending or queued, or any match in
    flight is under the threshold or of unknown age)."""
    if pending or len(durations) < MIN_SAMPLES or not flights or idle <= 0:
        return []
    median = statistics.median(durations)
    threshold = factor * median
    if any(not f.running or f.elapsed_s is None or f.elapsed_s <= threshold for f in flights):
        return []
    copies: list[Copy] = []
    for f in flights:
        if len(copies) >= idle:
            break
        if f.match_id in copied or f.elapsed_s is None:
            continue
        detail = (
            f"attempt {f.attempt} has run {f.elapsed_s:.1f}s on {f.worker}, over {factor:g} x the median "
            f"match time {median:.2f}s, with a worker idle: a second copy sent to another worker"
        )
        copies.append(Copy(f.match_id, f.attempt, f.worker, detail))
    return copies
