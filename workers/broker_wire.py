"""How a match's task goes onto the broker, and what a failed broker command becomes.

Both sides queue ``tourney.play_match`` tasks: the coordinator its matches, a worker the
second copy of a straggler it passes on. ``TaskWire.send`` is the one way they do: with
``workers.warm``'s ``hand_task_message`` on (the default) it writes Celery's message itself
(``workers.task_message``: no Celery import on the coordinator's start, and the commands that
must precede the task go in the same round trip); off, Celery's own producer sends it.
Measured side by side (docs/benchmarks.md, "Speed tricks and their switches"): the hand-built
message made ``tourney run`` about 8% faster end to end, so it stays the default.

``wire_error`` is the one mapper from the Redis client's errors (and kombu's, when Celery's
producer sends) to the project's (``runner.errors``): ``BrokerUnreachable`` when the broker did
not answer (``BrokerPasswordRefused``: not with this password; ``BrokerNotRedis``: not in
Redis's protocol), ``BrokerRefused`` when it answered with an error. ``wire_errors()`` applies
it around a block of broker commands: every module of ``workers`` and the coordinator's
dispatcher (through ``runner.orchestration.workers_gate``) send their commands inside it and
catch only the project's errors, so this is the one module that names the client's
(tests/core/test_broker_errors_mapped.py keeps it so).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from types import TracebackType
from typing import Any

import redis

from runner.errors import (
    BrokerNotRedis,
    BrokerPasswordRefused,
    BrokerRefused,
    BrokerUnreachable,
    BrokerWireError,
)
from workers.broker_keys import TASK_NAME
from workers.task_message import origin, task_message
from workers.warm import switches

#: what a broker older than the client's error table says of a password it refuses
_PASSWORD_REFUSED = ("NOAUTH", "WRONGPASS")


def wire_error(error: Exception) -> BrokerWireError:
    """The project's error for a failed broker command: ``BrokerRefused`` when the broker
    answered with an error (``ResponseError``); ``BrokerUnreachable`` for a connection that
    failed or timed out (kombu's ``OperationalError`` too), ``BrokerPasswordRefused`` and
    ``BrokerNotRedis`` among them; ``BrokerWireError`` itself for any other client error."""
    if isinstance(error, BrokerWireError):
        return error
    detail = f"{type(error).__name__}: {error}"
    reason = str(error) or type(error).__name__
    if isinstance(error, redis.exceptions.AuthenticationError) or (
        isinstance(error, redis.exceptions.ResponseError) and any(w in str(error) for w in _PASSWORD_REFUSED)
    ):
        return BrokerPasswordRefused(detail, reason)
    if isinstance(error, redis.exceptions.ResponseError):
        return BrokerRefused(detail, reason)
    if isinstance(error, redis.exceptions.InvalidResponse):
        return BrokerNotRedis(detail, reason)
    if isinstance(error, redis.exceptions.RedisError) and not isinstance(
        error, (redis.exceptions.ConnectionError, redis.exceptions.TimeoutError)
    ):
        return BrokerWireError(detail, reason)
    return BrokerUnreachable(detail, reason)


class _WireErrors:
    """``wire_errors()``'s context: a class, not a generator, so that the per-match commands
    of a worker (the start, each beat, the result) pay one method call on the way in and out."""

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None
    ) -> None:  # None, not bool: it never swallows an error (mypy then knows a return inside returns)
        if isinstance(error, redis.exceptions.RedisError):
            raise wire_error(error) from error


_WIRE_ERRORS = _WireErrors()


def wire_errors() -> _WireErrors:
    """Broker commands inside raise ``BrokerWireError`` (``wire_error``) instead of the client's."""
    return _WIRE_ERRORS


#: commands queued on a pipeline before the task (``TaskWire.send``'s ``first``)
PipelineCommands = Callable[[redis.client.Pipeline], object]


class TaskWire:
    """Queues match tasks on one broker, through ``client`` (the caller's Redis client)."""

    def __init__(self, client: redis.Redis, broker_url: str) -> None:
        self.client = client
        self.hand_built = switches().hand_task_message
        self.sender = origin()
        self._celery: Any = None
        if not self.hand_built:
            # local: Celery costs about 0.2 s of CPU to import; only its producer needs it
            from workers.celery_app import app, configure

            self._celery = app if app.conf.broker_url == broker_url else configure(broker_url)

    def send(
        self,
        queue: str,
        task_id: str,
        args: list[Any],
        *,
        argsrepr: str,
        first: PipelineCommands | None = None,
        at_head: bool = False,
    ) -> None:
        """Queue ``TASK_NAME(*args)`` with id ``task_id`` on ``queue``, after ``first``'s
        commands (Redis runs a connection's commands in order: no worker can take the task
        before they are applied). ``argsrepr``: what a worker's log shows for the arguments.
        ``at_head``: the next task any worker takes (a task passed on to another worker; Celery's
        Redis transport pushes on the left and pops on the right); Celery's own producer cannot
        place a task there, and queues it last.
        ``BrokerWireError`` if the broker fails either."""
        if self.hand_built:
            message = task_message(task_id, args, argsrepr=argsrepr, sender=self.sender, queue=queue)
            with wire_errors(), self.client.pipeline(transaction=False) as pipe:
                if first is not None:
                    first(pipe)
                if at_head:
                    pipe.rpush(queue, message)
                else:
                    pipe.lpush(queue, message)
                pipe.execute()
            return
        if first is not None:
            with wire_errors(), self.client.pipeline(transaction=False) as pipe:
                first(pipe)
                pipe.execute()
        # local: kombu is loaded with Celery's producer (see __init__)
        from kombu.exceptions import OperationalError

        try:
            # retry=False: the caller waits for the broker its own way (and shows it)
            self._celery.send_task(
                TASK_NAME, args=args, task_id=task_id, queue=queue, argsrepr=argsrepr, kwargsrepr="{}",
                retry=False,
            )  # fmt: skip
        except (OperationalError, redis.exceptions.RedisError) as e:
            raise wire_error(e) from e

    def close(self) -> None:
        """Close Celery's producer connections, if this wire opened any."""
        if self._celery is not None:
            with contextlib.suppress(Exception):
                self._celery.pool.force_close_all()
