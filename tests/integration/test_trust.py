"""Trust (docs/fleet.md), tried by a forger who knows the Redis URL and nothing else, and by
an enrolled worker that lies.

Real Redis, real ``tourney worker`` and ``tourney run`` processes, the real sandbox.
"""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import psutil
import pytest
import redis

from runner.domain.entries import directory_digest, pack_entry
from runner.domain.fleet import read_worker_key
from runner.domain.match_values import EntryRef, Limits, MatchSpec
from runner.domain.signing import SigningKey, open_note, sign_bytes, signed
from runner.domain.wire import Finished, TaskEnvelope, encode, to_builtins
from runner.orchestration import procs
from runner.orchestration.redis_server import EmbeddedRedis
from runner.storage.store import RunStore
from tests import forked_cli
from tests.forked_cli import Running
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import (
    TOURNEY,
    Organiser,
    assert_nothing_left,
    assert_one_official_result_per_match,
    env,
    kill_all,
    private_tmp,
    standings,
    start_tourney,
    store_rows,
    tourney,
    unique,
    wait_for,
    write_config,
)
from workers.celery_app import KEYS, queue_for
from workers.task_message import task_message


def start_worker(url: str, name: str, work: Path, key_file: Path, *extra: str) -> forked_cli.Running:
    work.mkdir(parents=True, exist_ok=True)
    with open(work / "worker.log", "ab") as out:
        return forked_cli.Popen(
            [
                *TOURNEY,
                "worker",
                "--broker",
                url,
                "--concurrency",
                "1",
                "--name",
                name,
                "--work-dir",
                str(work),
                "--key-file",
                str(key_file),
                *extra,
            ],
            env=env(**private_tmp(work)),
            stdout=out,
            stderr=subprocess.STDOUT,
        )


def stop(proc: Running) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(10)


def evil_entry(directory: Path, marker: Path) -> EntryRef:
    """An "entry" whose program would leave ``marker`` behind if it ever ran outside a sandbox."""
    directory.mkdir(parents=True)
    (directory / "evil.sh").write_text(f"#!/bin/sh\nid > {marker}\necho 1 1\n")
    return EntryRef("evil", directory_digest(directory), "mnk", ["sh", "evil.sh"])


def envelope(run: str, match_id: str, ref: EntryRef, sandbox: str) -> TaskEnvelope:
    other = EntryRef("evil2", ref.digest, ref.protocol, ref.run)
    spec = MatchSpec.of(
        match_id,
        "mnk",
        "b",
        "3 3 3",
        [["evil", "evil2"]],
        {"evil": ref, "evil2": other},
        Limits(),
        0,
        sandbox,
    )
    return TaskEnvelope(run, 1, spec, heartbeat_s=0.5, heartbeat_ttl_s=1.5)


