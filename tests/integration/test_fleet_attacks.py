"""What one stolen worker key (or a replay, or a key nobody enrolled) can do to a run, tried
with real Redis, a real ``tourney run`` coordinator and a real honest ``tourney worker``
(docs/fleet.md, "Notes are bound to their run and task", "Quarantine binds").

The attackers are threads of this test speaking the wire protocol with real keys.
"""

from __future__ import annotations

import base64
import json
import threading
import time
import uuid
from pathlib import Path

import redis

from runner.domain.fleet import read_worker_key
from runner.domain.signing import SigningKey, open_message, signed
from runner.domain.wire import Finished, Started, TaskEnvelope, task_digest
from runner.orchestration.redis_server import EmbeddedRedis
from runner.storage.store import RunStore
from tests.forked_cli import Running
from tests.integration.helpers import (
    Organiser,
    assert_nothing_left,
    assert_one_official_result_per_match,
    kill_all,
    standings,
    start_tourney,
    store_rows,
    tourney,
    unique,
    wait_for,
    write_config,
)
from tests.integration.test_trust import start_worker, stop
from workers.celery_app import KEYS, queue_for


def _log(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


class StartFlood(threading.Thread):
    """A key holder that plays nothing and floods the run's inbox with signed ``started`` notes
    for every attempt the run wants, each with a fresh execution id, bound to the run and to
    the very task envelope (read off the queue, as any holder of the worker URL can)."""

    lifetime_s = 150.0

    def __init__(self, url: str, queue: str, run_id: str, key: SigningKey, organiser: SigningKey) -> None:
        super().__init__(daemon=True)
        self.r = redis.Redis.from_url(url)
        self.queue, self.run_id, self.key, self.organiser = queue, run_id, key, organiser
        self.stop = threading.Event()
        self.sent = 0
        self.tasks: dict[tuple[str, int], str] = {}  # (match, attempt) -> task digest

    def _read_queue(self) -> None:
        for raw in self.r.lrange(self.queue, 0, -1):
            (envelope,), _, _ = json.loads(base64.b64decode(json.loads(raw)["body"]))
            task, _ = open_message(envelope, TaskEnvelope, self.organiser.public)
            if task.run == self.run_id and not task.copy_of and not task.verify_of:
                self.tasks[(task.spec.match_id, task.attempt)] = task_digest(envelope)

    def run(self) -> None:
        deadline = time.monotonic() + self.lifetime_s
        while not self.stop.is_set() and time.monotonic() < deadline:
            self._read_queue()
            wanted = self.r.hgetall(KEYS.current(self.run_id))
            notes = []
            for match_id, attempt in wanted.items():
                m, a = match_id.decode() if isinstance(match_id, bytes) else match_id, int(attempt)
                for _ in range(2):
                    note = Started(m, a, "flood", execution=uuid.uuid4().hex, run=self.run_id,
                                   task=self.tasks.get((m, a), "0" * 32))  # fmt: skip
                    notes.append(signed(note, self.key))
            if notes:
                self.r.rpush(KEYS.inbox(self.run_id), *notes)
                self.sent += len(notes)
            time.sleep(0.05)


def test_a_flood_of_started_notes_fails_nothing_and_quarantines_the_flooding_key(tmp_path: Path) -> None:
    """An enrolled key and a revoked key flood every wanted attempt with signed, bound ``started``
    notes, beside one honest worker: no attempt is charged, the run ends with exit 0 and the
    standings of a clean run, and the enrolled flooder is quarantined and named."""
    tag = unique("flood")
    organiser = Organiser(tmp_path / "home")
    config = write_config(tmp_path, "flood", entrants=5, sleep=0.05, tag=tag)
    reference = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "ref", cwd=tmp_path
    )
    assert reference.returncode == 0, reference.stderr
    run_dir = tmp_path / "runs" / "flood"
    log = tmp_path / "run.log"
    thief, gone = f"thief-{tag}", f"gone-{tag}"
    thief_key = read_worker_key(organiser.enrol(thief)).key
    gone_key = read_worker_key(organiser.enrol(gone)).key
    organiser.fleet.revoke(gone, "disk replaced")
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    honest: Running | None = None
    floods: list[StartFlood] = []
    proc = start_tourney("run", config, "--broker", url, "--no-local-workers", cwd=tmp_path, log=log,
                         extra_env=organiser.env())  # fmt: skip
    try:
        wait_for(lambda: bool(store_rows(run_dir)), 60, "the run to start")
        with RunStore.open(run_dir) as store:
            run_id = str(store.meta()["run_id"])
        queue = queue_for(organiser.key.key_id)
        floods = [StartFlood(url, queue, run_id, k, organiser.key) for k in (thief_key, gone_key)]
        for f in floods:
            f.start()
        time.sleep(1.0)  # the flood is under way before anyone plays
        honest = start_worker(
            url, f"honest-{tag}", tmp_path / "honest", organiser.enrol(f"honest-{tag}"), "--allow-unsandboxed"
        )
        assert proc.wait(240) == 0, _log(log)[-3000:]
    finally:
        for f in floods:
            f.stop.set()
            f.join(10)
        if proc.poll() is None:
            proc.kill()
        if honest is not None:
            stop(honest)
        server.stop()
        kill_all([tag, str(run_dir)])
    assert all(f.sent > 50 for f in floods), [f.sent for f in floods]
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
        health = store.meta()["workers"]
        redelivered = store.events("redelivered")
        failed = store.events("failed")
    assert not failed and not redelivered, (failed[:2], redelivered[:2])
    assert all(row.failures == 0 for row in rows), [(row.match_id, row.failures) for row in rows]
    assert {row.worker for row in rows} == {f"honest-{tag}"}
    # the enrolled flooder: quarantined for starts it never played, and named
    assert health[thief]["quarantined"] and "never played" in health[thief]["reason"], health[thief]
    assert health[thief]["accepted"] == 0
    assert not health.get(f"honest-{tag}", {}).get("quarantined"), health
    assert f"worker {thief} QUARANTINED" in _log(log)
    shown = tourney("standings", run_dir, cwd=tmp_path)
    assert shown.returncode == 0 and f"Worker {thief} QUARANTINED" in shown.stdout, shown.stdout
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == standings(tmp_path / "ref")
    assert_nothing_left([tag, str(run_dir)])


