"""Fair timing, the pure part (issue 14, item 5): cores to match slots, the
concurrency they allow, and what a run's results say about how moves were timed.

``workers.sandbox.cores`` holds the slots (locks, affinity); ``tourney run``
caps its local workers with ``capped_concurrency``; the report states
``TimingSummary.line()``.

One slot is one CPU and holds one *match*, not one entry: in every protocol
the entries of a match move in turn (a persistent bwrap entry is frozen
between its turns), so two of them never think at once and one core is all a
match can use. A worker with C usable CPUs thus plays at most C matches at once.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from runner.domain.match_values import MatchResult


def core_slots(usable: Iterable[int], cpus_per_match: int = 1) -> list[tuple[int, ...]]:
    """The match slots of a set of usable CPUs: disjoint groups of ``cpus_per_match``
    CPUs, lowest CPUs first; CPUs that do not fill a whole slot are left unused."""
    if cpus_per_match < 1:
        raise ValueError("a slot holds at least one CPU")
    cpus = sorted(set(usable))
    whole = len(cpus) - len(cpus) % cpus_per_match
    return [tuple(cpus[i : i + cpus_per_match]) for i in range(0, whole, cpus_per_match)]


#: the CPUs a local worker pins itself to at start (``tourney run`` with ``timing.reserved_cores``)
WORKER_CPUS_ENV = "TOURNEY_WORKER_CPUS"


def split_cores(usable: Iterable[int], reserved: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """``(runner's CPUs, matches' CPUs)``: the lowest ``reserved`` usable CPUs for the runner
    (none reserved: both get every CPU); ``ValueError`` if no CPU would be left for matches."""
    cpus = tuple(sorted(set(usable)))
    if reserved <= 0:
        return cpus, cpus
    if reserved >= len(cpus):
        raise ValueError(
            f"timing.reserved_cores: {reserved} of {len(cpus)} usable CPU(s) leaves none to play matches on"
        )
    return cpus[:reserved], cpus[reserved:]


def cpu_list(cpus: Iterable[int]) -> str:
    """CPUs as an environment variable holds them: ``"2,3,5"``."""
    return ",".join(str(c) for c in sorted(set(cpus)))


def parse_cpu_list(text: str) -> frozenset[int]:
    """The inverse of ``cpu_list``; ``ValueError`` on anything else."""
    return frozenset(int(part) for part in text.split(",") if part.strip())


def capped_concurrency(requested: int | None, usable: Iterable[int], *, exclusive: bool) -> int:
    """How many matches may be played at once on a machine with ``usable`` CPUs: the
    request (default one per usable CPU), and with exclusive cores never more than
    there are slots."""
    slots = len(core_slots(usable)) or 1
    wanted = requested if requested is not None else slots
    return min(wanted, slots) if exclusive else wanted


@dataclass(frozen=True)
class WorkerTiming:
    """What the results of one worker say about its timing conditions."""

    name: str
    cores: int
    concurrency: int
    matches: int
    exclusive: int  # matches played on a core of their own

    @property
    def label(self) -> str:
        return f"{self.name}: {self.cores} core(s), {self.concurrency} match(es) at once"


@dataclass(frozen=True)
class TimingSummary:
    """How the moves of a run were timed: what the config asked, what the workers did."""

    asked_exclusive: bool
    workers: tuple[WorkerTiming, ...]
    unknown: int  # results that say nothing (played before fair timing existed)

    @property
    def matches(self) -> int:
        return sum(w.matches for w in self.workers)

    @property
    def exclusive(self) -> int:
        return sum(w.exclusive for w in self.workers)

    @property
    def shared(self) -> int:
        return self.matches - self.exclusive

    def headline(self) -> str:
        if self.asked_exclusive:
            if self.matches and self.shared == 0 and self.unknown == 0:
                return "exclusive cores (one CPU per match, never shared)"
            return "exclusive cores asked for, NOT held by every match"
        return "shared cores (matches share the machine; timed moves depend on the load)"

    def line(self) -> str:
        """One line: the conditions, and per worker its cores and concurrency."""
        parts = [f"Timing: {self.headline()}"]
        if self.matches:
            parts.append(f"{self.exclusive} of {self.matches} match(es) on a core of their own")
        if self.unknown:
            parts.append(f"{self.unknown} match(es) without timing record")
        # grouped: a hundred workers of one kind are one phrase
        kinds = Counter((w.cores, w.concurrency) for w in self.workers)
        parts += [
            f"{n} worker(s) of {cores} core(s), each playing up to {at_once} match(es) at once"
            for (cores, at_once), n in sorted(kinds.items())
        ]
        return " · ".join(parts)


def timing_summary(asked_exclusive: bool, results: Sequence[MatchResult]) -> TimingSummary:
    """Gather the ``TimingConditions`` of played results per worker (first seen order)."""
    per_worker: dict[str, list[int]] = {}  # name -> [cores, concurrency, matches, exclusive]
    unknown = 0
    for r in results:
        if r.timing is None:
            if r.system_error is None:
                unknown += 1
            continue
        row = per_worker.setdefault(r.worker or "?", [0, 0, 0, 0])
        row[0] = max(row[0], r.timing.worker_cores)
        row[1] = max(row[1], r.timing.worker_concurrency)
        row[2] += 1
        row[3] += 1 if r.timing.exclusive else 0
    workers = tuple(WorkerTiming(name, *row) for name, row in per_worker.items())
    return TimingSummary(asked_exclusive, workers, unknown)
