"""Live progress from the worker side: what a match is doing (builds, game, moves) is kept in
memory by the referee loop and written to a real Redis at most once a second; the coordinator's
dispatcher shows only records signed by an enrolled worker's key."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from runner.domain.fleet import Fleet, RegistryView, organiser_key, read_worker_key
from runner.domain.games import Pousse
from runner.domain.match_values import EntryRef, Limits, MatchSpec, MoveRecord
from runner.orchestration import celery_dispatcher
from runner.orchestration.celery_dispatcher import CeleryDispatcher
from runner.orchestration.dispatcher import Timing
from runner.orchestration.redis_server import EmbeddedRedis
from workers.beacon import LiveTarget, beacon
from workers.celery_app import KEYS
from workers.live import LIVE_EVERY_S, LiveState

REF = EntryRef("a", "0" * 64, "icfp98", ["./runme"])


def spec() -> MatchSpec:
    return MatchSpec.of(
        match_id="m1", game="pousse", board_id="b", board_text="6", orders=[["a", "b"], ["b", "a"]],
        entries={"a": REF, "b": REF}, limits=Limits(), seed=0,
    )  # fmt: skip


def move(state: LiveState, n: int = 1) -> None:
    rules = Pousse()
    for _ in range(n):
        state.move_played(1, MoveRecord("a", "T1", 1.0), rules, None)


def test_the_state_follows_builds_games_and_moves() -> None:
    state = LiveState(spec(), 2, "w1")
    assert state.snapshot()[1].describe() == "starting"
    state.building(["a"])
    assert state.snapshot()[1].describe() == "building a"
    state.game_started(1, ["a", "b"], Pousse(), None)
    move(state, 3)
    version, live = state.snapshot()
    assert live.describe() == "game 1/2, move 3" and (live.attempt, live.worker) == (2, "w1")
    state.game_started(2, ["b", "a"], Pousse(), None)
    assert state.snapshot()[1].describe() == "game 2/2, move 0" and state.snapshot()[0] > version


class CountingRedis(redis.Redis):
    """A real client that counts the live records it writes (the beacon writes them in a
    pipeline; its heartbeat is a plain SET, not counted)."""

    writes = 0

    def pipeline(self, *args: Any, **kwargs: Any) -> Any:
        type(self).writes += 1
        return super().pipeline(*args, **kwargs)


@pytest.fixture
def server(tmp_path: Path) -> Any:
    s = EmbeddedRedis(tmp_path / "redis").start()
    yield s
    s.stop()


#: the publisher's interval and the dispatcher's read cache in this test: a quarter and a fifth
#: of the real ones (1 s, 0.5 s), so the same sequence takes a quarter of the time
EVERY_S = 0.25
READ_EVERY_S = 0.1


def test_records_reach_the_dispatcher_at_most_once_a_second(
    server: Any, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert LIVE_EVERY_S == 1.0  # the real interval; the rule is checked below at EVERY_S
    monkeypatch.setattr(celery_dispatcher, "LIVE_READ_EVERY_S", READ_EVERY_S)
    home = tmp_path / "organiser"
    key = read_worker_key(Fleet(home).enrol("w1")).key  # the worker's own key signs its records
    r = CountingRedis.from_url(server.url())
    dispatcher = CeleryDispatcher(
        server.url(), "run1", Timing(heartbeat_s=0.5), organiser_key(home), RegistryView(home)
    )
    state = LiveState(spec(), 1, "w1")
    try:
        opened = time.monotonic()
        # this process's beacon, as ``workers.tasks`` uses it (beats far apart: only the
        # live record is watched here)
        target = LiveTarget(KEYS.live("run1"), state, key, every_s=EVERY_S)
        with beacon().watch(r, "hb", "w1", 60.0, 120.0, target, beaten=False):
            state.game_started(1, ["a", "b"], Pousse(), None)
            started = time.monotonic()
            while time.monotonic() - started < 2.5 * EVERY_S:  # fast moves: many changes, few writes
                move(state)
                time.sleep(0.002)
            moves = state.snapshot()[1].moves
            # the last change is published within an interval (waited for: a loaded machine is slow)
            deadline = time.monotonic() + 10.0
            while [m.describe() for m in dispatcher.live()] != [f"game 1/2, move {moves}"]:
                assert time.monotonic() < deadline, dispatcher.live()
                time.sleep(READ_EVERY_S / 2)
            (live,) = dispatcher.live()
            assert live.players == ("a", "b")
            # one at start, then at most one per interval, however many moves came
            writes = CountingRedis.writes
            intervals = (time.monotonic() - opened) / EVERY_S
            assert 2 <= writes <= 1 + intervals and writes < moves, (writes, intervals, moves)
            # a record no enrolled worker's key signed is never shown
            r.hset(KEYS.live("run1"), "forged", json.dumps({"match_id": "forged", "attempt": 1}))
            time.sleep(READ_EVERY_S * 1.5)  # past the dispatcher's read cache
            assert [m.match_id for m in dispatcher.live()] == ["m1"]
        # the task removes the record with the result (``workers.tasks``); nothing writes it after
        r.hdel(KEYS.live("run1"), "m1")
        time.sleep(max(READ_EVERY_S, EVERY_S) * 1.5)
        assert [m.match_id for m in dispatcher.live()] == []  # the match's record goes with it
    finally:
        dispatcher.close()
        r.close()
