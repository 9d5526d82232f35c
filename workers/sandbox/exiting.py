"""Whether leftover processes are on their way out, and the grace they get (``sandbox: none``).

After a move's program exits, a descendant that is still there is
``left_processes`` (seed 003: "There should be no child processes alive
after the top-level process exits"). A program that SIGTERMs its searchers
and exits at once leaves them dying: whether they are gone by the time we
look depends only on when a loaded machine schedules them, so such
processes get a grace (``Limits.exit_grace_ms``) before they count. A
process alive and not exiting is charged at once, without waiting.

"On its way out" reads the kernel's own view in ``/proc/PID``: a zombie or
dead task, the task flag ``PF_EXITING`` (set first thing in the exit path,
also for every thread of a group killed by a fatal signal), or an ending
signal pending (blocked or not: a searcher finishing a step with signals
blocked was told all the same). The bubblewrap sandbox's launcher
(``launcher.c``: ``is_exiting``) applies the same rule inside its PID
namespace; this module is its twin for the plain host, and the rule's one
Python statement, so the two hosts give an entry the same verdict.
"""

from __future__ import annotations

import signal
import time
from collections.abc import Callable
from pathlib import Path

#: ``/proc/PID/stat`` flags: the task has begun to exit (include/linux/sched.h)
PF_EXITING = 0x00000004
#: signals whose arrival means "told to go"
ENDING_SIGNALS = frozenset({signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGKILL, signal.SIGTERM})
_ENDING_MASK = sum(1 << (int(s) - 1) for s in ENDING_SIGNALS)
#: how often leftovers are looked at again during a grace
POLL_S = 0.002

PROC = Path("/proc")


def _status_mask(text: str, name: str) -> int:
    for line in text.splitlines():
        if line.startswith(name):
            try:
                return int(line[len(name) :].strip(), 16)
            except ValueError:
                return 0
    return 0


def is_exiting(pid: int, proc: Path = PROC) -> bool:
    """Whether process ``pid`` is on its way out (a process that is gone is)."""
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
        if int(fields[6]) & PF_EXITING:
            return True
    except (IndexError, ValueError):
        pass
    try:
        status = (proc / str(pid) / "status").read_text(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return True
    except OSError:
        return False
    # blocked too: a searcher finishing a step with signals blocked was told all the same
    pending = _status_mask(status, "SigPnd:") | _status_mask(status, "ShdPnd:")
    return bool(pending & _ENDING_MASK)


def leftovers_after_grace(
    alive: Callable[[], list[int]],
    grace_s: float,
    *,
    exiting: Callable[[int], bool] = is_exiting,
    clock: Callable[[], float] = time.monotonic,
    sleep: Callable[[float], None] = time.sleep,
) -> list[int]:
    """The pids ``alive()`` still lists once those on their way out had up to ``grace_s`` to go.

    Returns at once when nothing is left, or when some process left is alive
    and not exiting (it is charged whatever the others do). A process once
    seen exiting stays so for this grace: its SIGTERM handler may be running
    now, with the signal no longer pending.
    """
    deadline = clock() + max(0.0, grace_s)
    seen_exiting: set[int] = set()
    while True:
        left = alive()
        if not left:
            return left
        for pid in left:
            if pid not in seen_exiting and exiting(pid):
                seen_exiting.add(pid)
        if any(pid not in seen_exiting for pid in left) or clock() >= deadline:
            return left
        sleep(POLL_S)
