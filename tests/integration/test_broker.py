"""The embedded Redis and `tourney worker`'s broker checks."""

from __future__ import annotations

import argparse
import contextlib
import os
import subprocess
import time
from pathlib import Path

import pytest
import redis

from runner.orchestration.dispatcher import BrokerDown
from runner.orchestration.local_workers import LocalWorkers
from runner.orchestration.redis_server import EmbeddedRedis, free_port
from tests import forked_cli
from tests.integration.helpers import TOURNEY, Organiser, env
from workers.celery_app import SETTINGS, VISIBILITY_TIMEOUT_S
from workers.worker_cli import BrokerURLError, broker_url_of, check_broker_url


def test_embedded_redis_is_private_and_persistent(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis").start()
    try:
        assert len(server.password) >= 24
        with pytest.raises(redis.exceptions.AuthenticationError):
            redis.Redis(port=server.port, socket_timeout=5).ping()
        client = redis.Redis.from_url(server.url())
        client.set("k", "v")
        client.close()
        conf = (tmp_path / "redis" / "redis.conf").read_text()
        assert "bind 127.0.0.1" in conf and "appendonly yes" in conf
        assert (tmp_path / "redis" / "redis.conf").stat().st_mode & 0o077 == 0
        server.stop()
        # same data directory, port and password: the data survives a restart
        server = EmbeddedRedis(tmp_path / "redis", password=server.password, port=server.port).start()
        client = redis.Redis.from_url(server.url())
        assert client.get("k") == b"v"
        client.close()
    finally:
        server.stop()
    assert not (tmp_path / "redis" / "redis.pid").exists()


def test_worker_refuses_a_broker_without_password() -> None:
    done = forked_cli.run(
        [*TOURNEY, "worker", "--broker", "redis://127.0.0.1:6399/0"],
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "no password" in done.stderr and "--allow-no-password" in done.stderr


def test_broker_url_checks() -> None:
    check_broker_url("redis://:pw@10.0.0.1:6379/0", allow_no_password=False)
    check_broker_url("redis://10.0.0.1:6379/0", allow_no_password=True)
    with pytest.raises(BrokerURLError, match="no password"):
        check_broker_url("redis://10.0.0.1:6379/0", allow_no_password=False)
    with pytest.raises(BrokerURLError, match="scheme"):
        check_broker_url("amqp://u:p@host//", allow_no_password=False)


def test_worker_with_allow_no_password_serves_a_passwordless_broker(tmp_path: Path) -> None:
    server = EmbeddedRedis(tmp_path / "redis").start()
    client = server.client()
    client.config_set("requirepass", "")  # a broker someone else runs without a password
    client.close()
    proc = forked_cli.Popen(
        [
            *TOURNEY,
            "worker",
            "--broker",
            f"redis://127.0.0.1:{server.port}/0",
            "--allow-no-password",
            "--concurrency",
            "1",
            "--name",
            "nopw",
            "--work-dir",
            str(tmp_path / "w"),
        ],
        env=env(**_key_env(tmp_path)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        r = redis.Redis(port=server.port, socket_timeout=5)
        deadline = time.monotonic() + 60
        while not r.keys("tourney:worker:*:nopw"):  # its presence key: it is up and connected
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "worker did not come up"
            time.sleep(0.2)
        r.close()
    finally:
        proc.terminate()
        proc.wait(30)
        server.stop()


def test_celery_settings_follow_the_design() -> None:
    assert SETTINGS["task_acks_late"] is True
    assert SETTINGS["task_reject_on_worker_lost"] is True
    assert SETTINGS["worker_prefetch_multiplier"] == 1
    assert SETTINGS["accept_content"] == ["json"]
    assert SETTINGS["task_serializer"] == SETTINGS["result_serializer"] == "json"
    assert SETTINGS["broker_transport_options"]["visibility_timeout"] == VISIBILITY_TIMEOUT_S >= 3600
    assert SETTINGS["broker_connection_retry_on_startup"] is True
    assert SETTINGS["broker_connection_max_retries"] is None


def _worker(url: str, tmp_path: Path, **extra_env: str) -> subprocess.CompletedProcess[str]:
    return forked_cli.run(
        [*TOURNEY, "worker", "--broker", url, "--name", "clear", "--work-dir", str(tmp_path / "w")],
        env=env(**extra_env),
        capture_output=True,
        text=True,
        timeout=60,
    )


def _key_env(tmp_path: Path) -> dict[str, str]:
    """A worker key file of an organiser of this test's own, for ``tourney worker``."""
    organiser = Organiser(tmp_path / "home")
    return organiser.env(organiser.enrol("clear"))


def test_worker_with_a_wrong_password_exits_at_once_with_one_line(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path / "redis") as server:
        t0 = time.monotonic()
        done = _worker(f"redis://:wrong@127.0.0.1:{server.port}/0", tmp_path, **_key_env(tmp_path))
        took = time.monotonic() - t0
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "refused the password" in lines[0], done.stderr
    assert "wrong" not in lines[0].split("refused")[0]  # the password itself is never printed
    assert took < 30, took


def test_worker_with_an_unreachable_broker_exits_at_once_with_one_line(tmp_path: Path) -> None:
    port = free_port()  # nothing listens there
    done = _worker(f"redis://:pw@127.0.0.1:{port}/0", tmp_path, **_key_env(tmp_path))
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "unreachable" in lines[0], done.stderr


def test_the_coordinator_names_a_wrong_password_and_an_absent_broker_apart(tmp_path: Path) -> None:
    """``tourney run --broker``'s first check (``CeleryDispatcher.ping``), through the one mapper
    of the client's errors: which of the two it is, in the client's words, without the password."""
    organiser = Organiser(tmp_path / "home")
    with EmbeddedRedis(tmp_path / "redis") as server:
        wrong = organiser.dispatcher(f"redis://:wrong-pw@127.0.0.1:{server.port}/0", "r1")
        try:
            with pytest.raises(BrokerDown, match=r"refused the password: \S") as refused:
                wrong.ping()
        finally:
            wrong.close()
    absent = organiser.dispatcher(f"redis://:pw@127.0.0.1:{free_port()}/0", "r1")
    try:
        with pytest.raises(BrokerDown, match=r"unreachable: Error \d+ connecting") as unreachable:
            absent.ping()
    finally:
        absent.close()
    assert "wrong-pw" not in str(refused.value) and ":pw@" not in str(unreachable.value)
    assert "Error" not in str(refused.value)  # the client's message, not its type's name


def test_worker_without_a_key_refuses_to_start(tmp_path: Path) -> None:
    with EmbeddedRedis(tmp_path / "redis") as server:
        done = _worker(server.url(), tmp_path)
        key = Organiser(tmp_path / "home").enrol("loose")
        key.chmod(0o644)
        readable = forked_cli.run(
            [*TOURNEY, "worker", "--broker", server.url(), "--key-file", str(key)],
            env=env(),
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert done.returncode == 3 and "no worker key" in done.stderr, done.stderr
    assert readable.returncode == 3 and "chmod 600" in readable.stderr, readable.stderr


def _command_lines() -> list[str]:
    lines = []
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            with contextlib.suppress(OSError):
                lines.append(
                    Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                )
    return lines


def test_local_workers_have_no_password_on_their_command_line(tmp_path: Path) -> None:
    """A real embedded Redis and real local workers: ``ps`` (every process's
    cmdline) never shows the password while they serve."""
    server = EmbeddedRedis(tmp_path / "redis").start()
    key_file = Organiser(tmp_path / "home").enrol("local-test")
    workers = LocalWorkers(server.url(), tmp_path / "run", 1, key_file=key_file).start()
    try:
        deadline = time.monotonic() + 60
        log = tmp_path / "run" / "logs" / "worker-1.log"
        while time.monotonic() < deadline and "ready" not in (log.read_text() if log.exists() else ""):
            assert server.password not in " ".join(_command_lines())
            time.sleep(0.2)
        assert "ready" in log.read_text(), log.read_text()[-2000:]
        assert workers.alive() == 1
        assert server.password not in " ".join(_command_lines())
    finally:
        workers.stop()
        server.stop()


def test_worker_takes_the_broker_from_a_private_file_only(tmp_path: Path) -> None:
    url_file = tmp_path / "broker"
    url_file.write_text("redis://:pw@127.0.0.1:1/0\n")
    url_file.chmod(0o644)
    args = argparse.Namespace(broker=None, broker_file=str(url_file))
    with pytest.raises(BrokerURLError, match="readable by others"):
        broker_url_of(args)
    url_file.chmod(0o600)
    assert broker_url_of(args) == "redis://:pw@127.0.0.1:1/0"


def test_run_takes_the_broker_from_a_private_file_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tourney run --broker-file``: the coordinator's own command line holds no password either."""
    from runner.cli import main

    url_file = tmp_path / "broker"
    url_file.write_text("redis://:pw@127.0.0.1:1/0\n")
    url_file.chmod(0o644)
    config = str(Path(__file__).resolve().parents[2] / "configs" / "potm94.yaml")
    argv = ["run", config, "--broker-file", str(url_file), "--inline", "--run-dir", str(tmp_path / "run")]
    code = main(argv)
    assert code == 2
    assert f"--broker-file {url_file} is readable by others: chmod 600" in capsys.readouterr().err
    url_file.chmod(0o600)
    # read, then held to the run's rules like --broker (here: not with --inline)
    code = main(argv)
    assert code == 2 and "--inline and --broker exclude each other" in capsys.readouterr().err


def test_stopping_the_embedded_redis_keeps_its_data_and_survives_a_refused_shutdown(tmp_path: Path) -> None:
    """``stop`` ends the server with SHUTDOWN (at once, where SIGTERM waits for the server's
    timer): the append-only file is flushed as before; a server that refuses the command (an
    ACL) is stopped with SIGTERM instead."""
    server = EmbeddedRedis(tmp_path / "redis").start()
    client = server.client()
    client.set("kept", "yes")
    client.close()
    server.stop()
    assert server.proc is None
    again = EmbeddedRedis(tmp_path / "redis", password=server.password, port=free_port()).start()
    try:
        client = again.client()
        assert client.get("kept") == b"yes"  # the AOF was flushed on the way out
        client.execute_command("ACL", "SETUSER", "default", "-shutdown")  # type: ignore[no-untyped-call]
        with pytest.raises(redis.exceptions.ResponseError):
            client.shutdown()
        client.close()
        proc = again.proc
        assert proc is not None
        again.stop()
        assert proc.poll() is not None
    finally:
        again.stop()
