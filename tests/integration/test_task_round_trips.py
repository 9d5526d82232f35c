"""The task body's fewer round trips (issue 13) keep its promises, on a real Redis: the
quarantine and attempt checks read together still refuse and skip; the result, the heartbeat's
removal and the live record's removal land together; the beacon ends a match at once.

Tasks go out as the coordinator sends them (``CeleryDispatcher.submit``) and are taken off the
queue as a worker takes them, so the ``started`` notes answer a task the coordinator sent and
are bound to it (docs/fleet.md, "Notes are bound to their run and task")."""

from __future__ import annotations

import contextlib
import dataclasses
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.domain.entries import load_entry, pack_entry
from runner.domain.fleet import WORKER_KEY_FILE_ENV
from runner.domain.match_values import Limits, MatchSpec
from runner.domain.signing import signed
from runner.domain.wire import Finished, QuarantineNotice, Skipped, Started, task_digest
from runner.orchestration.redis_server import EmbeddedRedis
from tests.integration.helpers import Organiser, take_task
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


def sent(dispatcher: Any, spec: MatchSpec, attempt: int) -> str:
    """Dispatch ``attempt`` as the coordinator does (wanted, queued, its envelope's digest kept)
    and take it off the queue as a worker does: the signed envelope the task body receives."""
    dispatcher.submit(spec, attempt)
    return take_task(dispatcher.redis, dispatcher.queue)


def forged_notice(reason: str = "forged") -> str:
    return json.dumps({"worker": WORKER, "reason": reason})


def execution_heartbeats(dispatcher: Any) -> list[bytes]:
    return list(dispatcher.redis.scan_iter(match=KEYS.execution_heartbeat(RUN, "*")))


@contextlib.contextmanager
def scripts_refused(dispatcher: Any, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The broker refuses Lua (an ACL): the task's checks go through a pipeline."""
    monkeypatch.setattr(tasks, "_begin_script", None)
    dispatcher.redis.execute_command("ACL", "SETUSER", "default", "-@scripting")
    try:
        with pytest.raises(Exception, match=r"(?i)perm"):
            dispatcher.redis.eval("return 1", 0)  # the broker really refuses scripts now
        yield
    finally:
        dispatcher.redis.execute_command("ACL", "SETUSER", "default", "+@all")


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
    dispatcher.mark_alive()  # as the coordinator does before it dispatches: workers play only then
    try:
        yield dispatcher, spec, key
    finally:
        dispatcher.forget_run()
        dispatcher.close()
        server.stop()


def test_a_played_match_leaves_its_result_and_no_heartbeat_or_live_record(setup: Any) -> None:
    dispatcher, spec, _key = setup
    task = sent(dispatcher, spec, 1)
    assert tasks.execute(task)["status"] == "done"
    notes = dispatcher.poll(5.0)
    assert [type(n) for n in notes] == [Started, Finished]
    assert (notes[0].run, notes[0].task) == (RUN, task_digest(task))  # bound to the task it answers
    assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))
    assert not execution_heartbeats(dispatcher)
    assert not dispatcher.redis.hexists(KEYS.live(RUN), "trips")
    # the run no longer wants attempt 1: a redelivered copy is skipped, reading the same checks
    dispatcher.want("trips", 2)
    assert tasks.execute(task)["status"] == "skipped"
    assert dispatcher.poll(5.0) == [Skipped("trips", 1, WORKER)]


def test_a_quarantined_worker_hands_the_match_back_unplayed(setup: Any) -> None:
    """A run's quarantine (docs/fleet.md, "Quarantine binds"): the worker puts the very task
    back on the queue for another worker, unplayed, and sends the run nothing (its key's notes
    count for nothing there)."""
    dispatcher, spec, _key = setup
    task = sent(dispatcher, spec, 1)
    dispatcher.quarantine(WORKER, "keeps failing")
    assert tasks.execute(task)["status"] == "quarantined"
    assert take_task(dispatcher.redis, dispatcher.queue) == task  # handed back, unchanged
    assert dispatcher.poll(0.05) == []
    # a notice not signed by the organiser is ignored: the match is played
    dispatcher.redis.set(KEYS.run_quarantine(RUN, worker_key_id()), forged_notice())
    assert tasks.execute(task)["status"] == "done"
    assert [type(n) for n in dispatcher.poll(5.0)] == [Started, Finished]


