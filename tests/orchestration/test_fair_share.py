"""Runs of one organiser share its workers (docs/fleet.md, "Runs share the pool"): the rule that
hands out queue slots, and the records the runs tell each other by, in a real Redis."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import redis

from runner.domain.fair_share import RunClaim, queue_slots, sharing
from runner.domain.signing import SigningKey, signed
from runner.domain.wire import RunShare
from runner.orchestration import pool as pool_module
from runner.orchestration.pool import OrganiserPool
from runner.orchestration.redis_server import EmbeddedRedis
from workers.broker_keys import KEYS


def test_equal_runs_share_alike_and_a_lone_run_gets_every_worker() -> None:
    assert queue_slots([RunClaim("a", 0, 50)], 4) == {"a": 4}
    assert queue_slots([RunClaim("a", 0, 50), RunClaim("b", 0, 50)], 4) == {"a": 2, "b": 2}
    # three workers for two runs: both get two (rounded up alike), never one run two and one one
    assert queue_slots([RunClaim("a", 0, 50), RunClaim("b", 0, 50)], 3) == {"a": 2, "b": 2}


def test_what_a_run_cannot_use_goes_to_the_others() -> None:
    slots = queue_slots([RunClaim("a", 0, 1), RunClaim("b", 0, 50), RunClaim("c", 0, 0)], 6)
    assert slots == {"a": 1, "b": 5, "c": 0}


def test_priority_first_and_a_lower_run_is_slowed_never_stopped() -> None:
    claims = [RunClaim("low", 0, 50), RunClaim("high", 5, 50)]
    assert queue_slots(claims, 4) == {"high": 4, "low": 1}
    # the high run wants little: the low one gets the rest
    assert queue_slots([RunClaim("low", 0, 50), RunClaim("high", 5, 1)], 4) == {"high": 1, "low": 3}


def test_no_worker_connected_still_lets_each_run_queue_one() -> None:
    assert queue_slots([RunClaim("a", 0, 9), RunClaim("b", 0, 9)], 0) == {"a": 1, "b": 1}


def test_sharing_counts_this_run_once_with_its_demand_as_it_is_now() -> None:
    others = [RunClaim("me", 0, 999), RunClaim("b", 0, 10)]
    s = sharing(others, 4, RunClaim("me", 0, 10))
    assert (s.slots, s.workers, s.runs) == (2, 4, 2)


@pytest.fixture
def broker(tmp_path: Path):  # type: ignore[no-untyped-def]
    server = EmbeddedRedis(tmp_path / "redis").start()
    try:
        yield server.url()
    finally:
        server.stop()


def test_runs_see_each_other_and_nobody_else_can_make_a_run_up(broker: str, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(pool_module, "SHARE_EVERY_S", 0.0)  # read and write at every call
    organiser, stranger = SigningKey.generate(), SigningKey.generate()
    client = redis.Redis.from_url(broker)
    a = OrganiserPool(client, organiser, "run-a")
    b = OrganiserPool(client, organiser, "run-b")
    assert a.share(20, local=4).runs == 1  # alone: every slot
    assert a.share(20, local=4).slots == 4
    b.share(20, local=4)
    got = a.share(20, local=4)
    assert (got.runs, got.slots) == (2, 2)
    # a holder of the workers' password writes records: unsigned, another key's, an old one put
    # back, one run's record copied under another name; none of them is a run
    now = time.time()
    key = KEYS.share(organiser.key_id, "forged")
    client.set(KEYS.share(organiser.key_id, "unsigned"), b'{"run":"unsigned","priority":9,"demand":9,"at":1}')
    client.set(key, signed(RunShare("forged", 9, 99, now), stranger))
    client.set(KEYS.share(organiser.key_id, "old"), signed(RunShare("old", 9, 99, now - 3600), organiser))
    copied = client.get(KEYS.share(organiser.key_id, "run-b"))
    assert isinstance(copied, bytes)
    client.set(KEYS.share(organiser.key_id, "copy"), copied)
    got = a.share(20, local=4)
    assert (got.runs, got.slots) == (2, 2)
    # b stops cleanly: a has the pool to itself again at its next read
    b.withdraw()
    got = a.share(20, local=4)
    assert (got.runs, got.slots) == (1, 4)
    client.close()