def test_a_replay_of_another_runs_genuine_notes_frames_nobody(tmp_path: Path) -> None:
    """Run A's genuine result and started notes (signed by the honest worker that played them)
    pushed into run B, naming B's wanted attempts: B drops them, charges nobody, and the honest
    worker goes on serving B to the end (it used to be quarantined in B and stop itself)."""
    tag = unique("replay")
    organiser = Organiser(tmp_path / "home")
    config = write_config(tmp_path, "replay", entrants=4, sleep=0.1, tag=tag)
    honest_name = f"honest-{tag}"
    key_file = organiser.enrol(honest_name)
    honest_key = read_worker_key(key_file).key
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    args = ("run", config, "--broker", url, "--no-local-workers", "--no-progress")
    # four processes: B keeps as many of its tasks queued as its organiser has worker processes
    # (docs/fleet.md, "Runs share the pool"), so that several of its attempts are wanted at once
    honest = start_worker(url, honest_name, tmp_path / "honest", key_file, "--allow-unsandboxed",
                          "--concurrency", "4")  # fmt: skip
    run_b = tmp_path / "runs" / "B"
    log = tmp_path / "b.log"
    proc: Running | None = None
    pushed = 0
    try:
        first = tourney(*args, "--run-dir", tmp_path / "runs" / "A", cwd=tmp_path, timeout=180,
                        extra_env=organiser.env())  # fmt: skip
        assert first.returncode == 0, first.stdout[-2000:] + first.stderr
        with RunStore.open(tmp_path / "runs" / "A") as store:
            run_a = str(store.meta()["run_id"])
            played = [(r.match_id, r.result) for r in store.match_rows() if r.result is not None]
        proc = start_tourney(*args, "--run-dir", run_b, cwd=tmp_path, log=log, extra_env=organiser.env())
        wait_for(lambda: bool(store_rows(run_b)), 60, "run B to start")
        with RunStore.open(run_b) as store:
            run_id_b = str(store.meta()["run_id"])
        r = redis.Redis.from_url(url)
        wait_for(lambda: r.hlen(KEYS.current(run_id_b)) >= 4, 60, "run B's matches to be dispatched")
        current: dict[bytes, bytes] = r.hgetall(KEYS.current(run_id_b))  # type: ignore[assignment]
        wanted = {k.decode(): int(v) for k, v in current.items()}
        notes = []
        for match_id, result in played:
            if match_id not in wanted:
                continue
            attempt = wanted[match_id]  # what B wants now: only the run in the note is A's
            notes.append(signed(Started(match_id, attempt, honest_name, execution=uuid.uuid4().hex,
                                        run=run_a, task="0" * 32), honest_key))  # fmt: skip
            notes.append(signed(Finished(match_id, attempt, result, honest_name, run_a), honest_key))
        assert len(notes) >= 6, "fewer than three of A's results fit B's wanted matches"
        r.rpush(KEYS.inbox(run_id_b), *notes)
        pushed = len(notes)
        r.close()
        assert proc.wait(180) == 0, _log(log)[-3000:]
    finally:
        if proc is not None and proc.poll() is None:
            proc.kill()
        stop(honest)
        server.stop()
        kill_all([tag, str(tmp_path / "runs")])
    with RunStore.open(run_b) as store:
        rows = store.match_rows()
        health = store.meta()["workers"]
        wrong_run = [e.detail for e in store.events("result_wrong_run")]
        unbound = [e.detail for e in store.events("unbound_note")]
    assert pushed and wrong_run and run_a in wrong_run[0] and "nobody charged" in wrong_run[0], wrong_run
    assert unbound and run_a in unbound[0], unbound
    record = health[honest_name]
    assert not record["quarantined"] and record["mismatches"] == 0 and record["system_errors"] == 0, record
    assert all(row.failures == 0 for row in rows), [(row.match_id, row.failures) for row in rows]
    assert {row.worker for row in rows} == {honest_name}
    assert "quarantined" not in _log(tmp_path / "honest" / "worker.log")
    assert_one_official_result_per_match(run_b)
    assert standings(run_b) == standings(tmp_path / "runs" / "A")
    assert_nothing_left([tag, str(tmp_path / "runs")])


