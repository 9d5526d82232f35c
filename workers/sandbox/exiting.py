"""Leftover processes after a move's program exits, and the grace they get (``sandbox: none``).

After a move's program exits, a descendant that is still there is
``left_processes`` (seed 003: "There should be no child processes alive
after the top-level process exits"). Whether one that is about to go is
gone by the time we look depends only on when a loaded machine schedules
it (a searcher that wrote its answer and is inside ``exit()``, one that was
SIGTERMed), so leftovers get a grace (``Limits.exit_grace_ms``) before they
count; and the grace is the move's own time: it runs on the move's wall
clock (never past its deadline), and what leftovers use is the move's CPU.
Nothing a leftover does after the exit is free.

"Gone" reads the kernel's own view in ``/proc/PID/stat``: a zombie or dead
task, or the task flag ``PF_EXITING`` (set first thing in the exit path,
also for every thread of a group killed by a fatal signal). Such a process
runs none of its own code any more: it never counts, whatever the load, and
the move does not wait for it. A pending signal proves nothing (a process
can block the signal it was sent, or raise it itself, and go on computing).
The bubblewrap sandbox's launcher (``launcher.c``: ``is_exiting``,
``count_alive``) applies the same rule inside its PID namespace; this module
is its twin for the plain host, and the rule's one Python statement, so the
two hosts give an entry the same verdict.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

#: ``/proc/PID/stat`` flags: the task has begun to exit (include/linux/sched.h)
PF_EXITING = 0x00000004
#: how often leftovers are looked at again during a grace
POLL_S = 0.002

PROC = Path("/proc")


def is_exiting(pid: int, proc: Path = PROC) -> bool:
    """Whether process ``pid`` is in the kernel's exit path (a process that is gone is)."""
    try:
        stat = (proc / str(pid) / "stat").read_text(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return True
    except OSError:
        return False
    # "pid (comm) S ppid pgrp session tty tpgid flags ...": comm may hold ')' itself
    _, _, rest = stat.rpartition(")")
    fields = rest.split()
    if not fields:
        return False
    if fields[0] in ("Z", "X", "x"):
        return True
    try:
        return bool(int(fields[6]) & PF_EXITING)
    except (IndexError, ValueError):
        return False


def leftovers_after_grace(
    alive: Callable[[], list[int]],
    grace_s: float,
    *,
    exiting: Callable[[int], bool] = is_exiting,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[int]:
    """The pids ``alive()`` lists that are still alive and not exiting after up to ``grace_s``.

    Returns as soon as every process left is gone or exiting (then ``[]``), else
    at the end of the grace. The caller counts the time spent here as the move's.
    A process once seen exiting stays so (the kernel's exit path has no way back).
    """
    deadline = clock() + max(0.0, grace_s)
    seen_exiting: set[int] = set()
    while True:
        running = [pid for pid in alive() if pid not in seen_exiting]
        for pid in running:
            if exiting(pid):
                seen_exiting.add(pid)
        running = [pid for pid in running if pid not in seen_exiting]
        if not running or clock() >= deadline:
            return running
        sleep(POLL_S)