def test_a_runs_quarantine_counts_for_that_run_only(setup: Any) -> None:
    """The organiser's genuine notice of another run, copied under this run's key (anyone who
    can reach the broker can copy it), stops nothing here."""
    dispatcher, spec, key = setup
    task = sent(dispatcher, spec, 1)
    other = signed(QuarantineNotice(WORKER, worker_key_id(), "another-run", "keeps failing"), key)
    dispatcher.redis.set(KEYS.run_quarantine(RUN, worker_key_id()), other)
    assert tasks.execute(task)["status"] == "done"
    assert [type(n) for n in dispatcher.poll(5.0)] == [Started, Finished]


@pytest.mark.parametrize("checks", ["script", "pipeline"])
def test_a_forged_revocation_never_hides_a_genuine_quarantine(
    setup: Any, monkeypatch: pytest.MonkeyPatch, checks: str
) -> None:
    """Both notices are read, and each is judged on its own: a forged one under the revocation
    key must not make the worker overlook its run's genuine quarantine (with the broker's
    scripts or, where it refuses them, its pipeline)."""
    dispatcher, spec, _key = setup
    task = sent(dispatcher, spec, 1)
    dispatcher.quarantine(WORKER, "keeps failing")
    dispatcher.redis.set(KEYS.quarantine(worker_key_id()), forged_notice())
    with scripts_refused(dispatcher, monkeypatch) if checks == "pipeline" else contextlib.nullcontext():
        assert tasks.execute(task)["status"] == "quarantined"
    assert take_task(dispatcher.redis, dispatcher.queue) == task
    assert dispatcher.poll(0.05) == []
    assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))


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


def test_a_result_delivered_after_the_poll_never_reads_as_a_silent_worker(setup: Any) -> None:
    """The heartbeat goes in the very transaction that delivers the result. A coordinator that
    polled just before and sweeps its leases just after must not read the missing heartbeat as
    a worker gone silent (it charged the played attempt a lease expiry, then ignored its result
    as late: seen in test_fleet under load): with notes unread it cannot tell yet, once (the
    coordinator polls before it asks again; a flood of notes must not stop leases expiring)."""
    dispatcher, spec, _key = setup
    assert dispatcher.poll(0.05) == []  # the coordinator's poll: nothing yet
    assert tasks.execute(sent(dispatcher, spec, 1))["status"] == "done"  # delivered after it
    assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))
    assert dispatcher.alive("trips", 1) is None  # its sweep: the result is there to be read
    assert dispatcher.verification_alive("trips", 1) is None
    assert dispatcher.alive("trips", 1) is False  # asked again with no poll between: gone
    assert [type(n) for n in dispatcher.poll(5.0)] == [Started, Finished]
    assert dispatcher.alive("trips", 1) is False  # read: the heartbeat is gone for good


def test_the_heartbeat_beats_until_the_result_is_delivered(
    setup: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A result waiting for the broker (away, or back empty) keeps its attempt alive: were
    the heartbeat stopped before the delivery, the coordinator would charge the attempt a
    lease expiry for a match that was played."""
    dispatcher, spec, _key = setup
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
    assert tasks.execute(sent(dispatcher, spec, 1))["status"] == "done"
    assert came_back == [True]
    assert [type(n) for n in dispatcher.poll(5.0)] == [Started, Finished]
    assert not dispatcher.redis.exists(beat)  # and the delivery still took it away


def _threads(name: str) -> int:
    return sum(1 for t in threading.enumerate() if t.name == name and t.is_alive())


def test_a_skipped_attempt_writes_nothing_but_its_note(setup: Any) -> None:
    """The checks and the match's start share one script: a skip must not start anything."""
    dispatcher, spec, _key = setup
    task = sent(dispatcher, spec, 1)
    dispatcher.want("trips", 2)
    assert tasks.execute(task)["status"] == "skipped"
    assert dispatcher.poll(5.0) == [Skipped("trips", 1, WORKER)]
    assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))
    assert not execution_heartbeats(dispatcher)
    assert not dispatcher.redis.hexists(KEYS.live(RUN), "trips")
    # quarantined: nothing started either, not even the note (the task goes back on the queue)
    dispatcher.want("trips", 1)
    dispatcher.quarantine(WORKER, "keeps failing")
    assert tasks.execute(task)["status"] == "quarantined"
    assert dispatcher.poll(0.05) == []
    assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))
    assert not execution_heartbeats(dispatcher)
    assert not dispatcher.redis.hexists(KEYS.live(RUN), "trips")
    assert take_task(dispatcher.redis, dispatcher.queue) == task
    # a stopped coordinator (its alive key withdrawn) wants nothing played: skipped, nothing started
    dispatcher.lift_quarantine(WORKER)
    dispatcher.redis.delete(KEYS.alive(RUN))
    assert tasks.execute(task)["status"] == "skipped"
    assert dispatcher.poll(5.0) == [Skipped("trips", 1, WORKER)]
    assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))
    assert not execution_heartbeats(dispatcher)


