"""The task body's fewer round trips (issue 13) keep its promises, on a real Redis: the
quarantine and attempt checks read together still refuse and skip; the result, the heartbeat's
removal and the live record's removal land together; the beacon ends a match at once."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from runner.domain.entries import load_entry, pack_entry
from runner.domain.fleet import WORKER_KEY_FILE_ENV
from runner.domain.match_values import Limits, MatchSpec
from runner.domain.signing import signed
from runner.domain.wire import Finished, Skipped, Started
from runner.orchestration.redis_server import EmbeddedRedis
from tests.integration.helpers import Organiser
from workers import tasks
from workers.beacon import LiveTarget, beacon
from workers.celery_app import KEYS, configure
from workers.live import LiveState
from workers.policy import POLICY_ENV, WorkerPolicy

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
RUN = "trips-run"
WORKER = "trips-worker"


def worker_key_id() -> str:
    return tasks.worker_key().key.key_id


@pytest.fixture
def setup(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setenv("TOURNEY_WORK_DIR", str(tmp_path / "work"))
    monkeypatch.setenv("TOURNEY_WORKER_NAME", WORKER)
    organiser = Organiser(tmp_path / "home")
    key = organiser.key
    monkeypatch.setenv(WORKER_KEY_FILE_ENV, str(organiser.enrol(WORKER)))
    monkeypatch.setattr(tasks, "_key", None)
    monkeypatch.setenv(POLICY_ENV, WorkerPolicy(allow_unsandboxed=True).to_json())
    specs = [load_entry(FIXTURES / "boxing" / name)[0] for name in ("native", "first_fit")]
    refs = {s.name: s.ref() for s in specs}
    order = list(refs)
    spec = MatchSpec.of(
        match_id="trips", game="boxing", board_id="b", board_text="----\n----\n", orders=[order, order[::-1]],
        entries=refs, limits=Limits(move_wall_s=10.0), seed=0, sandbox="none",
    )  # fmt: skip
    blobs = {s.digest: tmp_path / f"{s.digest}.tar.gz" for s in specs}
    for s in specs:
        blobs[s.digest].write_bytes(pack_entry(s.path))
    server = EmbeddedRedis(tmp_path / "redis").start()
    # this process stands in for the worker, which points its app at the broker as it starts
    configure(server.url())
    dispatcher = organiser.dispatcher(server.url(), RUN)
    dispatcher.registry.refresh(0.0)  # the coordinator's first poll would read the registry
    dispatcher.publish_artifacts(blobs)
    try:
        yield dispatcher, spec, key
    finally:
        dispatcher.forget_run()
        dispatcher.close()
        server.stop()


def test_a_played_match_leaves_its_result_and_no_heartbeat_or_live_record(setup: Any) -> None:
    dispatcher, spec, key = setup
    dispatcher.want("trips", 1)
    assert tasks.execute(signed(dispatcher.envelope(spec, 1), key).decode())["status"] == "done"
    notes = dispatcher.poll(5.0)
    assert [type(n) for n in notes] == [Started, Finished]
    assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))
    assert not dispatcher.redis.hexists(KEYS.live(RUN), "trips")
    # the run no longer wants attempt 1: a redelivered copy is skipped, reading the same checks
    dispatcher.want("trips", 2)
    assert tasks.execute(signed(dispatcher.envelope(spec, 1), key).decode())["status"] == "skipped"
    assert dispatcher.poll(5.0) == [Skipped("trips", 1, WORKER)]


def test_a_quarantined_worker_hands_the_match_back_unplayed(setup: Any) -> None:
    dispatcher, spec, key = setup
    dispatcher.want("trips", 1)
    dispatcher.quarantine(WORKER, "keeps failing")
    assert tasks.execute(signed(dispatcher.envelope(spec, 1), key).decode())["status"] == "quarantined"
    assert dispatcher.poll(5.0) == [Skipped("trips", 1, WORKER, "quarantined: keeps failing")]
    # a notice not signed by the organiser is ignored: the match is played
    dispatcher.redis.set(KEYS.quarantine(worker_key_id()), json.dumps({"worker": WORKER, "reason": "forged"}))
    assert tasks.execute(signed(dispatcher.envelope(spec, 1), key).decode())["status"] == "done"


def test_the_beacon_ends_a_match_without_waiting_out_its_interval(setup: Any) -> None:
    dispatcher, spec, _key = setup
    state = LiveState(spec, 1, WORKER)
    target = LiveTarget(KEYS.live(RUN), state, tasks.worker_key().key, every_s=4.0)
    beat = KEYS.heartbeat(RUN, "trips", 1)
    watch = beacon().watch(dispatcher.redis, beat, WORKER, 4.0, 8.0, target, beaten=False)
    with watch:
        # past its first record and the interval after it: now it waits up to 4 s
        time.sleep(4.5)
        asked = time.monotonic()
        watch.end()
        # not a speed target: the 3.5 s left of that wait, against none (a loaded machine's delay)
        assert time.monotonic() - asked < 2.5
    # nothing is written for the match once it ended (the task removes what is there)
    dispatcher.redis.delete(beat)
    dispatcher.redis.hdel(KEYS.live(RUN), "trips")
    state.building(["a"])  # a change the beacon would publish, were the match still watched
    time.sleep(4.5)
    assert not dispatcher.redis.hexists(KEYS.live(RUN), "trips")
    assert not dispatcher.redis.exists(beat)


def test_the_heartbeat_beats_until_the_result_is_delivered(
    setup: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result waiting for the broker (away, or back empty) keeps its attempt alive: were
    the heartbeat stopped before the delivery, the coordinator would charge the attempt a
    lease expiry for a match that was played."""
    dispatcher, spec, key = setup
    beat = KEYS.heartbeat(RUN, "trips", 1)
    real_push = tasks._push
    came_back: list[bool] = []

    def push_after_the_broker_lost_the_beat(*args: Any, **kwargs: Any) -> bool:
        if isinstance(args[2], Finished):
            dispatcher.redis.delete(beat)  # the broker restarted empty while the result waited
            deadline = time.monotonic() + 5.0  # ten beats of the envelope's 0.5 s
            while not dispatcher.redis.exists(beat) and time.monotonic() < deadline:
                time.sleep(0.05)
            came_back.append(bool(dispatcher.redis.exists(beat)))
        return real_push(*args, **kwargs)

    monkeypatch.setattr(tasks, "_push", push_after_the_broker_lost_the_beat)
    dispatcher.want("trips", 1)
    assert tasks.execute(signed(dispatcher.envelope(spec, 1), key).decode())["status"] == "done"
    assert came_back == [True]
    assert [type(n) for n in dispatcher.poll(5.0)] == [Started, Finished]
    assert not dispatcher.redis.exists(beat)  # and the delivery still took it away


