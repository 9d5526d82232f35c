"""A match's task message, written as Celery's client writes it, without importing Celery.

The coordinator only ever sends one kind of task to one queue. Celery's client
costs it about 0.2 s of CPU to import (Celery, kombu, amqp) on its start's
critical path, and about a millisecond per message to build and send
(issue 13: a run's fixed cost). The message itself is small and documented:
Celery's task message protocol, version 2 (Celery's "Message Protocol" page),
in the form kombu's Redis transport stores it: one JSON document per message,
``LPUSH``ed onto the queue's list, the body base64-encoded JSON of ``[args,
kwargs, embed]``. The workers still consume with Celery, which cannot tell
these messages from its own client's.

``tests/integration/test_task_message.py`` compares what this writes with what
Celery's own ``send_task`` writes to a real Redis, field by field, and a real
worker plays every run's matches from these messages.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import uuid
from typing import Any

from workers.broker_keys import TASK_NAME

#: the message body's embed part: no callbacks, errbacks, chain or chord
_NO_WORKFLOW = {"callbacks": None, "errbacks": None, "chain": None, "chord": None}


def origin() -> str:
    """Who sent the task, as Celery names a client (``gen<pid>@<host>``; shown in worker logs)."""
    return f"gen{os.getpid()}@{socket.gethostname()}"


def task_message(task_id: str, args: list[Any], *, argsrepr: str, sender: str, queue: str) -> bytes:
    """The bytes to ``LPUSH`` onto ``queue``: ``TASK_NAME(*args)`` with id ``task_id``.

    ``argsrepr`` is what a worker's log shows for the arguments (a match's envelope is
    long and signed: the log names the match instead); ``sender``: ``origin()``."""
    body = json.dumps([args, {}, _NO_WORKFLOW]).encode()
    headers: dict[str, Any] = {
        "lang": "py",
        "task": TASK_NAME,
        "id": task_id,
        "shadow": None,
        "eta": None,
        "expires": None,
        "group": None,
        "group_index": None,
        "retries": 0,
        "timelimit": [None, None],
        "root_id": task_id,
        "parent_id": None,
        "argsrepr": argsrepr,
        "kwargsrepr": "{}",
        "origin": sender,
        "ignore_result": None,
        "replaced_task_nesting": 0,
        "stamped_headers": None,
        "stamps": {},
    }
    properties: dict[str, Any] = {
        "correlation_id": task_id,
        "reply_to": str(uuid.uuid4()),
        "argsrepr": argsrepr,
        "kwargsrepr": "{}",
        "delivery_mode": 2,  # persistent
        # the default exchange: the routing key is the queue's name (kombu's Redis transport
        # routes, and restores an unacked message, by it)
        "delivery_info": {"exchange": "", "routing_key": queue},
        "priority": 0,
        "body_encoding": "base64",
        # the transport's handle for acking this delivery (kombu sets a fresh uuid per publish)
        "delivery_tag": str(uuid.uuid4()),
    }
    message: dict[str, Any] = {
        "body": base64.b64encode(body).decode(),
        "content-encoding": "utf-8",
        "content-type": "application/json",
        "headers": headers,
        "properties": properties,
    }
    return json.dumps(message).encode()
