"""``Dispatcher.wake`` on a real Redis: a ``poll`` another thread waits in ends when the
submission server's check loop is told a new upload is unpacked, so its check is sent then,
not at the poll's timeout; the notes in the inbox still come out of the next poll, and a
wake is spent by the poll it ends."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

import pytest

from runner.domain.fleet import RegistryView, organiser_key
from runner.orchestration.celery_dispatcher import CeleryDispatcher
from runner.orchestration.dispatcher import Timing
from runner.orchestration.redis_server import EmbeddedRedis

#: the poll's timeout here: far above what a wake takes to end it
TIMEOUT_S = 5.0


@pytest.fixture
def dispatcher(tmp_path: Path) -> Any:
    server = EmbeddedRedis(tmp_path / "redis").start()
    home = tmp_path / "organiser"
    timing = Timing(heartbeat_s=0.5)
    d = CeleryDispatcher(server.url(), "run1", timing, organiser_key(home), RegistryView(home))
    yield d
    server.stop()


def _poll_in_thread(d: CeleryDispatcher) -> tuple[threading.Thread, dict[str, float]]:
    out: dict[str, float] = {}

    def wait() -> None:
        began = time.monotonic()
        d.poll(TIMEOUT_S)
        out["waited_s"] = time.monotonic() - began

    t = threading.Thread(target=wait)
    t.start()
    return t, out


def test_a_wake_ends_a_poll_waiting_in_another_thread(dispatcher: CeleryDispatcher) -> None:
    t, out = _poll_in_thread(dispatcher)
    time.sleep(0.3)  # it is waiting in its BLPOP by now
    assert t.is_alive()
    dispatcher.wake()
    t.join(TIMEOUT_S + 5)
    assert out["waited_s"] < TIMEOUT_S - 1, out  # ended by the wake, not by its timeout


def test_a_wake_before_the_poll_ends_the_next_one_and_is_spent_by_it(dispatcher: CeleryDispatcher) -> None:
    dispatcher.wake()
    dispatcher.wake()
    began = time.monotonic()
    assert dispatcher.poll(TIMEOUT_S) == []  # a wake is no note
    assert time.monotonic() - began < TIMEOUT_S - 1
    # both wakes were spent by that poll: the next one waits (here, a short timeout)
    began = time.monotonic()
    assert dispatcher.poll(0.3) == []
    assert time.monotonic() - began >= 0.25
