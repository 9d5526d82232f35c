"""The workers side's speed tricks, each behind one switch read here (issue 27, item 4).

Every trick below only makes a worker start or hand matches on sooner: with its switch off
the worker does the same work the plain way and plays the same games. docs/benchmarks.md
("Speed tricks and their switches") lists each with its measured gain; the coordinator side
has its own (``runner.orchestration.warm``). A switch is an environment variable, read in
``WorkerSwitches.from_env`` only; ``0`` (or ``no``, ``false``, ``off``) turns its trick off.
A local worker inherits the coordinator's environment, so one variable set for ``tourney run``
switches its workers too.

* ``TOURNEY_HAND_TASK_MESSAGE``: a match's task message is written as Celery's client writes
  it, without importing Celery (``workers.task_message``); off, Celery's own producer sends it
  (``workers.broker_wire.send_task``).
* ``TOURNEY_WORKER_PRELOAD``: what playing a match imports is imported before the pool forks
  (``preload_playing``), and the standby worker imports Celery's worker classes as well while
  the coordinator starts (``preload_worker``).
* ``TOURNEY_SANDBOX_REUSE``: sandboxes (bwrap) and game directories (``none``) are reset and
  reused across games (``workers.sandbox.pool``, ``workers.sandbox.plain_reuse``).
* ``TOURNEY_BEGIN_SCRIPT``: a match starts in one round trip, a Lua script (``workers.tasks``);
  off, the checks go in a pipeline and the ``started`` note after them.
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Mapping
from dataclasses import dataclass

HAND_TASK_MESSAGE_ENV = "TOURNEY_HAND_TASK_MESSAGE"
PRELOAD_ENV = "TOURNEY_WORKER_PRELOAD"
SANDBOX_REUSE_ENV = "TOURNEY_SANDBOX_REUSE"
BEGIN_SCRIPT_ENV = "TOURNEY_BEGIN_SCRIPT"


def _on(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "1").strip().lower() not in ("0", "no", "false", "off")


@dataclass(frozen=True)
class WorkerSwitches:
    """Which of the workers side's tricks are on (all, unless switched off)."""

    hand_task_message: bool = True
    preload: bool = True
    sandbox_reuse: bool = True
    begin_script: bool = True

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WorkerSwitches:
        """The one place the switches are read (``os.environ`` unless ``env`` is given)."""
        env = os.environ if env is None else env
        return cls(
            hand_task_message=_on(env, HAND_TASK_MESSAGE_ENV),
            preload=_on(env, PRELOAD_ENV),
            sandbox_reuse=_on(env, SANDBOX_REUSE_ENV),
            begin_script=_on(env, BEGIN_SCRIPT_ENV),
        )


def switches() -> WorkerSwitches:
    """The switches as the environment sets them now (read at each call: cheap, and a test
    that sets a variable sees it)."""
    return WorkerSwitches.from_env()


#: what ``workers.tasks.execute`` imports lazily, at its first match (the referee, the
#: sandboxes, the cache)
PLAYING_MODULES = (
    "workers.artifacts",
    "workers.beacon",
    "workers.executor",
    "workers.live",
    "workers.match",
    "workers.sandbox.cores",
    "workers.sandbox.plain_reuse",
    "workers.sandbox.pool",
)

#: what ``tourney worker`` imports before its first task, besides the playing modules:
#: Celery's worker classes (``app.Worker``'s base, its consumer, the prefork pool), the
#: Redis transport, the task module and the worker's own command
WORKER_MODULES = (
    "celery.apps.worker",
    "celery.worker.consumer",
    "celery.concurrency.prefork",
    "kombu.transport.redis",
    "workers.tasks",
    "workers.worker_cli",
)


def preload_playing() -> None:
    """Import what playing a match needs in a worker's main process, before it forks its pool
    processes: imported lazily in each pool process instead, it cost each of them about 0.3 s
    of CPU at its first match, inside the run's play loop (issue 13)."""
    if switches().preload:
        for module in PLAYING_MODULES:
            importlib.import_module(module)


def preload_worker() -> None:
    """What the worker's start would import (most of its cost), imported by the standby
    worker while nothing waits for it (``workers.standby``)."""
    if switches().preload:
        for module in (*WORKER_MODULES, *PLAYING_MODULES):
            importlib.import_module(module)
