"""Worker presence is per organiser (docs/fleet.md, "Routing"): two organisers on one broker,
each coordinator counts and names only its own organiser's workers (a worker serving both
is present for both).

Real Redis and real ``tourney worker`` processes; the coordinators' side is the dispatcher
each organiser's ``tourney run`` would make.
"""

from __future__ import annotations

from pathlib import Path

import redis

from runner.domain.fleet import WorkerKey, read_worker_key, write_new_private
from runner.orchestration.redis_server import EmbeddedRedis
from tests.forked_cli import Running
from tests.integration.helpers import Organiser, kill_all, unique, wait_for
from tests.integration.test_trust import start_worker, stop
from workers.celery_app import KEYS


def _seen(organiser: Organiser, url: str, run: str) -> tuple[set[str] | None, int]:
    """What that organiser's coordinator sees: the workers present, and their processes."""
    d = organiser.dispatcher(url, run)
    try:
        return d.present(), d.workers()
    finally:
        d.close()


def test_each_organiser_sees_only_its_own_workers_on_a_shared_broker(tmp_path: Path) -> None:
    tag = unique("presence")
    alice, bob = Organiser(tmp_path / "alice"), Organiser(tmp_path / "bob")
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    wa, wb, both = f"wa-{tag}", f"wb-{tag}", f"both-{tag}"
    # a machine serving both organisers: alice's key file, with bob's public key added
    alices = read_worker_key(alice.enrol(both))
    shared = tmp_path / "both.key"
    write_new_private(shared, WorkerKey(both, alices.key, (alice.key.public, bob.key.public)).to_json())
    flags = ("--allow-unsandboxed", "--skip-health-check")
    workers: list[Running] = []
    try:
        workers.append(start_worker(url, wa, tmp_path / wa, alice.enrol(wa), *flags))
        workers.append(start_worker(url, wb, tmp_path / wb, bob.enrol(wb), *flags))
        workers.append(start_worker(url, both, tmp_path / both, shared, *flags))
        r = redis.Redis.from_url(url)
        up = [
            KEYS.worker(alice.key.key_id, wa),
            KEYS.worker(bob.key.key_id, wb),
            KEYS.worker(alice.key.key_id, both),
            KEYS.worker(bob.key.key_id, both),
        ]
        wait_for(lambda: bool(r.exists(*up) == len(up)), 60, "the workers to come up")
        # each worker announces itself to its own organisers only
        assert not r.exists(KEYS.worker(alice.key.key_id, wb), KEYS.worker(bob.key.key_id, wa))
        r.close()
        seen = {"alice": _seen(alice, url, "run-a"), "bob": _seen(bob, url, "run-b")}
        stop(workers.pop(1))  # bob's own worker leaves: alice's coordinator sees no change
        wait_for(lambda: _seen(bob, url, "run-b")[0] == {both}, 30, "bob's worker to leave")
        after = _seen(alice, url, "run-a")
    finally:
        for w in workers:
            stop(w)
        server.stop()
        kill_all([tag, str(tmp_path)])
    assert seen == {"alice": ({wa, both}, 2), "bob": ({wb, both}, 2)}, seen
    assert after == ({wa, both}, 2), after
