"""kombu's Redis transport, with one client per channel for its synchronous commands.

kombu's Redis ``Channel`` builds a new ``redis.Redis`` object around its
connection pool for every synchronous command it sends (``conn_or_acquire``
without a client): with late acks that is twice per task in a worker's main
process (the unacked index written when a message is delivered, and removed
when it is acked) and once per task the coordinator sends. With redis-py 8 the
object costs about 0.1 ms to build (it copies its response callbacks), some
15% of a worker main process's CPU per task (issue 13, profiled with py-spy).

Here the channel builds that client once and reuses it. Nothing else changes:
the client holds no connection of its own (each command checks one out of the
channel's pool, as before, and a broken one is replaced by the pool; a new pool,
after a fork or a failed ping, gets a new client), the
commands, keys, acks, redelivery on a lost worker and the visibility timeout
are kombu's own. ``workers.celery_app`` names this transport in
``broker_transport``, which takes precedence over the URL's scheme; TLS
(``rediss://``) is still set by ``broker_use_ssl``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from kombu.transport import redis as kombu_redis

#: what ``broker_transport`` names
TRANSPORT = "workers.broker_transport:Transport"


class Channel(kombu_redis.Channel):  # type: ignore[misc]  # kombu is untyped
    _sync_client: Any = None

    @contextlib.contextmanager
    def conn_or_acquire(self, client: Any = None) -> Iterator[Any]:
        if client:
            yield client
            return
        pool = self.pool  # kombu drops its pools after a fork or a failed ping: follow it
        if self._sync_client is None or self._sync_client.connection_pool is not pool:
            self._sync_client = self._create_client()  # type: ignore[no-untyped-call]
        yield self._sync_client


class Transport(kombu_redis.Transport):  # type: ignore[misc]
    Channel = Channel
