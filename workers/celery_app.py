"""The one Celery app, its settings, and the Redis keys both sides share (docs/scale-out.md).

Celery only *delivers* work: the coordinator's run store decides what a
result means. The settings make delivery at-least-once and the store makes
acceptance exactly-once:

* ``task_acks_late`` + ``task_reject_on_worker_lost``: a message is acked
  after the match, and a pool process killed mid-match puts it back;
* ``worker_prefetch_multiplier=1``: a worker holds no more matches than it
  has processes, so a newly joined worker finds work waiting in the queue;
* JSON only, both ways (``accept_content=['json']``): a worker never
  unpickles what a broker hands it;
* ``visibility_timeout`` (Redis transport: when an unacked message is handed
  out again) is ``VISIBILITY_TIMEOUT_S`` = 12 hours, far above any match the
  limits allow (a match is at most games x moves x the per-move limit; 12 h
  covers e.g. 24 games x 1000 moves x 1.8 s). Should a match ever outlast it,
  the redelivered copy is skipped by the attempt check below, or its result is
  ignored as a duplicate; nothing is counted twice;
* broker connections retry forever, at startup and after a loss, so a Redis
  restart mid-run pauses a worker instead of killing it.

The broker URL is given at run time (``configure(url)``) by ``tourney worker``;
the coordinator uses this app only with ``TOURNEY_HAND_TASK_MESSAGE=0``, to send its tasks
with Celery's producer (``workers.broker_wire``); by default it writes the message itself.

The Redis keys both sides share, the queue's name and the task message the
coordinator writes without Celery are in ``workers.broker_keys`` and
``workers.task_message``.
"""

from __future__ import annotations

import ssl
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from celery import Celery

from runner.domain.wire import ENVELOPE_VERSION as ENVELOPE_VERSION
from workers.broker_keys import KEYS as KEYS
from workers.broker_keys import QUARANTINE_TTL_S as QUARANTINE_TTL_S
from workers.broker_keys import QUEUE_PREFIX as QUEUE_PREFIX
from workers.broker_keys import TASK_NAME as TASK_NAME
from workers.broker_keys import VISIBILITY_TIMEOUT_S as VISIBILITY_TIMEOUT_S
from workers.broker_keys import queue_for as queue_for

SETTINGS: dict[str, Any] = {
    "task_acks_late": True,
    "task_reject_on_worker_lost": True,
    "worker_prefetch_multiplier": 1,
    "task_serializer": "json",
    "result_serializer": "json",
    "accept_content": ["json"],
    "result_accept_content": ["json"],
    "task_ignore_result": True,  # results travel through the run's inbox list, see KEYS
    "task_default_queue": QUEUE_PREFIX,  # never used: every task names its organiser's queue
    "task_create_missing_queues": True,
    "broker_transport_options": {"visibility_timeout": VISIBILITY_TIMEOUT_S},
    "broker_connection_retry": True,
    "broker_connection_retry_on_startup": True,
    "broker_connection_max_retries": None,  # forever: survive a Redis restart
    "broker_channel_error_retry": True,
    "worker_cancel_long_running_tasks_on_connection_loss": False,  # a running match keeps going
    "worker_send_task_events": False,
    # nothing here uses Celery's remote control (inspect, ping, broadcast): without it a
    # worker declares no pidbox queue and consumes from one queue only
    "worker_enable_remote_control": False,
    "task_send_sent_event": False,
    "worker_hijack_root_logger": False,
    "worker_redirect_stdouts": False,
    "worker_max_tasks_per_child": 200,  # recycle pool processes now and then (leaks in long runs)
    "task_publish_retry": True,
    "task_publish_retry_policy": {
        "max_retries": 30,
        "interval_start": 0.2,
        "interval_step": 0.5,
        "interval_max": 2.0,
    },
    "broker_heartbeat": 0,
}

app = Celery("tourney", include=["workers.tasks"])
app.conf.update(SETTINGS)


def configure(broker_url: str) -> Celery:
    """Point the app at a broker (the URL is only known at run time).

    ``rediss://`` URLs carry their TLS options in the query (``ssl_ca_certs=PATH``,
    ``ssl_cert_reqs=required``, optionally ``ssl_certfile``/``ssl_keyfile``); redis-py reads
    them from the URL, Celery's transport from ``broker_use_ssl``."""
    app.conf.broker_url = broker_url
    app.conf.broker_use_ssl = tls_options(broker_url)
    return app


def tls_options(broker_url: str) -> dict[str, Any] | None:
    """Celery's ``broker_use_ssl`` for a ``rediss://`` URL (None for plain ``redis://``)."""
    parts = urlsplit(broker_url)
    if parts.scheme != "rediss":
        return None
    query = dict(parse_qsl(parts.query))
    reqs = {"none": ssl.CERT_NONE, "optional": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
    options: dict[str, Any] = {
        "ssl_cert_reqs": reqs.get(query.get("ssl_cert_reqs", "required"), ssl.CERT_REQUIRED)
    }
    for name in ("ssl_ca_certs", "ssl_certfile", "ssl_keyfile"):
        if query.get(name):
            options[name] = query[name]
    return options