def test_unquarantine_lifts_a_runs_quarantine(tmp_path: Path) -> None:
    """``tourney fleet unquarantine NAME`` (docs/deploy.md) records the lift in the registry,
    which ends a quarantine made before it (what a coordinator does when it reads the registry);
    a revoked key cannot be lifted."""
    from runner.orchestration.workers_health import WorkersHealth

    tag = unique("lift")
    organiser = Organiser(tmp_path / "home")
    organiser.enrol(f"w-{tag}")
    health = WorkersHealth()
    for i in range(3):
        health.failed(f"w-{tag}", f"m{i}", "broken sandbox")
    assert health.is_quarantined(f"w-{tag}")
    lifted = tourney("fleet", "unquarantine", f"w-{tag}", cwd=tmp_path, extra_env=organiser.env())
    assert lifted.returncode == 0 and "lifted the quarantine" in lifted.stdout, lifted.stderr
    member = organiser.fleet.members()[f"w-{tag}"]
    assert health.lift(member.name, member.lifted) and not health.is_quarantined(f"w-{tag}")
    organiser.fleet.revoke(f"w-{tag}", "stolen")
    refused = tourney("fleet", "unquarantine", f"w-{tag}", cwd=tmp_path, extra_env=organiser.env())
    assert refused.returncode == 2 and "revoked" in refused.stderr, refused.stderr


