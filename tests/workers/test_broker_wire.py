"""The broker wire's one mapper from the Redis client's errors to the project's."""

from __future__ import annotations

import socket

import pytest
import redis

from runner.errors import (
    BrokerNotRedis,
    BrokerPasswordRefused,
    BrokerRefused,
    BrokerUnreachable,
    BrokerWireError,
    RunHalted,
)
from workers.broker_wire import TaskWire, wire_error, wire_errors


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (redis.exceptions.ConnectionError("refused"), BrokerUnreachable),
        (redis.exceptions.TimeoutError("timed out"), BrokerUnreachable),
        (redis.exceptions.BusyLoadingError("loading"), BrokerUnreachable),
        (redis.exceptions.AuthenticationError("bad password"), BrokerPasswordRefused),
        (redis.exceptions.ResponseError("NOAUTH Authentication required."), BrokerPasswordRefused),
        (redis.exceptions.InvalidResponse("Protocol Error: H"), BrokerNotRedis),
        (redis.exceptions.ResponseError("NOSCRIPT"), BrokerRefused),
        (redis.exceptions.NoPermissionError("this user has no permissions to run 'evalsha'"), BrokerRefused),
        (redis.exceptions.ReadOnlyError("replica"), BrokerRefused),
        (redis.exceptions.DataError("Invalid input of type: 'dict'"), BrokerWireError),
    ],
)
def test_each_client_error_maps_to_one_project_error(error: Exception, expected: type) -> None:
    mapped = wire_error(error)
    assert type(mapped) is expected and isinstance(mapped, RunHalted)
    assert str(error) in str(mapped) and mapped.reason == str(error)
    with pytest.raises(expected) as raised, wire_errors():
        raise error
    assert raised.value.__cause__ is error


def _unused_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_task_sent_to_a_broker_that_is_not_there_is_a_broker_unreachable() -> None:
    url = f"redis://127.0.0.1:{_unused_port()}/0"
    client = redis.Redis.from_url(url, socket_connect_timeout=1.0)
    wire = TaskWire(client, url)
    with pytest.raises(BrokerWireError) as raised:
        wire.send("tourney.q", "r.m.1", [{}], argsrepr="-")
    assert isinstance(raised.value, BrokerUnreachable)
    client.close()
