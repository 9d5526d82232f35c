"""Fault tests (docs/scale-out.md): a killed worker, a Redis restart, a killed coordinator,
duplicated and late results. In each: the run completes, no result is lost and
none is counted twice, and the standings equal an uninterrupted run's.

The entries sleep a little per move so that matches are in flight long
enough to be interrupted; the move itself depends only on the seed and the
position, so the reference run leaves the sleep out.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest
import redis

from runner.domain.fleet import Fleet, read_worker_key
from runner.domain.signing import sign_bytes
from runner.domain.wire import to_builtins
from runner.orchestration.redis_server import EmbeddedRedis
from runner.storage.store import RunStore
from tests.forked_cli import Running
from tests.integration.helpers import (
    SCAN,
    TOURNEY,
    assert_nothing_left,
    assert_one_official_result_per_match,
    env,
    kill_all,
    kill_recorded_group,
    standings,
    start_tourney,
    store_rows,
    tourney,
    unique,
    wait_for,
    write_config,
)
from workers.celery_app import KEYS
from workers.sandbox.checks import sandbox_user

SLEEP = 0.12  # seconds per move: a match takes a couple of seconds


def reference(tmp_path: Path, name: str, entrants: int) -> dict[str, Any]:
    """Standings of the same tournament, uninterrupted, inline, without the per-move sleep."""
    config = write_config(tmp_path / "ref", name, entrants=entrants)
    done = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "ref-run", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    return standings(tmp_path / "ref-run")


def count(run_dir: Path, state: str) -> int:
    return sum(1 for r in store_rows(run_dir) if r.state == state)


def finish(proc: Running, log: Path, timeout: float = 150) -> None:
    try:
        rc = proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise AssertionError("the run did not finish:\n" + log.read_text(errors="replace")[-4000:]) from None
    assert rc == 0, log.read_text(errors="replace")[-4000:]


def test_worker_killed_mid_match_is_redispatched(tmp_path: Path) -> None:
    tag = unique("killw")
    config = write_config(tmp_path, "killw", entrants=4, sleep=SLEEP, tag=tag)
    run_dir = tmp_path / "runs" / "killw"
    log = tmp_path / "run.log"
    proc = start_tourney("run", config, "--workers", "2", "--no-progress", cwd=tmp_path, log=log)
    try:
        victim: list[str] = []

        def worker1_busy() -> bool:
            for r in store_rows(run_dir):
                if r.state == "running" and "/local-1-" in r.worker:
                    victim.append(r.match_id)
                    return True
            return False

        wait_for(worker1_busy, 60, "worker 1 to start a match")
        time.sleep(0.5)  # well inside the match
        # the whole worker (main process and pool): the run's only one; the coordinator
        # notices its exit and starts another (local-2-...), which replays what it was playing
        kill_recorded_group(run_dir / "workers" / "1" / "worker.pid")
        finish(proc, log)
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_all([tag, str(run_dir)])

    with RunStore.open(run_dir) as store:
        row = store.match_row(victim[0])
        retries = [e.detail for e in store.events("retry") if e.match_id == victim[0]]
        restarts = [e.detail for e in store.events("worker_restarted")]
    assert row is not None and row.state == "done" and row.attempt >= 2
    assert "/local-2-" in row.worker  # this machine's key, the second worker process
    assert len(restarts) == 1 and "local-1-" in restarts[0] and "killed by SIGKILL" in restarts[0], restarts
    assert "started local-2-" in restarts[0]
    assert any("lease expired" in d for d in retries), retries
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == reference(tmp_path, "killw", 4)
    assert_nothing_left([tag, str(run_dir)])


def test_redis_restart_mid_run(tmp_path: Path) -> None:
    tag = unique("redis")
    config = write_config(tmp_path, "redis", entrants=4, sleep=SLEEP, tag=tag)
    run_dir = tmp_path / "runs" / "redis"
    log = tmp_path / "run.log"
    server = EmbeddedRedis(tmp_path / "redis-data").start()
    proc = start_tourney(
        "run", config, "--broker", server.url(), "--workers", "2", "--no-progress", cwd=tmp_path, log=log
    )
    try:
        wait_for(
            lambda: count(run_dir, "done") >= 1 and count(run_dir, "running") >= 1,
            60,
            "a finished and a running match",
        )
        server.stop()  # SHUTDOWN-like: SIGTERM, the append-only file is flushed
        time.sleep(2.0)
        server = EmbeddedRedis(server.data_dir, password=server.password, port=server.port).start()
        finish(proc, log)
    finally:
        if proc.poll() is None:
            proc.kill()
        server.stop()
        kill_all([tag, str(run_dir)])
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == reference(tmp_path, "redis", 4)
    assert_nothing_left([tag, str(run_dir)])


def test_coordinator_killed_mid_stage_resumes(tmp_path: Path) -> None:
    tag = unique("killc")
    config = write_config(tmp_path, "killc", entrants=5, sleep=SLEEP, tag=tag)
    run_dir = tmp_path / "runs" / "killc"
    log = tmp_path / "run.log"
    proc = start_tourney("run", config, "--workers", "2", "--no-progress", cwd=tmp_path, log=log)
    try:
        wait_for(
            lambda: count(run_dir, "done") >= 2 and count(run_dir, "running") >= 1,
            90,
            "two finished matches and a running one",
        )
        helpers = [int((run_dir / "redis" / "redis.pid").read_text())]
        helpers += [int(p.read_text()) for p in (run_dir / "workers").glob("*/worker.pid")]
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        # what it started dies with it (PDEATHSIG): no redis-server, no worker left running
        wait_for(
            lambda: (
                not any(
                    psutil.pid_exists(p) and psutil.Process(p).status() != psutil.STATUS_ZOMBIE
                    for p in helpers
                )
            ),
            20,
            "the killed coordinator's Redis and workers to exit",
        )
        before = count(run_dir, "done")
        assert before < len(store_rows(run_dir))

        again = tourney("run", config, "--workers", "2", cwd=tmp_path, timeout=150)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "resuming" in again.stdout
    finally:
        if proc.poll() is None:
            proc.kill()
        kill_all([tag, str(run_dir)])
    with RunStore.open(run_dir) as store:
        assert store.events("requeued")  # what was in flight was dispatched again
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == reference(tmp_path, "killc", 5)
    assert_nothing_left([tag, str(run_dir)])


def test_duplicated_and_late_results_are_ignored(tmp_path: Path) -> None:
    tag = unique("dup")
    config = write_config(tmp_path, "dup", entrants=4, sleep=SLEEP, tag=tag)
    run_dir = tmp_path / "runs" / "dup"
    log = tmp_path / "run.log"
    server = EmbeddedRedis(tmp_path / "redis-data").start()
    proc = start_tourney(
        "run", config, "--broker", server.url(), "--workers", "1", "--no-progress", cwd=tmp_path, log=log
    )
    try:
        wait_for(
            lambda: count(run_dir, "done") >= 1 and count(run_dir, "running") >= 1,
            60,
            "a finished and a running match",
        )
        with RunStore.open(run_dir) as store:
            run_id = store.meta()["run_id"]
            rows = store.match_rows()
        done = next(r for r in rows if r.state == "done")
        running = next(r for r in rows if r.state == "running")
        assert done.result is not None
        original = to_builtins(done.result)
        forged = json.loads(json.dumps(original))
        for g in forged["games"]:  # a conflicting copy: every game given to the other side
            g["winner"] = next(p for p in g["order"] if p != g["winner"])
        r = redis.Redis.from_url(server.url())
        inbox = KEYS.inbox(run_id)
        key = read_worker_key(Fleet().local_worker_key()).key  # signed as the run's worker would
        note = {"kind": "result", "run": run_id, "match_id": done.match_id, "worker": "dup"}

        def signed_note(d: dict[str, Any]) -> bytes:
            return sign_bytes(json.dumps(d).encode(), key)

        r.rpush(inbox, signed_note({**note, "attempt": done.attempt, "result": original}))
        r.rpush(inbox, signed_note({**note, "attempt": done.attempt, "result": forged}))  # conflicting copy
        assert running.spec is not None
        digests = {name: ref.digest for name, ref in running.spec.entries.items()}
        late = {
            "kind": "result",
            "run": run_id,
            "match_id": running.match_id,
            "worker": "late",
            "attempt": running.attempt - 1,
            # played the code its spec names (a result of other code is refused before this check)
            "result": {**forged, "match_id": running.match_id, "digests": digests},
        }
        r.rpush(inbox, signed_note(late))  # a late result of an older attempt of a match in flight
        r.close()
        finish(proc, log)
    finally:
        if proc.poll() is None:
            proc.kill()
        server.stop()
        kill_all([tag, str(run_dir)])
    with RunStore.open(run_dir) as store:
        ignored_events = store.events("ignored_result")
        ignored = [e.detail for e in ignored_events]
        after = store.match_row(done.match_id)
        running_after = store.match_row(running.match_id)
    # the notes sent here, by match and attempt: on a loaded machine a lease may also lapse and
    # a real worker's result arrive late, which is ignored too but is not one of these
    duplicates = [e for e in ignored_events if e.match_id == done.match_id and "duplicate" in e.detail]
    late_ones = [
        e
        for e in ignored_events
        if e.match_id == running.match_id and e.detail.startswith(f"attempt {running.attempt - 1} from")
    ]
    assert len(duplicates) == 2, ignored
    assert len(late_ones) == 1 and "late: attempt" in late_ones[0].detail, ignored
    assert after is not None and after.result is not None and to_builtins(after.result) == original
    assert running_after is not None and running_after.result is not None
    assert running_after.result.worker != "late"
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == reference(tmp_path, "dup", 4)
    assert_nothing_left([tag, str(run_dir)])


@contextlib.contextmanager
def unprivileged_organiser() -> Iterator[tuple[Path, list[str]]]:
    """A directory and a command prefix for an organiser who is not root (the usual one).

    Such an organiser's worker has no other uid to give ``sandbox: none`` entries: they run as
    the organiser and can signal its worker (docs/sandbox.md, "`sandbox: none`"). As root the
    test plays that organiser as the sandbox user (nobody), in a directory of its own outside
    pytest's (which only root may cross). The machine's Python may live where only root can
    read (a pyenv under /root), so that user is lent CAP_DAC_READ_SEARCH (read any file) and
    nothing else: it still cannot signal or trace another uid's processes. Not root: the test
    is that organiser already."""
    directory = Path(tempfile.mkdtemp(prefix="tourney-unprivileged-"))
    (directory / "tmp").mkdir()  # its TMPDIR: what a SIGKILLed worker leaves goes with the test
    uid = sandbox_user()
    prefix: list[str] = []
    try:
        if uid is not None:
            for made in (directory, directory / "tmp"):
                os.chown(made, uid, uid)
            setpriv = shutil.which("setpriv")
            if setpriv is None:
                pytest.skip("setpriv (util-linux) is needed to play an organiser who is not root")
            prefix = [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                      "--inh-caps=+dac_read_search", "--ambient-caps=+dac_read_search"]  # fmt: skip
        yield directory, prefix
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def test_match_that_keeps_killing_workers_fails_visibly() -> None:
    """An entry that SIGKILLs the worker process playing it, each attempt: after the attempt cap
    the match fails visibly; the run never hangs. Entries can do that only to a worker of their
    own uid (a root worker runs ``sandbox: none`` entries as another user), so the organiser
    here is not root."""
    killer = Path(__file__).resolve().parent / "entries" / "killer"
    tag = unique("cap")
    with unprivileged_organiser() as (work, as_organiser):
        config = work / "cap.yaml"
        config.write_text(
            json.dumps(
                {
                    "name": "cap",
                    "game": "mnk",
                    "sandbox": "none",
                    "boards": {"b": {"text": "3 3 3"}},
                    "entries": [
                        {"path": str(killer)},
                        {"path": str(SCAN), "variants": {"count": 1, "prefix": "p", "args": ["--tag", tag]}},
                    ],
                    "stages": [{"name": "rr", "planner": "round_robin", "boards": ["b"]}],
                }
            )
        )
        run_dir = work / "runs" / "cap"
        try:
            done = subprocess.run(
                [*as_organiser, *TOURNEY, "run", str(config), "--workers", "2"],
                cwd=work,
                env=env(HOME=str(work), TOURNEY_HOME=str(work / "home"), TMPDIR=str(work / "tmp")),
                capture_output=True,
                text=True,
                timeout=150,
            )
        finally:
            kill_all([tag, str(work)])
        assert done.returncode == 1, done.stdout + done.stderr
        assert "FAILED" in done.stdout  # as it happens
        assert "FAILED after 3 attempts" in done.stderr and "gave up after 3 failed attempts" in done.stderr
        with RunStore.open(run_dir) as store:
            (row,) = store.match_rows()
            assert store.events("failed")
        assert row.state == "failed" and row.failures == 3
        assert row.result is not None and row.result.system_error is not None  # shown in the report
        assert_nothing_left([tag, str(work)])


def test_redis_restarted_empty_costs_no_attempts(tmp_path: Path) -> None:
    """The broker comes back with nothing (its data lost): the coordinator notices within
    seconds, republishes the artifacts, re-dispatches what was queued, charges no attempt."""
    tag = unique("empty")
    config = write_config(tmp_path, "empty", entrants=4, sleep=SLEEP, tag=tag)
    run_dir = tmp_path / "runs" / "empty"
    log = tmp_path / "run.log"
    server = EmbeddedRedis(tmp_path / "redis-data").start()
    # heartbeats of 1 s, not the tests' 0.5 s: this test is about the charge for the broker's
    # loss, and with 0.5 s a match waiting its turn 3 s (lost_s) or a worker's heartbeat
    # thread reconnecting 2 s (lease_s) after the restart on a busy CI machine is charged
    # by the ordinary lost-message and lease rules, which other tests cover
    proc = start_tourney(
        "run",
        config,
        "--broker",
        server.url(),
        "--workers",
        "2",
        "--no-progress",
        cwd=tmp_path,
        log=log,
        extra_env={"TOURNEY_HEARTBEAT_S": "1.0"},
    )
    try:
        wait_for(
            lambda: count(run_dir, "done") >= 1 and count(run_dir, "queued") >= 1,
            60,
            "a finished and a queued match",
        )
        server.stop()
        shutil.rmtree(server.data_dir)  # everything the broker held is gone
        server = EmbeddedRedis(server.data_dir, password=server.password, port=server.port).start()
        restarted = time.time()
        finish(proc, log)
    finally:
        if proc.poll() is None:
            proc.kill()
        server.stop()
        kill_all([tag, str(run_dir)])
    with RunStore.open(run_dir) as store:
        noticed = store.events("broker_emptied")
        rows = store.match_rows()
        history = [f"{e.ts - restarted:+.2f} {e.kind} {e.match_id or ''} {e.detail}" for e in store.events()]
    assert noticed, log.read_text(errors="replace")[-3000:]
    assert noticed[0].ts - restarted < 15, noticed[0].ts - restarted  # seconds, not a lease timeout
    charged = [(r.match_id, r.failures) for r in rows if r.failures]
    assert not charged, (charged, history)  # the events say which rule charged it, and when
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == reference(tmp_path, "empty", 4)
    assert_nothing_left([tag, str(run_dir)])