def _threads(name: str) -> int:
    return sum(1 for t in threading.enumerate() if t.name == name and t.is_alive())


def test_a_skipped_attempt_writes_nothing_but_its_note(setup: Any) -> None:
    """The checks and the match's start share one script: a skip must not start anything."""
    dispatcher, spec, key = setup
    dispatcher.want("trips", 2)
    assert tasks.execute(signed(dispatcher.envelope(spec, 1), key).decode())["status"] == "skipped"
    assert dispatcher.poll(5.0) == [Skipped("trips", 1, WORKER)]
    assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))
    assert not dispatcher.redis.hexists(KEYS.live(RUN), "trips")
    # quarantined: the same, and the match is handed back
    dispatcher.want("trips", 1)
    dispatcher.quarantine(WORKER, "keeps failing")
    assert tasks.execute(signed(dispatcher.envelope(spec, 1), key).decode())["status"] == "quarantined"
    assert dispatcher.poll(5.0) == [Skipped("trips", 1, WORKER, "quarantined: keeps failing")]
    assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))
    assert not dispatcher.redis.hexists(KEYS.live(RUN), "trips")


def test_one_beacon_thread_serves_every_match_of_a_process(setup: Any) -> None:
    """Heartbeat and live record come from one long-lived thread, not two new ones per match."""
    dispatcher, spec, key = setup
    for attempt in (1, 2, 3):
        dispatcher.want("trips", attempt)
        assert tasks.execute(signed(dispatcher.envelope(spec, attempt), key).decode())["status"] == "done"
        assert [type(n) for n in dispatcher.poll(5.0)] == [Started, Finished]
        assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", attempt))
        assert not dispatcher.redis.hexists(KEYS.live(RUN), "trips")
    assert _threads("tourney-beacon") == 1
    assert _threads("tourney-heartbeat") == 0 and _threads("tourney-live") == 0


