"""Operations (docs/deploy.md): the password in no process's argv under ``make worker``, one line
for a broker URL that answers in another protocol, the systemd unit as written in the docs
(``systemd-analyze verify``), and the workers' Redis ACL user as written in the docs, against
Debian's ``redis-server`` 7."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis

from runner.orchestration.redis_server import EmbeddedRedis, RedisServerError
from runner.storage.store import RunStore
from tests import forked_cli
from tests.forked_cli import Running
from tests.integration.helpers import (
    ROOT,
    TOURNEY,
    Organiser,
    assert_nothing_left,
    assert_one_official_result_per_match,
    env,
    kill_all,
    standings,
    tourney,
    unique,
    write_config,
)
from tests.integration.test_trust import start_worker, stop
from workers.celery_app import KEYS

DEPLOY = ROOT / "docs" / "deploy.md"
DEBIAN_REDIS = "/usr/bin/redis-server"


def _command_lines() -> str:
    lines = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                lines.append(
                    Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
    return "\n".join(lines)


def test_make_worker_keeps_the_password_out_of_every_argv(tmp_path: Path) -> None:
    organiser = Organiser(tmp_path / "home")
    key_file = organiser.enrol("make-worker")
    name = unique("makew")
    server = EmbeddedRedis(tmp_path / "redis").start()
    args = f"--name {name} --concurrency 1 --skip-health-check --work-dir {tmp_path / 'w'}"
    proc = subprocess.Popen(
        ["make", "-s", "-C", str(ROOT), "worker", f"KEY_FILE={key_file}", f"ARGS={args}"],
        env=env(BROKER_URL=server.url()),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group: make, its shell and the worker
    )
    seen_up = False
    try:
        r = redis.Redis.from_url(server.url())
        for _ in range(600):  # bounded: at most about a minute
            assert server.password not in _command_lines()
            if r.exists(KEYS.worker(organiser.key.key_id, name)):
                seen_up = True
                break
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            threading.Event().wait(0.1)
        r.close()
        assert server.password not in _command_lines()
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)  # the group this test created
        proc.wait(60)
        server.stop()
    assert seen_up, "the worker did not come up"
    refused = subprocess.run(
        ["make", "-s", "-C", str(ROOT), "worker", "BROKER_URL=redis://:not-a-secret@127.0.0.1:1/0"],
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "visible to every local user" in refused.stdout, refused.stdout
    assert_nothing_left([name])


@contextlib.contextmanager
def _not_redis() -> Iterator[int]:
    """A loopback server that answers every request as an HTTP server would."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    listener.settimeout(0.5)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                continue
            with conn:
                conn.settimeout(5)
                with contextlib.suppress(OSError):
                    while conn.recv(4096):
                        conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        stop.set()
        thread.join(10)
        listener.close()