def test_one_beacon_thread_serves_every_match_of_a_process(setup: Any) -> None:
    """Heartbeat and live record come from one long-lived thread, not two new ones per match."""
    dispatcher, spec, _key = setup
    for attempt in (1, 2, 3):
        assert tasks.execute(sent(dispatcher, spec, attempt))["status"] == "done"
        assert [type(n) for n in dispatcher.poll(5.0)] == [Started, Finished]
        assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", attempt))
        assert not dispatcher.redis.hexists(KEYS.live(RUN), "trips")
    assert _threads("tourney-beacon") == 1
    assert _threads("tourney-heartbeat") == 0 and _threads("tourney-live") == 0


@pytest.mark.parametrize("where", ["revocation", "run"])
def test_a_forged_quarantine_notice_neither_stops_nor_loses_the_start(setup: Any, where: str) -> None:
    """A notice not signed by the organiser (for every run, or for this one) keeps the script
    from starting the match; the task then starts it itself: the coordinator still gets its
    ``started`` note, bound to the task, with its execution's heartbeat while it plays."""
    dispatcher, spec, _key = setup
    task = sent(dispatcher, spec, 1)
    kid = worker_key_id()
    dispatcher.redis.set(KEYS.quarantine(kid) if where == "revocation" else KEYS.run_quarantine(RUN, kid),
                         forged_notice())  # fmt: skip
    assert tasks.execute(task)["status"] == "done"
    notes = dispatcher.poll(5.0)
    assert [type(n) for n in notes] == [Started, Finished]
    assert (notes[0].run, notes[0].task) == (RUN, task_digest(task))
    assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))
    assert not execution_heartbeats(dispatcher)


def test_a_broker_that_refuses_scripts_still_plays_checked_matches(
    setup: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where an ACL forbids Lua, the checks go through a pipeline and the start is pushed apart
    (with its execution's heartbeat: the note is believed only with it)."""
    dispatcher, spec, _key = setup
    with scripts_refused(dispatcher, monkeypatch):
        task = sent(dispatcher, spec, 1)
        assert tasks.execute(task)["status"] == "done"
        notes = dispatcher.poll(5.0)
        assert [type(n) for n in notes] == [Started, Finished]
        assert (notes[0].run, notes[0].task) == (RUN, task_digest(task))
        assert not dispatcher.redis.exists(KEYS.heartbeat(RUN, "trips", 1))
        assert not execution_heartbeats(dispatcher)
        dispatcher.want("trips", 2)
        assert tasks.execute(task)["status"] == "skipped"
        assert dispatcher.poll(5.0) == [Skipped("trips", 1, WORKER)]
        # a stopped coordinator's task is skipped the plain way too
        dispatcher.want("trips", 1)
        dispatcher.redis.delete(KEYS.alive(RUN))
        assert tasks.execute(task)["status"] == "skipped"
        assert dispatcher.poll(5.0) == [Skipped("trips", 1, WORKER)]


def test_a_forgotten_match_leaves_the_broker_with_the_next_poll_unless_wanted_again(setup: Any) -> None:
    """``forget`` rides on the next poll's round trip; wanting the match again before that
    cancels it (a stale forget must never delete the attempt dispatched after it)."""
    dispatcher, spec, _key = setup
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
    # started notes of tasks this coordinator sent (bound: a note of no sent task is dropped)
    started = []
    for i in range(3):
        task = sent(dispatcher, dataclasses.replace(spec, match_id=f"m{i}"), 1)
        started.append(Started(f"m{i}", 1, WORKER, execution=f"x{i}", run=RUN, task=task_digest(task)))
    for note in started:
        dispatcher.redis.rpush(KEYS.inbox(RUN), signed(note, tasks.worker_key().key))
    assert dispatcher.poll(1.0) == started
    assert not dispatcher.redis.hexists(current, "c")
    # close withdraws the run: every wanted attempt goes (a forget not yet sent among them) and
    # the alive key, so that no worker starts a task of a stopped coordinator
    dispatcher.forget("b")
    dispatcher.close()
    client = redis_client(dispatcher)
    assert not client.exists(current) and not client.exists(KEYS.alive(RUN))


def redis_client(dispatcher: Any) -> Any:
    import redis

    return redis.Redis.from_url(dispatcher.url)
