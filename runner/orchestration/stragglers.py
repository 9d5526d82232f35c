"""Which straggling matches get a second copy (docs/fleet.md, "Stragglers"): a pure rule.

A slow machine that still heartbeats would hold a run to its pace. The rule: when *every* match
still in flight is running and has run longer than ``factor`` times the median time of the
matches of its own kind (same stage and board: a 9x9 playoff match is never measured against
3x3 group matches), once at least ``MIN_SAMPLES`` of that kind were timed, each of them (not yet
copied) gets a second copy, but only where another worker (another enrolled key: a copy is never
played by the worker playing the first) has a process free to take it. The coordinator sends
them (``CeleryDispatcher.submit_copy``) and accepts the first valid result.
"""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runner.domain.match_values import MatchPlan

#: matches of a kind timed before a straggler of that kind can be told from a long match
MIN_SAMPLES = 3


def match_kind(plan: MatchPlan) -> str:
    """What a match's time is compared with: the matches of its stage on its board."""
    return f"stage {plan.stage}, board {plan.board_id}"


def worker_parts(label: str) -> tuple[str, str]:
    """(enrolled name, process name) of a worker label ``NAME/INSTANCE`` (or ``NAME``, when the
    process calls itself by its enrolled name: ``CeleryDispatcher`` makes the labels)."""
    name, _, instance = label.partition("/")
    return name, instance or name


@dataclass(frozen=True)
class Flight:
    """A match in flight as the rule sees it."""

    match_id: str
    attempt: int
    worker: str  # its label, ``NAME/INSTANCE``
    running: bool
    #: seconds since its attempt started (None: not known, e.g. started before a resume)
    elapsed_s: float | None
    #: ``match_kind`` of its plan
    kind: str = ""


@dataclass(frozen=True)
class Copy:
    match_id: str
    attempt: int
    worker: str  # who plays the first copy
    detail: str  # why, for the run's events


def _free_processes(flights: Sequence[Flight], processes: Mapping[str, int]) -> dict[str, list[str | int]]:
    """Per connected worker process name: [its enrolled name, processes not playing a match].
    A process name no match in flight names has an enrolled name not known here: it counts as
    a worker of its own (it may be another machine)."""
    enrolled = {worker_parts(f.worker)[1]: worker_parts(f.worker)[0] for f in flights}
    busy: dict[str, int] = {}
    for f in flights:
        instance = worker_parts(f.worker)[1]
        busy[instance] = busy.get(instance, 0) + 1
    return {
        instance: [enrolled.get(instance, f"?{instance}"), n - busy.get(instance, 0)]
        for instance, n in sorted(processes.items())
    }


def _take_elsewhere(free: dict[str, list[str | int]], avoid: str) -> str | None:
    """Reserve one free process of a worker not enrolled as ``avoid``; its process name."""
    for instance, slot in free.items():
        name, n = slot
        if name != avoid and isinstance(n, int) and n > 0:
            slot[1] = n - 1
            return instance
    return None


def straggler_copies(
    flights: Sequence[Flight],
    durations: Mapping[str, Sequence[float]],
    *,
    factor: float,
    processes: Mapping[str, int],
    copied: frozenset[str] = frozenset(),
    pending: bool = False,
) -> list[Copy]:
    """The second copies to send now (none while anything is pending or queued, or any match in
    flight is under its kind's threshold, of unknown age, or of a kind too rarely timed).

    ``durations``: match kind -> the times of accepted matches of that kind; ``processes``: the
    connected worker processes (presence name -> how many matches it plays at once)."""
    if pending or not flights:
        return []
    medians: dict[str, float] = {}
    for f in flights:
        timed = durations.get(f.kind, ())
        if len(timed) < MIN_SAMPLES or not f.running or f.elapsed_s is None:
            return []
        medians[f.kind] = statistics.median(timed)
        if f.elapsed_s <= factor * medians[f.kind]:
            return []
    free = _free_processes(flights, processes)
    for f in flights:  # the copies already sent hold a process of another worker each
        if f.match_id in copied:
            _take_elsewhere(free, worker_parts(f.worker)[0])
    copies: list[Copy] = []
    for f in flights:
        if f.match_id in copied or f.elapsed_s is None:
            continue
        if _take_elsewhere(free, worker_parts(f.worker)[0]) is None:
            continue  # no other worker has a process free: a copy would wait, or come back here
        n = len(durations[f.kind])
        detail = (
            f"attempt {f.attempt} has run {f.elapsed_s:.1f}s on {f.worker}, over {factor:g} x the median "
            f"time {medians[f.kind]:.2f}s of {n} {f.kind} match(es), with another worker idle: a second "
            "copy sent to another worker"
        )
        copies.append(Copy(f.match_id, f.attempt, f.worker, detail))
    return copies
