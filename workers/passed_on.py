"""Where a worker puts back a task it passes on (docs/fleet.md, "Verification").

A task a worker cannot play (a verification replay or a straggler's copy of its own match, a
task its ceilings refused, one of a run that quarantined it) goes back on the queue for another
worker. The first time at the head: the next task any worker takes, so another worker takes it
during this one's pause (put at the tail, the copies two workers passed on at once kept their
order, and each kept taking only its own). Taken back by this worker process after all, no
other worker took it: then at the tail, behind the queue's other tasks. Put at the head again,
a worker alone on the queue took it straight back, pause after pause, and never reached the
tasks behind it (the next match of a run keeping one task queued, its fair share: the run
never ended).
"""

from __future__ import annotations

from collections import OrderedDict

#: tasks remembered per worker process (the oldest forgotten first): a few pauses' worth
REMEMBERED = 1024


class PassedOn:
    """The tasks this worker process passed on, by the digest of their signed envelope."""

    def __init__(self, remembered: int = REMEMBERED) -> None:
        self._seen: OrderedDict[str, None] = OrderedDict()
        self._remembered = remembered

    def at_head(self, task: str) -> bool:
        """Whether to put ``task`` back at the head of the queue (else at the tail): at the
        head only if this process has not passed it on before."""
        first = task not in self._seen
        self._seen[task] = None
        self._seen.move_to_end(task)
        while len(self._seen) > self._remembered:
            self._seen.popitem(last=False)
        return first


__all__ = ["REMEMBERED", "PassedOn"]
