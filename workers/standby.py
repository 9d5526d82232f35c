"""A local ``tourney worker`` started before the run knows it needs one (``tourney worker --standby``).

``tourney run`` starts this at its very beginning (``runner.orchestration.standby``):
it imports what a worker needs (Celery, kombu, redis, the task and playing modules,
Celery's worker classes) while the coordinator loads the config and opens the run,
then reads ONE JSON line on stdin: ``{"argv": [...], "env": {...}, "log": PATH}``, the
``runner.cli`` command line, environment and log file a worker started then would have
had. It then is that worker (``runner.cli``, handed in as ``run_cli``, runs ``argv``), its
output going to ``log``.

EOF instead of that line (the run failed before it started its workers): exit 0,
silently, leaving nothing behind. It dies with the coordinator (PDEATHSIG, set first
thing; its first argument is the coordinator's pid, to catch a coordinator that died
before). The rest of its command line is ``tourney run``'s, for ``ps`` only.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import time
from collections.abc import Callable

_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    # this process's own symbols, libc among them: find_library("c") runs ldconfig (20 ms)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the coordinator died before prctl took effect
        os._exit(0)


def _preload() -> None:
    """Import what the worker's start would (most of its cost), while nothing waits for it."""
    # local: this is the preload itself, made while the coordinator imports (runner/orchestration/standby.py)
    from workers.warm import preload_worker

    preload_worker()


def _redirect_output(log: str) -> None:
    """stdout and stderr to ``log`` (appended), stdin from /dev/null: as a worker started with them."""
    fd = os.open(log, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)


def main(argv: list[str], run_cli: Callable[[list[str]], int]) -> int:
    """``argv``: the coordinator's pid, then ``tourney run``'s words (for ``ps``); ``run_cli``
    runs a ``tourney`` command line (``runner.cli``'s, handed in: workers do not import it)."""
    _die_with(int(argv[0]))
    t0 = time.monotonic()
    _preload()
    ready_s = time.monotonic() - t0
    line = sys.stdin.buffer.readline()
    if not line.strip():
        return 0  # the run did not get as far as its workers
    order = json.loads(line)
    _redirect_output(str(order["log"]))
    os.environ.clear()
    os.environ.update({str(k): str(v) for k, v in order["env"].items()})
    print(
        f"tourney worker: started in standby (ready after {ready_s:.2f}s, "
        f"handed its work after {time.monotonic() - t0:.2f}s)",
        flush=True,
    )
    return run_cli([str(a) for a in order["argv"]])