def test_strangers_nobody_enrolled_cost_nothing_and_are_named(tmp_path: Path) -> None:
    """Two real ``tourney worker`` processes whose keys this organiser never enrolled (a forged
    key file: a fresh key beside the organiser's public key; another organiser's worker whose
    key file also lists this organiser) take tasks beside an honest worker: every note of theirs
    is refused, what they took is requeued uncharged, the run ends with exit 0 and the
    standings of a clean run, and the summary, standings and report name their keys."""
    from runner.domain.fleet import WorkerKey, write_new_private

    tag = unique("stranger")
    alice, bob = Organiser(tmp_path / "alice"), Organiser(tmp_path / "bob")
    config = write_config(tmp_path, "stranger", entrants=5, sleep=0.05, tag=tag)
    reference = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "ref", cwd=tmp_path
    )
    assert reference.returncode == 0, reference.stderr
    forged = WorkerKey(f"forged-{tag}", SigningKey.generate(), (alice.key.public,))
    forged_file = tmp_path / "forged.key"
    write_new_private(forged_file, forged.to_json())
    bobs = read_worker_key(bob.enrol(f"bobs-{tag}"))
    both = WorkerKey(bobs.name, bobs.key, (bob.key.public, alice.key.public))
    both_file = tmp_path / "both.key"
    write_new_private(both_file, both.to_json())
    run_dir = tmp_path / "runs" / "stranger"
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    workers = [
        start_worker(url, f"forged-{tag}", tmp_path / "forged", forged_file, "--allow-unsandboxed"),
        start_worker(url, f"bobs-{tag}", tmp_path / "bobs", both_file, "--allow-unsandboxed"),
    ]
    try:
        r = redis.Redis.from_url(url)
        for name in (f"forged-{tag}", f"bobs-{tag}"):
            presence = KEYS.worker(alice.key.key_id, name)

            def up(presence: str = presence) -> bool:
                return bool(r.exists(presence))

            wait_for(up, 90, f"{name} to come up")
        r.close()
        workers.append(start_worker(url, f"honest-{tag}", tmp_path / "honest", alice.enrol(f"honest-{tag}"),
                                    "--allow-unsandboxed"))  # fmt: skip
        done = tourney("run", config, "--broker", url, "--no-local-workers", "--no-progress", cwd=tmp_path,
                       timeout=300, extra_env=alice.env())  # fmt: skip
    finally:
        for w in workers:
            stop(w)
        server.stop()
        kill_all([tag, str(run_dir)])
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
        rejected = store.meta().get("rejected_keys") or {}
        lost = [e.detail for e in store.events("retry") + store.events("failed")]
    assert {row.worker for row in rows} == {f"honest-{tag}"}
    assert all(row.failures == 0 for row in rows) and not lost, lost[:3]
    for taker in ("forged", "bobs"):  # they did take tasks and play them
        assert "played " in _log(tmp_path / taker / "worker.log"), taker
    # both takers played and were refused; each is named by its key
    for key in (forged.key, bobs.key):
        assert key.key_id in rejected, (key.key_id, rejected)
        assert f"Key {key.key_id} (not enrolled by this organiser) REJECTED" in done.stdout + done.stderr
    shown = tourney("standings", run_dir, cwd=tmp_path)
    assert forged.key.key_id in shown.stdout and bobs.key.key_id in shown.stdout, shown.stdout
    assert forged.key.key_id in (run_dir / "report.html").read_text()
    assert standings(run_dir) == standings(tmp_path / "ref")
    assert_nothing_left([tag, str(run_dir)])


