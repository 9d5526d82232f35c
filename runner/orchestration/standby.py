"""The local worker's early start: ``tourney run`` spawns it before its own imports.

A ``tourney worker`` spends about half a second importing Celery, kombu, redis and the
playing modules before it can take a task. ``runner.cli.main`` therefore starts one at
the very beginning of ``tourney run`` (cheap checks of the command line only: not
``--inline``, not ``--no-local-workers``), in standby (``tourney worker --standby``,
``workers.standby``): it imports
all that while the coordinator imports its own modules, loads the config and opens the
run, then waits for one JSON line on its stdin. ``LocalWorkers`` hands it the command
line, environment and log file a fresh worker would have got (``hand_off``); from then on
it is that worker. If the run never gets that far (a bad config, a refused resume),
``discard`` kills it, and EOF on its stdin (the coordinator gone) ends it too; it dies
with the coordinator in any case (PDEATHSIG, set by itself).

Nothing secret is on its command line: the broker URL travels in the environment sent
through the pipe. The command line repeats ``tourney run``'s own arguments (``--broker``
masked) so that ``ps`` shows which run it serves.

``TOURNEY_STANDBY=0`` (or ``TOURNEY_NO_STANDBY=1``) turns it off: every worker then starts
as before (``runner.orchestration.warm``).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from runner.orchestration import warm

#: the standby's command: ``tourney worker --standby COORDINATOR_PID RUN_ARGS...`` (``ps`` and
#: whoever looks for a worker by its command line see a ``tourney worker``); ``runner.cli``
#: hands it to ``workers.standby`` before any parsing
STANDBY_FLAG = "--standby"

_standby: subprocess.Popen[bytes] | None = None


def wanted(argv: Sequence[str]) -> bool:
    """Whether this command line will start local workers, judged from its words alone
    (argparse also accepts unambiguous prefixes: ``--inl``). A wrong yes costs a standby
    that is killed unused; a wrong no, a worker started the ordinary way."""
    if not argv or argv[0] != "run" or not warm.switches().standby:
        return False
    for word in argv[1:]:
        flag = word.split("=", 1)[0]
        if flag in ("-h", "--help"):
            return False
        if len(flag) > 4 and ("--inline".startswith(flag) or "--no-local-workers".startswith(flag)):
            return False
    return True


def _shown(argv: Sequence[str]) -> list[str]:
    """``argv`` for ``ps``: the broker URL masked (it may hold a password)."""
    out: list[str] = []
    hide_next = False
    for word in argv:
        if hide_next:
            out.append("***")
            hide_next = False
        elif word.startswith("--broker="):
            out.append("--broker=***")
        else:
            out.append(word)
            hide_next = word == "--broker"
    return out


def start(argv: Sequence[str]) -> None:
    """Start the standby worker for the ``tourney`` command line ``argv`` if it will want one."""
    global _standby
    if _standby is not None or not wanted(argv):
        return
    try:
        _standby = subprocess.Popen(
            [sys.executable, "-m", "runner.cli", "worker", STANDBY_FLAG, str(os.getpid()), *_shown(argv)],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,  # its own session, as every local worker: stopped as a group
        )
    except OSError:
        _standby = None  # the worker will be started the ordinary way


def hand_off(argv: Sequence[str], env: Mapping[str, str], log: Path) -> subprocess.Popen[bytes] | None:
    """Make the standby the worker ``runner.cli`` ``argv`` would start with ``env``, its
    output going to ``log``; None if there is no standby (or it died): start one yourself."""
    global _standby
    proc, _standby = _standby, None
    if proc is None or proc.stdin is None:
        return None
    order = {"argv": list(argv), "env": dict(env), "log": str(log)}
    try:
        proc.stdin.write(json.dumps(order).encode() + b"\n")
        proc.stdin.close()
    except OSError:  # it is gone (broken pipe): never mind it
        _kill(proc)
        return None
    return proc


def discard() -> None:
    """The run did not hand the standby its work (it failed, or needed no local worker)."""
    global _standby
    proc, _standby = _standby, None
    if proc is not None:
        _kill(proc)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    # our child, unreaped: its pid names it alone; it has started nothing of its own yet
    with contextlib.suppress(OSError):
        proc.kill()
    with contextlib.suppress(OSError, ValueError):
        if proc.stdin is not None:
            proc.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(5.0)