def test_worker_refuses_forged_tasks_and_unsandboxed_requests(tmp_path: Path) -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bwrap sandbox unavailable: {problem}")
    organiser = Organiser(tmp_path / "home")
    key = organiser.key
    key_file = organiser.enrol("victim")
    marker = tmp_path / "pwned"
    ref = evil_entry(tmp_path / "evil", marker)
    with EmbeddedRedis(tmp_path / "redis") as server:
        worker = start_worker(server.url(), "victim", tmp_path / "w", key_file)
        r = redis.Redis.from_url(server.url())
        try:
            wait_for(lambda: bool(r.exists(KEYS.worker(key.key_id, "victim"))), 60, "the worker to come up")
            # what the forger can do with the URL: upload its artifact, mark its run alive (a
            # worker plays only a live run's tasks), want the attempts, send tasks
            r.set(KEYS.artifact(ref.digest), pack_entry(tmp_path / "evil"))
            run = "forged"
            r.set(KEYS.alive(run), key.key_id)
            cases = {
                "unsigned": encode(envelope(run, "unsigned", ref, "none")),
                "other-key": signed(envelope(run, "other-key", ref, "none"), SigningKey.generate()),
                # the organiser's signature, the sandbox turned off after signing
                "altered": signed(envelope(run, "altered", ref, "bwrap"), key).replace(
                    b'"sandbox":"bwrap"', b'"sandbox":"none"'
                ),
                "signed-none": signed(envelope(run, "signed-none", ref, "none"), key),
                "unsigned-artifact": signed(envelope(run, "unsigned-artifact", ref, "bwrap"), key),
            }
            for match_id, body in cases.items():
                r.hset(KEYS.current(run), match_id, "1")
                # Celery's own task message (the coordinator's, workers.task_message), on the
                # organiser's own queue (anyone with the URL can push there)
                queue = queue_for(key.key_id)
                message = task_message(
                    f"{run}.{match_id}.1", [body.decode()], argsrepr="-", sender="forger", queue=queue
                )
                r.lpush(queue, message)
            results: dict[str, dict[str, Any]] = {}

            def two_results() -> bool:
                while (raw := r.lpop(KEYS.inbox(run))) is not None:
                    assert isinstance(raw, bytes)
                    note, _ = open_note(raw, read_worker_key(key_file).key.public)  # signed by the worker
                    if isinstance(note, Finished):
                        results[note.match_id] = to_builtins(note.result)
                return len(results) >= 2

            wait_for(two_results, 90, "the worker's answers to the signed tasks")
            log = (tmp_path / "w" / "worker.log").read_text(errors="replace")
            wait_for(
                lambda: (tmp_path / "w" / "worker.log").read_text(errors="replace").count("REFUSED") >= 3,
                30,
                "three refusals in the worker's log",
            )
            log = (tmp_path / "w" / "worker.log").read_text(errors="replace")
        finally:
            r.close()
            stop(worker)
    assert set(results) == {"signed-none", "unsigned-artifact"}, results
    refused = results["signed-none"]["games"][0]["verdict"]
    assert refused["kind"] == "system_error"
    assert "victim" in refused["detail"] and "--allow-unsandboxed" in refused["detail"], refused
    # an artifact the organiser did not sign is refused unbuilt; every worker would find it so:
    # the entry's build_failed (docs/config.md, "Whose fault"), never a run of its program
    unsigned = results["unsigned-artifact"]["games"][0]["verdict"]
    assert unsigned["kind"] == "build_failed" and unsigned["player"] == "evil", unsigned
    assert "unsigned" in unsigned["detail"], unsigned
    assert "unsigned" in log and "another key" in log and "altered" in log
    assert not marker.exists(), "a forged task ran the forger's program"


def test_coordinator_rejects_forged_and_fabricated_results(tmp_path: Path) -> None:
    tag = unique("forge")
    config = write_config(tmp_path, "forge", entrants=4, tag=tag)
    reference = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "ref", cwd=tmp_path
    )
    assert reference.returncode == 0, reference.stderr
    run_dir = tmp_path / "runs" / "forge"
    log = tmp_path / "run.log"
    organiser = Organiser(tmp_path / "home")
    liar_key = read_worker_key(organiser.enrol("liar")).key  # enrolled, and lies about a game
    server = EmbeddedRedis(tmp_path / "redis").start()
    proc = start_tourney(
        "run", config, "--broker", server.url(), "--no-local-workers", "--no-progress", cwd=tmp_path, log=log,
        extra_env=organiser.env(),
    )  # fmt: skip
    worker: Running | None = None
    r = redis.Redis.from_url(server.url())
    try:
        wait_for(lambda: bool(store_rows(run_dir)), 60, "the run to start")
        run_id = None
        with RunStore.open(run_dir) as store:
            run_id = str(store.meta()["run_id"])
        wait_for(lambda: r.hlen(KEYS.current(run_id)) > 0, 60, "matches to be dispatched")
        current: dict[bytes, bytes] = r.hgetall(KEYS.current(run_id))  # type: ignore[assignment]
        wanted = {k.decode(): int(v) for k, v in current.items()}
        stranger = SigningKey.generate()
        pushed = 0
        # an enrolled worker that lies about the game: the referee replay catches it (sent first:
        # the forged notes below send the attempts they name back to the queue, and a result
        # for an attempt that is no longer current proves nothing and is not judged)
        lie_id, lie_attempt = next(iter(wanted.items()))
        with RunStore.open(run_dir) as store:
            lie_spec = store.spec(lie_id)
        lie_games = [
            {"order": order, "winner": order[0], "scores": {order[0]: 24, order[1]: 0},
             "verdict": {"kind": "normal", "player": None, "detail": "won"}, "moves": [], "reason": "won"}
            for order in lie_spec.orders
        ]  # fmt: skip
        liar = {"kind": "result", "run": run_id, "match_id": lie_id, "attempt": lie_attempt, "worker": "liar",
                "result": {"match_id": lie_id, "games": lie_games, "worker": "liar",
                           "digests": {n: e.digest for n, e in lie_spec.entries.items()}}}  # fmt: skip
        r.rpush(KEYS.inbox(run_id), sign_bytes(json.dumps(liar).encode(), liar_key))
        for match_id, attempt in wanted.items():
            with RunStore.open(run_dir) as store:
                spec = store.spec(match_id)
            games = [
                {
                    "order": order,
                    "winner": order[0],
                    "scores": {order[0]: 24, order[1]: 0},
                    "verdict": {"kind": "normal", "player": None, "detail": "won"},
                    "moves": [],
                    "reason": "won",
                }
                for order in spec.orders
            ]
            note: dict[str, Any] = {
                "kind": "result",
                "run": run_id,
                "match_id": match_id,
                "attempt": attempt,
                "worker": "forger",
                "result": {"match_id": match_id, "games": games, "worker": "forger"},
            }
            r.rpush(KEYS.inbox(run_id), json.dumps(note))  # unsigned
            # signed with another key
            r.rpush(KEYS.inbox(run_id), sign_bytes(json.dumps(note).encode(), stranger))
            pushed += 2

        def seen(kind: str, n: int) -> bool:
            try:
                with RunStore.open(run_dir) as store:
                    return len(store.events(kind)) >= n
            except Exception:
                return False

        wait_for(lambda: seen("rejected_note", pushed), 60, "the forged notes to be rejected")
        wait_for(lambda: seen("result_mismatch", 1), 60, "the lying result to be rejected")
        assert not any(row.state == "done" for row in store_rows(run_dir))
        worker = start_worker(
            server.url(),
            f"honest-{tag}",
            tmp_path / "honest",
            organiser.enrol(f"honest-{tag}"),
            "--allow-unsandboxed",
        )
        assert proc.wait(150) == 0, log.read_text(errors="replace")[-4000:]
    finally:
        r.close()
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if worker is not None:
            stop(worker)
        server.stop()
        kill_all([tag, str(run_dir)])
    with RunStore.open(run_dir) as store:
        rejected = [e.detail for e in store.events("rejected_note")]
        workers = store.meta()["workers"]
        counted = store.meta()["rejected_notes"]
        official = {row.worker for row in store.match_rows()}
    assert any("'forger'" in d and "unsigned" in d for d in rejected), rejected[:3]
    assert any("another key" in d for d in rejected), rejected[:3]
    assert counted == {"forger": pushed}
    assert workers["liar"]["mismatches"] == 1 and workers["liar"]["accepted"] == 0
    assert official == {f"honest-{tag}"}
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == standings(tmp_path / "ref")
    assert_nothing_left([tag, str(run_dir)])