def test_a_stopped_coordinators_tasks_are_not_played_for_nobody(tmp_path: Path) -> None:
    """A coordinator stopped cleanly (Ctrl-C) withdraws its queued tasks and its ``alive`` key;
    the worker plays nothing more of that run (at most the match it was playing), and the
    resumed run finishes as a clean one."""
    import signal

    tag = unique("stopped")
    organiser = Organiser(tmp_path / "home")
    config = write_config(tmp_path, "stopped", entrants=5, sleep=0.1, tag=tag)
    reference = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "ref", cwd=tmp_path
    )
    assert reference.returncode == 0, reference.stderr
    run_dir = tmp_path / "runs" / "stopped"
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    args = ("run", config, "--broker", url, "--no-local-workers", "--no-progress")
    name = f"w-{tag}"
    worker = start_worker(url, name, tmp_path / "w", organiser.enrol(name), "--allow-unsandboxed")
    worker_log = tmp_path / "w" / "worker.log"
    proc = start_tourney(*args, cwd=tmp_path, log=tmp_path / "run.log", extra_env=organiser.env())
    r = redis.Redis.from_url(url)
    try:
        queue = queue_for(organiser.key.key_id)

        def waiting() -> bool:
            # the run keeps one task queued for its one worker (its share, docs/fleet.md) and
            # refills it as the worker takes it: stop while one waits there, after two played
            return _log(worker_log).count("played ") >= 2 and r.llen(queue) > 0

        wait_for(waiting, 120, "two matches played and a task waiting on the queue")
        with RunStore.open(run_dir) as store:
            run_id = str(store.meta()["run_id"])
        proc.send_signal(signal.SIGINT)
        proc.wait(60)
        played_at_stop = _log(worker_log).count("played ")
        left = [m for m in r.lrange(queue, 0, -1) if run_id.encode() in m]
        assert not left and not r.exists(KEYS.alive(run_id)), len(left)
        time.sleep(5.0)
        assert _log(worker_log).count("played ") <= played_at_stop + 1  # the one in progress
        resumed = tourney(*args, cwd=tmp_path, timeout=240, extra_env=organiser.env())
        assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr
    finally:
        r.close()
        if proc.poll() is None:
            proc.kill()
        stop(worker)
        server.stop()
        kill_all([tag, str(run_dir)])
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == standings(tmp_path / "ref")
    assert_nothing_left([tag, str(run_dir)])


def test_ceiling_refusals_of_every_connected_worker_stop_the_run_in_a_few_offers(tmp_path: Path) -> None:
    """Two workers whose ceilings both refuse the config's limit: a refused match goes next to a
    worker that has not refused it (the task names who did), so the one-line stop comes after
    a few offers, not hundreds of hand-backs in lock step."""
    tag = unique("ceil2")
    organiser = Organiser(tmp_path / "home")
    config = write_config(tmp_path, "ceil2", entrants=6, sleep=0.05, tag=tag)  # limits.move_wall_s 5.0
    run_dir = tmp_path / "runs" / "ceil2"
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    names = [f"tight{i}-{tag}" for i in (1, 2)]
    workers = [
        start_worker(url, n, tmp_path / n, organiser.enrol(n), "--allow-unsandboxed",
                     "--max-move-wall-s", "0.02")
        for n in names
    ]  # fmt: skip
    try:
        r = redis.Redis.from_url(url)
        for n in names:
            presence = KEYS.worker(organiser.key.key_id, n)

            def up(presence: str = presence) -> bool:
                return bool(r.exists(presence))

            wait_for(up, 90, f"{n} to come up")
        r.close()
        refused = tourney("run", config, "--broker", url, "--no-local-workers", "--no-progress", cwd=tmp_path,
                          timeout=300, extra_env=organiser.env())  # fmt: skip
    finally:
        for w in workers:
            stop(w)
        server.stop()
        kill_all([tag, str(run_dir)])
    assert refused.returncode == 3, refused.stdout[-2000:] + refused.stderr
    assert "no connected worker can serve match" in refused.stderr
    assert all(n in refused.stderr for n in names), refused.stderr
    offers = sum(_log(tmp_path / n / "worker.log").count("handed back") for n in names)
    with RunStore.open(run_dir) as store:
        requeued = [e for e in store.events("requeued") if "handed back" in e.detail]
    # 15 matches, 2 workers: a ceiling refuses limits (the run's, the same for every match), so
    # once each worker refused one match the run stops (it took hundreds of hand-backs before)
    assert offers <= 6 and len(requeued) <= 6, (offers, len(requeued))
