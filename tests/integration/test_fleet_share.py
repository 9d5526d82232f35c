"""Runs of one organiser share its workers in turns (docs/fleet.md, "Runs share the pool").

Real Redis, two real ``tourney run`` coordinators of one organiser and one real ``tourney
worker`` (two processes) serving both. Before, the first run queued all of its matches at once
and the second waited for the whole of the first (first in, first out).
"""

from __future__ import annotations

import itertools
from pathlib import Path

from runner.orchestration.redis_server import EmbeddedRedis
from runner.storage.store import RunStore
from tests.forked_cli import Running
from tests.integration.helpers import (
    Organiser,
    assert_nothing_left,
    assert_one_official_result_per_match,
    kill_all,
    start_tourney,
    store_rows,
    unique,
    wait_for,
    write_config,
)
from tests.integration.test_trust import start_worker, stop


def _log(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""


def test_two_runs_of_one_organiser_take_turns_on_a_small_pool(tmp_path: Path) -> None:
    tag = unique("share")
    organiser = Organiser(tmp_path / "home")
    configs = {
        name: write_config(tmp_path / name, name, entrants=6, sleep=0.1, tag=f"{tag}-{name}")
        for name in ("first", "second")
    }
    server = EmbeddedRedis(tmp_path / "redis").start()
    url = server.url()
    procs: dict[str, Running] = {}
    worker = start_worker(
        url,
        f"w-{tag}",
        tmp_path / "w",
        organiser.enrol(f"w-{tag}"),
        "--allow-unsandboxed",
        "--concurrency",
        "2",
    )
    try:

        def start(name: str) -> None:
            procs[name] = start_tourney(
                "run", configs[name], "--broker", url, "--no-local-workers",
                cwd=tmp_path / name, log=tmp_path / name / "run.log",
                extra_env={**organiser.env(), "TOURNEY_PROGRESS_EVERY_S": "0.5"},
            )  # fmt: skip

        start("first")
        first_dir = tmp_path / "first" / "runs" / "first"
        # the first run is under way (a match of it started) before the second is started
        wait_for(lambda: any(r.started_at for r in store_rows(first_dir)), 120, "the first run to play")
        start("second")
        for name, proc in procs.items():
            assert proc.wait(300) == 0, _log(tmp_path / name / "run.log")[-3000:]
    finally:
        for proc in procs.values():
            if proc.poll() is None:
                proc.kill()
        stop(worker)
        server.stop()
        kill_all([tag, str(tmp_path)])
    starts: list[tuple[float, str]] = []
    for name in configs:
        run_dir = tmp_path / name / "runs" / name
        assert_one_official_result_per_match(run_dir)
        with RunStore.open(run_dir) as store:
            rows = store.match_rows()
        assert all(row.state == "done" and row.failures == 0 for row in rows), [
            (row.match_id, row.state, row.failures) for row in rows
        ]
        starts += [(row.started_at or 0.0, name) for row in rows]
    order = [name for _, name in sorted(starts)]
    print("starts in order:", " ".join(name[0] for name in order))
    first_of_second = order.index("second")
    last_of_first = len(order) - 1 - order[::-1].index("first")
    # the second run's matches start before the first run is over: the first's later matches
    # are played between the second's, not all before them
    after = order[first_of_second:]
    assert after.count("first") >= 4, order
    # and in turns: from the second's first start to the first's last, neither run took a long
    # series of starts (with two worker processes and a slot each, the queue alternates)
    between = order[first_of_second : last_of_first + 1]
    longest = max(len(list(block)) for _, block in itertools.groupby(between))
    assert longest <= 4, order
    assert between.count("second") >= between.count("first") // 2, order
    # each run's panel said how many workers it shared with how many runs
    for name in configs:
        assert "workers 2 shared by 2 runs" in _log(tmp_path / name / "run.log"), name
    assert_nothing_left([tag, str(tmp_path)])
