"""The runner's own CPU per match, outside the games (issue 13): what a worker spends on each.

Two figures, each on a real embedded Redis:

* ``task body``: CPU of ``workers.tasks.execute`` per match in the process that runs it
  (all its threads), with the match itself replaced by a recorded result of a real one
  (4 boxing games, 128 moves): the attempt check, the ``started`` note, heartbeat and live
  record, the policy, the result's signing and delivery;
* ``worker main``: CPU of a real ``tourney worker`` main process (Celery, prefork, late
  acks) per task it hands to its pool, for tasks its pool refuses at once (so the pool's
  work does not count): message delivery, the unacked index, pool IPC, the ack.

Run it against another tree to compare (a tree of the same signing API: ``runner.domain.wire``)::

    PYTHONPATH=/work/main .venv/bin/python bench/per_match_bench.py
    .venv/bin/python -m bench.per_match_bench

Absolute milliseconds (a diagnostic, not a target); medians of ``--rounds`` rounds.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parents[1]


def _cpu_of(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def task_body_ms(tmp: Path, matches: int) -> float:
    """Median CPU (ms) of ``tasks.execute`` per match, the match replayed from a recording."""
    os.environ["TOURNEY_WORK_DIR"] = str(tmp / "work")
    os.environ["TOURNEY_WORKER_NAME"] = "bench-worker"
    from runner.domain.entries import load_entry, pack_entry
    from runner.domain.fleet import WORKER_KEY_FILE_ENV, Fleet, RegistryView, organiser_key
    from runner.domain.match_values import Limits, MatchSpec
    from runner.domain.signing import signed
    from runner.orchestration.celery_dispatcher import CeleryDispatcher
    from runner.orchestration.dispatcher import Timing
    from runner.orchestration.redis_server import EmbeddedRedis
    from workers import tasks
    from workers.policy import POLICY_ENV, WorkerPolicy

    home = tmp / "organiser-task"
    key = organiser_key(home)
    os.environ[WORKER_KEY_FILE_ENV] = str(Fleet(home).enrol("bench-worker"))
    tasks._key = None
    os.environ[POLICY_ENV] = WorkerPolicy(allow_unsandboxed=True).to_json()
    fixtures = HERE / "tests" / "fixtures" / "boxing"
    specs = [load_entry(fixtures / name)[0] for name in ("native", "first_fit")]
    refs = {s.name: s.ref() for s in specs}
    order = list(refs)
    spec = MatchSpec.of(
        match_id="bench", game="boxing", board_id="b", board_text="--------\n" * 4,
        orders=[order, order[::-1], order, order[::-1]], entries=refs,
        limits=Limits(move_wall_s=10.0), seed=0, sandbox="none",
    )  # fmt: skip
    blobs = {s.digest: tmp / f"{s.digest}.tar.gz" for s in specs}
    for s in specs:
        blobs[s.digest].write_bytes(pack_entry(s.path))
    server = EmbeddedRedis(tmp / "redis-task").start()
    os.environ["TOURNEY_BROKER_URL"] = server.url()  # what a worker process gets from its command line
    dispatcher = CeleryDispatcher(server.url(), "bench-run", Timing(), key, RegistryView(home))
    real_play = tasks.play
    recorded: list[Any] = []

    def replayed(*args: Any, **kwargs: Any) -> Any:
        if not recorded:
            recorded.append(real_play(*args, **kwargs))
        return recorded[0]

    tasks.play = replayed  # type: ignore[assignment]
    cpus: list[float] = []
    try:
        dispatcher.publish_artifacts(blobs)
        for attempt in range(1, matches + 1):
            dispatcher.want("bench", attempt)
            envelope = signed(dispatcher.envelope(spec, attempt), key).decode()
            c0 = time.process_time()
            status = tasks.execute(envelope)["status"]
            cpus.append(time.process_time() - c0)
            if status != "done":
                raise SystemExit(f"task body: {status}")
            if attempt % 50 == 0:
                dispatcher.poll(0.05)  # the inbox stays short, as a coordinator keeps it
    finally:
        tasks.play = real_play  # type: ignore[assignment]
        dispatcher.forget_run()
        dispatcher.close()
        server.stop()
    return statistics.median(cpus[10:]) * 1000


def worker_main_ms(tmp: Path, tasks_n: int) -> float:
    """CPU (ms) of a ``tourney worker`` main process per task (its pool refuses each at once)."""
    from runner.domain.fleet import WORKER_KEY_FILE_ENV, Fleet, RegistryView, organiser_key
    from runner.domain.signing import sign_bytes
    from runner.orchestration.celery_dispatcher import CeleryDispatcher
    from runner.orchestration.dispatcher import Timing
    from runner.orchestration.redis_server import EmbeddedRedis
    from workers.task_message import task_message

    home = tmp / "organiser-main"
    key = organiser_key(home)
    server = EmbeddedRedis(tmp / "redis-main").start()
    dispatcher = CeleryDispatcher(server.url(), "bench-main", Timing(), key, RegistryView(home))
    queue = dispatcher.queue
    worker_key = str(Fleet(home).enrol("bench-main"))
    env = dict(os.environ, **{WORKER_KEY_FILE_ENV: worker_key, "TOURNEY_WORK_DIR": str(tmp / "work-main")})
    argv = [sys.executable, "-m", "runner.cli", "worker", "--broker", server.url(), "--concurrency", "2",
            "--name", "bench-main", "--skip-health-check", "--allow-unsandboxed"]  # fmt: skip
    with (tmp / "worker.log").open("w") as log:
        worker = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=log)

    def send(n: int, first: int) -> None:
        for i in range(first, first + n):
            # an envelope of no run: the pool refuses it unplayed (it is not a valid task)
            body = b'{"run":"bench-main","attempt":1,"spec":{"match_id":"m%d"}}' % i
            envelope = sign_bytes(body, key).decode()
            message = task_message(f"t{i}", [envelope], argsrepr="-", sender="bench", queue=queue)
            dispatcher.redis.lpush(queue, message)

    def drained(timeout_s: float = 120.0) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if dispatcher.redis.llen(queue) == 0 and dispatcher.redis.hlen("unacked") == 0:
                return
            time.sleep(0.05)
        raise SystemExit("worker main: tasks not drained")

    try:
        send(20, 0)  # warm up (the worker starts meanwhile)
        drained()
        time.sleep(0.3)
        c0 = _cpu_of(worker.pid)
        send(tasks_n, 1000)
        drained()
        time.sleep(0.2)
        return (_cpu_of(worker.pid) - c0) / tasks_n * 1000
    finally:
        worker.send_signal(signal.SIGTERM)
        try:
            worker.wait(30)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(10)
        dispatcher.close()
        server.stop()


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(allow_abbrev=False, description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--matches", type=int, default=300)
    args = p.parse_args(argv)
    body: list[float] = []
    main_: list[float] = []
    for _ in range(args.rounds):
        tmp = Path(tempfile.mkdtemp(prefix="per-match-"))
        try:
            body.append(task_body_ms(tmp, args.matches))
            main_.append(worker_main_ms(tmp, args.matches))
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"task body CPU per match (pool process): {statistics.median(body):.3f} ms")
    print(f"worker main CPU per task (Celery main process): {statistics.median(main_):.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
