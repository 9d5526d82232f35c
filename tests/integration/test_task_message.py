"""The coordinator writes a match's task message without Celery (``workers.task_message``):
it must be the very message Celery's own client writes to the broker, and ``submit`` must
want the attempt before any worker can take the task; switched off, Celery's own producer
sends it (``workers.broker_wire``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path
from typing import Any

import pytest
from celery import Celery

from runner.domain.match_values import Limits, MatchSpec
from runner.domain.signing import open_message
from runner.domain.wire import TaskEnvelope
from runner.orchestration.redis_server import EmbeddedRedis
from tests.integration.helpers import Organiser
from workers.broker_keys import TASK_NAME, queue_for
from workers.celery_app import SETTINGS
from workers.task_message import task_message
from workers.warm import HAND_TASK_MESSAGE_ENV

#: differ per message by design: a fresh uuid each (reply_to, delivery_tag), the sender's pid
VOLATILE = {("properties", "reply_to"), ("properties", "delivery_tag"), ("headers", "origin")}


def _normalised(raw: bytes) -> dict[str, Any]:
    message: dict[str, Any] = json.loads(raw)
    for part, field in VOLATILE:
        assert isinstance(message[part][field], str) and message[part][field]
        message[part][field] = "-"
    message["body"] = json.loads(base64.b64decode(message["body"]))
    return message


def test_the_message_is_the_one_celerys_client_writes(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis").start()
    # an app of its own with the project's settings: closing it leaves the project's app alone
    app = Celery("tourney-client", set_as_current=False)
    app.conf.update(SETTINGS)
    app.conf.broker_url = server.url()
    client = server.client()
    queue = queue_for("0123456789abcdef")
    try:
        args = [{"run": "r", "attempt": 2, "spec": {"match_id": "m"}, "sig": "x" * 64}]
        with app.producer_pool.acquire(block=True) as producer:
            app.send_task(
                TASK_NAME, args=args, queue=queue, task_id="r.m.2", argsrepr="[match m attempt 2]",
                kwargsrepr="{}", producer=producer,
            )  # fmt: skip
        celerys = client.rpop(queue)
        client.lpush(
            queue, task_message("r.m.2", args, argsrepr="[match m attempt 2]", sender="gen1@h", queue=queue)
        )
        ours = client.rpop(queue)
        assert isinstance(celerys, bytes) and isinstance(ours, bytes)
        assert _normalised(ours) == _normalised(celerys)
        assert client.llen(queue) == 0
    finally:
        app.pool.force_close_all()
        client.close()
        server.stop()


def test_submit_wants_the_attempt_and_queues_its_signed_envelope(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis").start()
    organiser = Organiser(tmp_path / "home")
    key = organiser.key
    dispatcher = organiser.dispatcher(server.url(), "run-1")
    spec = MatchSpec.of(
        match_id="m7", game="boxing", board_id="b", board_text="----\n", orders=[["a", "b"]],
        entries={}, limits=Limits(), seed=0, sandbox="none",
    )  # fmt: skip
    try:
        dispatcher.submit(spec, 3)
        assert dispatcher.redis.hget(dispatcher.keys.current("run-1"), "m7") == b"3"
        # its organiser's own queue: only workers holding its public key consume it
        raw = dispatcher.redis.rpop(queue_for(key.key_id))
        assert isinstance(raw, bytes) and dispatcher.redis.llen(queue_for(key.key_id)) == 0
        message = json.loads(raw)
        assert message["headers"]["task"] == TASK_NAME and message["headers"]["id"] == "run-1.m7.3"
        # the log line names the match, not its envelope; the envelope is signed by the organiser
        assert message["headers"]["argsrepr"] == "[match m7 attempt 3]"
        (envelope,), kwargs, _ = json.loads(base64.b64decode(message["body"]))
        assert kwargs == {}
        assert open_message(envelope, TaskEnvelope, key.public)[0].spec.match_id == "m7"
    finally:
        dispatcher.forget_run()
        dispatcher.close()
        server.stop()


def test_with_the_switch_off_celerys_own_producer_sends_the_same_task(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``TOURNEY_HAND_TASK_MESSAGE=0`` (``workers.warm``): the dispatcher sends through Celery's
    producer instead, and the worker gets the same task, the attempt wanted first."""
    server = EmbeddedRedis(tmp_path / "redis").start()
    organiser = Organiser(tmp_path / "home")
    spec = MatchSpec.of(
        match_id="m7", game="boxing", board_id="b", board_text="----\n", orders=[["a", "b"]],
        entries={}, limits=Limits(), seed=0, sandbox="none",
    )  # fmt: skip
    queue = queue_for(organiser.key.key_id)
    sent: dict[bool, dict[str, Any]] = {}
    try:
        for hand_built in (True, False):
            monkeypatch.setenv(HAND_TASK_MESSAGE_ENV, "1" if hand_built else "0")
            dispatcher = organiser.dispatcher(server.url(), f"run-{hand_built}")
            try:
                assert dispatcher.wire.hand_built is hand_built
                dispatcher.submit(spec, 3)
                assert dispatcher.redis.hget(dispatcher.keys.current(f"run-{hand_built}"), "m7") == b"3"
                raw = dispatcher.redis.rpop(queue)
                assert isinstance(raw, bytes) and dispatcher.redis.llen(queue) == 0
                sent[hand_built] = _normalised(raw)
            finally:
                dispatcher.forget_run()
                dispatcher.close()
    finally:
        server.stop()
    # the same message but for the run's name (in the id and the signed envelope)
    for message in sent.values():
        (envelope,), _, _ = message["body"]
        assert open_message(envelope, TaskEnvelope, organiser.key.public)[0].spec.match_id == "m7"
        message["body"] = message["headers"]["id"] = message["headers"]["root_id"] = "-"
        message["properties"]["correlation_id"] = "-"
    assert sent[True] == sent[False]
