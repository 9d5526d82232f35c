"""Worker presence is per organiser (docs/fleet.md, "Routing"): two organisers on one broker,
each coordinator counts and names only its own organiser's workers.

Real Redis and real ``tourney worker`` processes; the coordinators' side is the dispatcher
each organiser's ``tourney run`` would make.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import redis

from runner.orchestration.redis_server import EmbeddedRedis
from tests.integration.helpers import Organiser, kill_all, unique, wait_for
from tests.integration.test_trust import start_worker, stop
from workers.celery_app import KEYS


def test_each_organiser_sees_only_its_own_workers_on_a_shared_broker(tmp_path: Path) -> None:
    tag = unique("presence")
    alice, bob = Organiser(tmp_path / "alice"), Organiser(tmp_path / "bob")
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    names = {"alice": f"wa-{tag}", "bob": f"wb-{tag}"}
    workers: list[subprocess.Popen[bytes]] = []
    try:
        for who, organiser in (("alice", alice), ("bob", bob)):
            key_file = organiser.enrol(names[who])
            flags = ("--allow-unsandboxed", "--skip-health-check")
            workers.append(start_worker(url, names[who], tmp_path / who, key_file, *flags))
        r = redis.Redis.from_url(url)
        up = [KEYS.worker(alice.key.key_id, names["alice"]), KEYS.worker(bob.key.key_id, names["bob"])]
        wait_for(lambda: bool(r.exists(*up) == 2), 60, "both workers to come up")
        # each worker announces itself to its own organiser only
        assert not r.exists(KEYS.worker(alice.key.key_id, names["bob"]))
        assert not r.exists(KEYS.worker(bob.key.key_id, names["alice"]))
        r.close()
        seen = {}
        for who, organiser in (("alice", alice), ("bob", bob)):
            d = organiser.dispatcher(url, f"run-{who}")
            try:
                seen[who] = (d.present(), d.workers())
            finally:
                d.close()
        stop(workers.pop())  # bob's worker leaves: alice's coordinator sees no change
        d = alice.dispatcher(url, "run-alice")
        try:
            d._workers_cache = (float("-inf"), 0)  # read now, not the cached count
            after = (d.present(), d.workers())
        finally:
            d.close()
        d = bob.dispatcher(url, "run-bob")
        try:
            wait_for(lambda: d.present() == set(), 30, "bob's worker to leave")
        finally:
            d.close()
    finally:
        for w in workers:
            stop(w)
        server.stop()
        kill_all([tag, str(tmp_path)])
    assert seen == {"alice": ({names["alice"]}, 1), "bob": ({names["bob"]}, 1)}, seen
    assert after == ({names["alice"]}, 1), after