def test_a_broker_url_that_is_not_redis_gives_one_line(tmp_path: Path) -> None:
    organiser = Organiser(tmp_path / "home")
    key_file = organiser.enrol("probe")
    config = write_config(tmp_path, "notredis", entrants=2)
    with _not_redis() as port:
        url = f"redis://:pw@127.0.0.1:{port}/0"
        worker = forked_cli.run(
            [
                *TOURNEY,
                "worker",
                "--broker",
                url,
                "--key-file",
                str(key_file),
                "--work-dir",
                str(tmp_path / "w"),
            ],
            env=env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
        run = tourney("run", config, "--broker", url, "--no-local-workers", "--no-progress", cwd=tmp_path,
                      timeout=60, extra_env=organiser.env())  # fmt: skip
    # the same failure, the same code in every command (README.md, "Exit codes")
    for done, code in ((worker, 3), (run, 3)):
        lines = [line for line in done.stderr.strip().splitlines() if "warning: sandbox: none" not in line]
        assert done.returncode == code and len(lines) == 1, done.stderr
        assert "answers but is not a Redis server" in lines[0] and "pw" not in lines[0], lines


def _fenced(language: str) -> list[str]:
    """The ``language`` code blocks of docs/deploy.md, as written there."""
    return re.findall(rf"```{language}\n(.*?)```", DEPLOY.read_text(), flags=re.S)


def test_the_documented_systemd_unit_verifies(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("no systemd-analyze here")
    (unit_text,) = _fenced("ini")
    assert "Restart=on-failure" in unit_text and "--key-file /etc/tourney/worker.key" in unit_text
    assert "--broker-file /etc/tourney/broker.url" in unit_text and "redis://" not in unit_text
    # the one thing that differs on this machine: where tourney is installed
    unit = tmp_path / "tourney-worker.service"
    unit.write_text(
        unit_text.replace("/opt/tourney/.venv/bin/tourney", str(ROOT / ".venv" / "bin" / "tourney"))
    )
    done = subprocess.run([analyze, "verify", str(unit)], capture_output=True, text=True, timeout=60)
    about_unit = [line for line in (done.stdout + done.stderr).splitlines() if unit.name in line]
    assert done.returncode == 0 and not about_unit, done.stdout + done.stderr


def _debian_redis(directory: Path) -> EmbeddedRedis:
    if not Path(DEBIAN_REDIS).exists():
        pytest.skip(f"no {DEBIAN_REDIS} (apt-get install redis-server)")
    try:
        return EmbeddedRedis(directory, binary=DEBIAN_REDIS).start()
    except RedisServerError as e:
        pytest.skip(f"{DEBIAN_REDIS} does not start here: {e}")


def test_workers_play_a_run_as_the_documented_acl_user_that_cannot_administer(tmp_path: Path) -> None:
    tag = unique("acl")
    organiser = Organiser(tmp_path / "home")
    config = write_config(tmp_path, "acl", entrants=3, tag=tag)
    reference = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "ref", cwd=tmp_path
    )
    assert reference.returncode == 0, reference.stderr
    (conf,) = [block for block in _fenced("conf") if "user tourney-worker" in block]
    (rule,) = [line for line in conf.splitlines() if line.startswith("user tourney-worker ")]
    server = _debian_redis(tmp_path / "redis")
    run_dir = tmp_path / "runs" / "acl"
    worker: Running | None = None
    try:
        admin: Any = server.client()
        assert admin.info("server")["redis_version"].startswith("7.")
        password = unique("worker-pw")
        admin.execute_command(
            "ACL", "SETUSER", "tourney-worker", *rule.replace("WORKER_PASSWORD", password).split()[2:]
        )
        admin.close()
        as_worker: Any = redis.Redis(port=server.port, username="tourney-worker", password=password)
        for command in (
            ("CONFIG", "GET", "maxmemory"),
            ("FLUSHALL",),
            ("KEYS", "*"),
            ("MONITOR",),
        ):
            with pytest.raises(redis.exceptions.NoPermissionError):
                as_worker.execute_command(*command)
        as_worker.close()
        worker_url = f"redis://tourney-worker:{password}@127.0.0.1:{server.port}/0"
        name = f"aclw-{tag}"
        worker = start_worker(worker_url, name, tmp_path / "w", organiser.enrol(name), "--allow-unsandboxed")
        args = ("run", config, "--broker", server.url(), "--no-local-workers", "--no-progress")
        done = tourney(*args, cwd=tmp_path, timeout=180, extra_env=organiser.env())
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr
    finally:
        if worker is not None:
            stop(worker)
        server.stop()
        kill_all([tag, str(run_dir)])
    log = (tmp_path / "w" / "worker.log").read_text(errors="replace")
    assert "NOPERM" not in log and "no permissions" not in log, log[-3000:]
    with RunStore.open(run_dir) as store:
        assert {row.worker for row in store.match_rows()} == {name}
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == standings(tmp_path / "ref")
    assert_nothing_left([tag, str(run_dir)])