def test_resume_leaves_an_unrelated_redis_server_alone(tmp_path: Path) -> None:
    """A bystander ``redis-server`` (not this run's) survives a kill-and-resume cycle, even when
    the killed run's pid files name its pid (pid reuse)."""
    tag = unique("bystand")
    bystander = EmbeddedRedis(tmp_path / "bystander").start()  # another tag, another directory
    try:
        assert bystander.pid is not None
        config = write_config(tmp_path, "resume", entrants=4, sleep=0.12, tag=tag)
        run_dir = tmp_path / "runs" / "resume"
        log = tmp_path / "run.log"
        proc = start_tourney("run", config, "--workers", "1", "--no-progress", cwd=tmp_path, log=log)
        try:
            wait_for(
                lambda: (
                    any(row.state == "done" for row in store_rows(run_dir))
                    and (run_dir / "redis" / "redis.identity").exists()
                ),
                90,
                "a first result",
            )
            old = procs.read_identity(run_dir / "redis" / "redis.pid")
            assert old is not None
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            wait_for(lambda: not old.alive(), 20, "the killed run's Redis to die with it")
            # pid reuse: the recorded pids now name the bystander, started at another time
            for pid_file in [run_dir / "redis" / "redis.pid", *run_dir.glob("workers/*/worker.pid")]:
                pid_file.write_text(str(bystander.pid))
                ident = procs.read_identity(pid_file) or old
                procs.identity_path(pid_file).write_text(json.dumps({**ident.__dict__, "pid": bystander.pid}))
            again = tourney("run", config, "--workers", "1", "--no-progress", cwd=tmp_path, timeout=150)
            assert again.returncode == 0, again.stdout + again.stderr
        finally:
            if proc.poll() is None:
                proc.kill()
            kill_all([tag, str(run_dir)])
        assert psutil.Process(bystander.pid).status() != psutil.STATUS_ZOMBIE
        client = bystander.client()
        assert client.ping()
        client.close()
        assert_one_official_result_per_match(run_dir)
        assert_nothing_left([tag, str(run_dir)])  # and the check itself spares the bystander
        assert bystander.proc is not None and bystander.proc.poll() is None
    finally:
        bystander.stop()
    time.sleep(0)
