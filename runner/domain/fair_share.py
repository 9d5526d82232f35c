"""How the runs of one organiser share its workers (docs/fleet.md, "Runs share the pool"): a
pure rule.

Every run of an organiser sends its tasks to one queue (``tourney.<organiser key id>``), which
the workers empty from its head. A run that queued all of its matches at once would be served
before any run that starts after it (first in, first out): the second run of a pair waited for
the whole of the first. So a run keeps at most its *share* of queue slots filled with tasks no
worker started yet, and refills them as its tasks are taken. With every run's slots kept full,
the queue holds each run's tasks in proportion to its slots, and the workers, taking whatever
is at the head, serve the runs in that proportion: equal slots, turn and turn about.

The slots: one per connected worker process (enough to keep every worker fed while the
coordinators refill), handed out by priority (higher first), then equally among the runs of one
priority, never more to a run than it can use now (its ``demand``: matches it could queue);
what one cannot use goes to the others. A run with something to play always keeps one slot: a
run of lower priority is slowed down, never stopped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class RunClaim:
    """One live run of the organiser, as it says so in the broker."""

    run: str
    #: higher first (``tourney run --priority``, default 0)
    priority: int
    #: matches it could queue now: pending (not sent) plus queued (sent, not started)
    demand: int


@dataclass(frozen=True)
class Sharing:
    """What one run may queue, and with whom it shares the pool (its live panel says so)."""

    #: tasks not yet started this run may keep on the queue
    slots: int
    #: the organiser's worker processes the slots were counted from
    workers: int
    #: the organiser's live runs, this one included
    runs: int


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def queue_slots(claims: Sequence[RunClaim], workers: int) -> dict[str, int]:
    """Queue slots per run (``run`` -> slots) for ``workers`` connected worker processes.

    By priority, higher first; within one priority, water-filling: the runs that want least
    get what they want, the others share what is left equally (rounded up: a slot too many
    keeps a worker fed, and the proportion between the runs is what makes the turns). Every run
    with a demand gets at least one slot; a run with none gets none."""
    total = max(workers, 1)
    given: dict[str, int] = {}
    left = total
    for priority in sorted({c.priority for c in claims}, reverse=True):
        group = sorted((c for c in claims if c.priority == priority), key=lambda c: (c.demand, c.run))
        for i, c in enumerate(group):
            remaining = len(group) - i
            if max(c.demand, 0) * remaining <= left:  # it wants less than an equal part: all of it
                given[c.run] = max(c.demand, 0)
                left -= given[c.run]
                continue
            level = _ceil_div(left, remaining) if left > 0 else 0  # the rest share alike
            for rest in group[i:]:
                given[rest.run] = min(rest.demand, level)
            left = 0
            break
    return {c.run: max(given.get(c.run, 0), 1 if c.demand > 0 else 0) for c in claims}


def sharing(claims: Sequence[RunClaim], workers: int, me: RunClaim) -> Sharing:
    """``me``'s slots among ``claims`` (``me`` counted once, with its own demand as it is now)."""
    others = [c for c in claims if c.run != me.run]
    slots = queue_slots([*others, me], workers)
    return Sharing(slots=slots[me.run], workers=workers, runs=len(others) + 1)