def test_a_forged_quarantine_notice_neither_stops_nor_loses_the_start(setup: Any) -> None:
    """A notice not signed by the organiser keeps the script from starting the match; the task
    then starts it itself: the coordinator still gets its ``started`` note."""
    dispatcher, spec, key = setup
    dispatcher.want("trips", 1)
    dispatcher.redis.set(KEYS.quarantine(worker_key_id()), json.dumps({"worker": WORKER, "reason": "forged"}))
    assert tasks.execute(signed(dispatcher.envelope(spec, 1), key).decode())["status"] == "done"
    assert [type(n) for n in dispatcher.poll(5.0)] == [Started, Finished]
    assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))


def test_a_broker_that_refuses_scripts_still_plays_checked_matches(
    setup: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where an ACL forbids Lua, the checks go through a pipeline and the start is pushed apart."""
    dispatcher, spec, key = setup
    monkeypatch.setattr(tasks, "_begin_script", None)
    dispatcher.redis.execute_command("ACL", "SETUSER", "default", "-@scripting")
    try:
        with pytest.raises(Exception, match=r"(?i)perm"):
            dispatcher.redis.eval("return 1", 0)  # the broker really refuses scripts now
        dispatcher.want("trips", 1)
        assert tasks.execute(signed(dispatcher.envelope(spec, 1), key).decode())["status"] == "done"
        assert [type(n) for n in dispatcher.poll(5.0)] == [Started, Finished]
        assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))
        dispatcher.want("trips", 2)
        assert tasks.execute(signed(dispatcher.envelope(spec, 1), key).decode())["status"] == "skipped"
        assert dispatcher.poll(5.0) == [Skipped("trips", 1, WORKER)]
    finally:
        dispatcher.redis.execute_command("ACL", "SETUSER", "default", "+@all")


def test_a_forgotten_match_leaves_the_broker_with_the_next_poll_unless_wanted_again(setup: Any) -> None:
    """``forget`` rides on the next poll's round trip; wanting the match again before that
    cancels it (a stale forget must never delete the attempt dispatched after it)."""
    dispatcher, _spec, _key = setup
    current = KEYS.current(RUN)
    for mid in ("a", "b", "c"):
        dispatcher.want(mid, 1)
    dispatcher.forget("a")
    dispatcher.forget("b")
    dispatcher.want("b", 2)  # dispatched again before the forget went out
    assert dispatcher.redis.hexists(current, "a")  # not yet: nothing was sent
    assert dispatcher.poll(0.05) == []
    assert not dispatcher.redis.hexists(current, "a")
    assert dispatcher.redis.hget(current, "b") == b"2"
    assert dispatcher.redis.hget(current, "c") == b"1"
    # the notes still come through the same round trip, the first and the rest
    dispatcher.forget("c")
    started = [Started(f"m{i}", 1, WORKER) for i in range(3)]
    for note in started:
        dispatcher.redis.rpush(KEYS.inbox(RUN), signed(note, tasks.worker_key().key))
    assert dispatcher.poll(1.0) == started
    assert not dispatcher.redis.hexists(current, "c")
    # close sends what is left
    dispatcher.forget("b")
    dispatcher.close()
    assert not redis_client(dispatcher).hexists(current, "b")


def redis_client(dispatcher: Any) -> Any:
    import redis

    return redis.Redis.from_url(dispatcher.url)
