"""A pool of workers serving many runs (docs/fleet.md): enrolled keys, a queue per organiser,
revocation, quarantine that binds, results bound to their run and code.

Real Redis, real ``tourney run`` coordinators and real ``tourney worker`` processes; the
misbehaving worker (a key holder that returns garbage fast and ignores its quarantine) is a
thread of this test speaking the wire protocol with a real enrolled key.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import redis

from runner.domain.fleet import read_worker_key
from runner.domain.signing import sign_bytes
from runner.orchestration.redis_server import EmbeddedRedis
from runner.storage.store import RunStore
from tests.forked_cli import Running
from tests.integration.helpers import (
    EnrolledImpostor,
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


def _events(run_dir: Path, kind: str) -> list[str]:
    try:
        with RunStore.open(run_dir) as store:
            return [e.detail for e in store.events(kind)]
    except Exception:
        return []


def _log(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def test_two_organisers_share_one_broker_and_every_run_finishes(tmp_path: Path) -> None:
    """Two organisers (two keys), three runs, one broker, one worker each: no worker takes a
    task it cannot verify (each consumes only its organiser's queue), nothing is lost, and one
    worker serves both runs of its organiser without a restart or a key per run."""
    tag = unique("fleet")
    alice, bob = Organiser(tmp_path / "alice"), Organiser(tmp_path / "bob")
    configs = {
        name: write_config(tmp_path / name, name, entrants=4, sleep=0.02, tag=f"{tag}-{name}")
        for name in ("a1", "a2", "b1")
    }
    reference = tourney("run", configs["a1"], "--inline", "--no-progress", "--run-dir", tmp_path / "ref",
                        cwd=tmp_path / "a1")  # fmt: skip
    assert reference.returncode == 0, reference.stderr
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    procs: dict[str, Running] = {}
    workers: list[Running] = []
    try:
        # alice's worker starts before any run: it says so, and waits
        workers.append(
            start_worker(url, f"wa-{tag}", tmp_path / "wa", alice.enrol(f"wa-{tag}"), "--allow-unsandboxed")
        )
        wait_for(lambda: "waiting for one" in _log(tmp_path / "wa" / "worker.log"), 60, "wa's start line")
        for name, organiser in (("a1", alice), ("a2", alice), ("b1", bob)):
            procs[name] = start_tourney(
                "run", configs[name], "--broker", url, "--no-local-workers", "--no-progress",
                cwd=tmp_path / name, log=tmp_path / name / "run.log", extra_env=organiser.env(),
            )  # fmt: skip
        wait_for(lambda: bool(store_rows(tmp_path / "b1" / "runs" / "b1")), 60, "run b1 to start")
        time.sleep(1.0)  # its tasks are queued, on bob's queue, with only alice's worker up
        r = redis.Redis.from_url(url)
        assert r.llen(queue_for(bob.key.key_id)) > 0  # nobody took them: they wait for bob's worker
        r.close()
        workers.append(
            start_worker(url, f"wb-{tag}", tmp_path / "wb", bob.enrol(f"wb-{tag}"), "--allow-unsandboxed")
        )
        for name, proc in procs.items():
            assert proc.wait(180) == 0, _log(tmp_path / name / "run.log")[-3000:]
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
        for w in workers:
            stop(w)
        server.stop()
        kill_all([tag, str(tmp_path)])
    played: dict[str, set[str]] = {}
    for name in configs:
        run_dir = tmp_path / name / "runs" / name
        assert_one_official_result_per_match(run_dir)
        with RunStore.open(run_dir) as store:
            rows = store.match_rows()
        assert all(row.failures == 0 for row in rows), [(row.match_id, row.failures) for row in rows]
        played[name] = {row.worker for row in rows}
        assert not _events(run_dir, "rejected_note")
    assert played == {"a1": {f"wa-{tag}"}, "a2": {f"wa-{tag}"}, "b1": {f"wb-{tag}"}}, played
    assert "1 active run(s)" in _log(tmp_path / "wb" / "worker.log")  # b1 was active when it started
    assert "REFUSED" not in _log(tmp_path / "wa" / "worker.log") + _log(tmp_path / "wb" / "worker.log")
    assert standings(tmp_path / "a1" / "runs" / "a1") == standings(tmp_path / "ref")
    assert_nothing_left([tag, str(tmp_path)])


def test_a_revoked_worker_is_refused_within_seconds_and_its_matches_go_elsewhere(tmp_path: Path) -> None:
    tag = unique("revoke")
    organiser = Organiser(tmp_path / "home")
    config = write_config(tmp_path, "revoke", entrants=5, sleep=0.1, tag=tag)
    run_dir = tmp_path / "runs" / "revoke"
    log = tmp_path / "run.log"
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    workers: list[Running] = []
    proc = start_tourney(
        "run", config, "--broker", url, "--no-local-workers", "--no-progress", cwd=tmp_path, log=log,
        extra_env=organiser.env(),
    )  # fmt: skip
    try:
        for name in (f"good-{tag}", f"bad-{tag}"):
            workers.append(
                start_worker(url, name, tmp_path / name, organiser.enrol(name), "--allow-unsandboxed")
            )
        wait_for(
            lambda: any(row.worker == f"bad-{tag}" and row.state == "done" for row in store_rows(run_dir)),
            90,
            "a result from the worker to be revoked",
        )
        revoked = tourney("fleet", "revoke", f"bad-{tag}", "--reason", "laptop stolen", cwd=tmp_path,
                          extra_env=organiser.env())  # fmt: skip
        assert revoked.returncode == 0, revoked.stderr
        t0 = time.monotonic()
        wait_for(
            lambda: bool(_events(run_dir, "worker_revoked")), 10, "the coordinator to see the revocation"
        )
        noticed_s = time.monotonic() - t0
        # it is told (a notice signed by the organiser) and stops by itself
        workers[1].wait(30)
        assert proc.wait(150) == 0, _log(log)[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
        for w in workers:
            stop(w)
        server.stop()
        kill_all([tag, str(run_dir)])
    assert noticed_s < 5.0, noticed_s
    listed = tourney("fleet", "list", cwd=tmp_path, extra_env=organiser.env())
    assert f"bad-{tag}" in listed.stdout and "REVOKED: laptop stolen" in listed.stdout, listed.stdout
    assert "key revoked: laptop stolen" in _log(tmp_path / f"bad-{tag}" / "worker.log")
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
        revoked_at = min(e.ts for e in store.events("worker_revoked"))
        health = store.meta()["workers"]
    assert all(row.failures == 0 for row in rows), [(row.match_id, row.failures) for row in rows]
    assert health[f"bad-{tag}"]["quarantined"] and "laptop stolen" in health[f"bad-{tag}"]["reason"]
    assert_one_official_result_per_match(run_dir)
    # nothing it sent after its revocation counted
    with RunStore.open(run_dir) as store:
        late = [
            row.match_id
            for row in rows
            if row.worker == f"bad-{tag}"
            and row.finished_at is not None
            and row.finished_at > revoked_at + 1.0
        ]
    assert not late, late
    assert_nothing_left([tag, str(run_dir)])


class Liar(EnrolledImpostor):
    """An enrolled key holder that takes tasks off its organiser's queue as fast as it can and
    answers each with garbage, ignoring any quarantine: a referee-rejected result, a result for
    another run, a result of other code, in turn."""

    def take(self, task: dict[str, Any], message: bytes | str) -> None:
        self.answer(task)

    def answer(self, task: dict[str, Any]) -> None:
        spec, run, attempt = task["spec"], task["run"], task["attempt"]
        digests = {name: ref["digest"] for name, ref in spec["entries"].items()}
        kind = self.answered % 3
        if kind == 1:
            run = "some-other-run"
        elif kind == 2:
            digests = {name: "0" * 64 for name in digests}
        games = [
            {"order": order, "winner": order[0], "scores": {order[0]: 24, order[1]: 0},
             "verdict": {"kind": "normal", "player": None, "detail": "won"}, "moves": [], "reason": "won"}
            for order in spec["orders"]
        ]  # fmt: skip
        inbox = KEYS.inbox(task["run"])
        started = {"kind": "started", "match_id": spec["match_id"], "attempt": attempt, "worker": self.name}
        result = {"match_id": spec["match_id"], "games": games, "worker": self.name, "digests": digests}
        finished = {"kind": "result", "run": run, "match_id": spec["match_id"], "attempt": attempt,
                    "worker": self.name, "result": result}  # fmt: skip
        self.r.rpush(inbox, *(sign_bytes(json.dumps(n).encode(), self.key) for n in (started, finished)))
        self.answered += 1


def test_quarantine_binds_a_worker_that_ignores_it_and_survives_resume(tmp_path: Path) -> None:
    tag = unique("binds")
    organiser = Organiser(tmp_path / "home")
    config = write_config(tmp_path, "binds", entrants=5, sleep=0.05, tag=tag)
    reference = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "ref", cwd=tmp_path
    )
    assert reference.returncode == 0, reference.stderr
    run_dir = tmp_path / "runs" / "binds"
    log = tmp_path / "run.log"
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    liar_name = f"liar-{tag}"
    liar = Liar(
        url, queue_for(organiser.key.key_id), read_worker_key(organiser.enrol(liar_name)).key,
        organiser.key, "a-name-it-made-up",
    )  # fmt: skip
    honest: Running | None = None
    args = ("run", config, "--broker", url, "--no-local-workers", "--no-progress")
    proc = start_tourney(*args, cwd=tmp_path, log=log, extra_env=organiser.env())
    try:
        liar.start()
        wait_for(lambda: bool(_events(run_dir, "quarantined")), 60, "the liar to be quarantined")
        # the coordinator dies; the resumed one still holds the quarantine
        proc.kill()
        proc.wait(10)
        answered = liar.answered
        proc = start_tourney(*args, cwd=tmp_path, log=log, extra_env=organiser.env())
        # the liar takes what the resumed coordinator dispatches first
        wait_for(lambda: liar.answered > answered, 60, "the liar to answer the resumed coordinator")
        honest = start_worker(
            url, f"honest-{tag}", tmp_path / "honest", organiser.enrol(f"honest-{tag}"), "--allow-unsandboxed"
        )
        assert proc.wait(180) == 0, _log(log)[-3000:]
    finally:
        liar.stop.set()
        liar.join(10)
        if proc.poll() is None:
            proc.kill()
        if honest is not None:
            stop(honest)
        server.stop()
        kill_all([tag, str(run_dir)])
    assert liar.answered >= 3
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
        health = store.meta()["workers"]
        wrong_run = [e.detail for e in store.events("result_wrong_run")]
        wrong_code = [e.detail for e in store.events("result_wrong_code")]
        handed_back = [e.detail for e in store.events("requeued") if "is quarantined" in e.detail]
    # named by its key, never by the name it wrote; quarantined; no attempt of any match spent
    assert health[liar_name]["quarantined"] and health[liar_name]["accepted"] == 0, health
    assert "a-name-it-made-up" not in health
    assert all(row.failures == 0 for row in rows), [(row.match_id, row.failures) for row in rows]
    assert {row.worker for row in rows} == {f"honest-{tag}"}
    assert wrong_run and "some-other-run" in wrong_run[0], wrong_run
    assert wrong_code and "other code" in wrong_code[0], wrong_code
    assert handed_back, "the quarantined worker's notes were acted on"
    shown = tourney("standings", run_dir, cwd=tmp_path)
    assert shown.returncode == 0 and f"Worker {liar_name} QUARANTINED" in shown.stdout, shown.stdout
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == standings(tmp_path / "ref")
    assert_nothing_left([tag, str(run_dir)])


def test_a_ceiling_refuses_a_task_and_the_coordinator_names_limit_and_workers(tmp_path: Path) -> None:
    """A worker whose ceiling is below the config's per-move limit hands its tasks back instead
    of playing them at its own limit; with no other worker the run stops at once, naming the
    limit and the worker in one line; a worker that can serve them then finishes the run with
    the standings of a clean run."""
    tag = unique("ceil")
    organiser = Organiser(tmp_path / "home")
    config = write_config(tmp_path, "ceil", entrants=4, sleep=0.05, tag=tag)  # limits.move_wall_s 5.0
    reference = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "ref", cwd=tmp_path
    )
    assert reference.returncode == 0, reference.stderr
    run_dir = tmp_path / "runs" / "ceil"
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    tight_name, roomy_name = f"tight-{tag}", f"roomy-{tag}"
    tight = start_worker(
        url, tight_name, tmp_path / "tight", organiser.enrol(tight_name), "--allow-unsandboxed",
        "--max-move-wall-s", "0.02",
    )  # fmt: skip
    roomy: Running | None = None
    args = ("run", config, "--broker", url, "--no-local-workers", "--no-progress")
    try:
        r = redis.Redis.from_url(url)
        tight_key = KEYS.worker(organiser.key.key_id, tight_name)
        wait_for(lambda: bool(r.exists(tight_key)), 60, "the tight worker to come up")
        r.close()
        t0 = time.monotonic()
        refused = tourney(*args, cwd=tmp_path, timeout=120, extra_env=organiser.env())
        took = time.monotonic() - t0
        roomy = start_worker(
            url, roomy_name, tmp_path / "roomy", organiser.enrol(roomy_name), "--allow-unsandboxed"
        )
        r = redis.Redis.from_url(url)
        # connected before the run resumes: else the tight worker alone would stop it again
        roomy_key = KEYS.worker(organiser.key.key_id, roomy_name)
        wait_for(lambda: bool(r.exists(roomy_key)), 60, "the roomy worker to come up")
        r.close()
        resumed = tourney(*args, cwd=tmp_path, timeout=180, extra_env=organiser.env())
    finally:
        stop(tight)
        if roomy is not None:
            stop(roomy)
        server.stop()
        kill_all([tag, str(run_dir)])
    assert refused.returncode == 3, refused.stdout[-2000:] + refused.stderr  # infrastructure, resumable
    said = [
        line
        for line in refused.stderr.strip().splitlines()
        if "warning: sandbox: none" not in line and not line.startswith("resume with: ")
    ]
    assert len(said) == 1, refused.stderr
    assert "resume with: tourney run" in refused.stderr
    assert "no connected worker can serve match" in said[0] and tight_name in said[0], said
    assert "limits.move_wall_s 5 is above this worker's 0.02 (--max-move-wall-s)" in said[0], said
    assert took < 60, took
    assert resumed.returncode == 0, resumed.stdout[-3000:] + resumed.stderr
    assert "handed back" in _log(tmp_path / "tight" / "worker.log")
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
        refusing = [e.detail for e in store.events("worker_refusing")]
    assert {row.worker for row in rows} == {roomy_name}
    assert all(row.failures == 0 for row in rows), [(row.match_id, row.failures) for row in rows]
    assert any(tight_name in d and "move_wall_s" in d for d in refusing), refusing
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == standings(tmp_path / "ref")  # no timeout charged to any entry
    assert_nothing_left([tag, str(run_dir)])


def test_a_straggler_gets_a_second_copy_on_an_idle_worker(tmp_path: Path, entry_files: Path) -> None:
    """One worker's match hangs (one move of an entry stalls, its heartbeat alive: a slow
    machine, not a dead one); once it is all the run waits for, a second copy goes to the idle
    worker and the run ends without waiting for the slow one. While the slow worker is the only
    one, no copy is sent, though one of its own two processes is free (issue 38: a copy "sent
    to another worker" that no other worker could take)."""
    tag = unique("strag")
    organiser = Organiser(tmp_path / "home")
    # the move that claims this file stalls for 10 minutes (tests/integration/entries/scan);
    # written after the reference run, so only the slow worker's first move claims it (where
    # the entry can rename it: as root, entries run as another user)
    stall = entry_files / "stall"
    config = write_config(tmp_path, "strag", entrants=4, sleep=0.02, tag=tag, control=stall)
    doc = json.loads(config.read_text())
    doc["limits"]["move_wall_s"] = 50.0  # the stopped move is slow, not timed out (below the ceiling, 60)
    config.write_text(json.dumps(doc))
    reference = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "ref", cwd=tmp_path
    )
    assert reference.returncode == 0, reference.stderr
    run_dir = tmp_path / "runs" / "strag"
    log = tmp_path / "run.log"
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    slow_name, fast_name = f"slow-{tag}", f"fast-{tag}"
    slow = start_worker(
        url,
        slow_name,
        tmp_path / "slow",
        organiser.enrol(slow_name),
        "--allow-unsandboxed",
        "--concurrency",
        "2",
    )
    fast: Running | None = None
    stall.write_text("hang\n")
    proc = start_tourney("run", config, "--broker", url, "--no-local-workers", "--no-progress", cwd=tmp_path,
                         log=log, extra_env=organiser.env())  # fmt: skip
    try:
        # a move on the slow worker claimed the file: that match stalls (the fast worker is not
        # started yet, so it is the slow one's)
        wait_for(lambda: not stall.exists(), 60, "the slow worker to stall in a move", every=0.02)
        # every other match done: the stalled one is all the run waits for, far past the median
        # (matches of well under a second), with one of the slow worker's processes idle
        wait_for(
            lambda: sum(r.state == "done" for r in store_rows(run_dir)) == 5,
            120,
            "the other matches to finish",
            every=0.2,
        )
        time.sleep(10.0)
        with RunStore.open(run_dir) as store:
            assert store.events("straggler_copy") == []  # no other worker: no copy
        fast = start_worker(
            url, fast_name, tmp_path / "fast", organiser.enrol(fast_name), "--allow-unsandboxed"
        )
        assert proc.wait(120) == 0, _log(log)[-3000:]
    finally:
        if proc.poll() is None:
            proc.kill()
        for w in (slow, fast):
            if w is not None:
                stop(w)
        server.stop()
        kill_all([tag, str(run_dir)])
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
        copies = [(e.match_id, e.detail) for e in store.events("straggler_copy")]
        started = [e.detail for e in store.events("straggler_copy_started")]
        won = [(e.match_id, e.detail) for e in store.events("straggler_result")]
    assert len(copies) == 1 and slow_name in copies[0][1] and "second copy" in copies[0][1], copies
    assert len(started) == 1 and fast_name in started[0], started
    (match_id, detail) = won[0]
    assert match_id == copies[0][0] and fast_name in detail, won
    assert all(row.failures == 0 for row in rows), [(row.match_id, row.failures) for row in rows]
    assert {row.worker for row in rows if row.match_id == match_id} == {fast_name}
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == standings(tmp_path / "ref")
    assert_nothing_left([tag, str(run_dir)])
