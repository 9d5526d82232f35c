"""docs/deploy.md followed as an operator follows it, on this machine (issue 37, item 6).

The install block's commands (a system user, a venv built from Debian's ``/usr/bin/python3``),
Debian's ``/usr/bin/redis-server`` run as its ``redis`` user with the page's ACL user and TLS
(the key owned as the page says, ``127.0.0.1`` and the broker's address in the certificate),
and the unit's ``ExecStart`` run under ``setpriv`` as the new user, with the environment
systemd gives it (a ``HOME`` that does not exist), inside a network namespace of its own that
reaches the broker over a veth link. The coordinator connects with the page's coordinator URL
on 127.0.0.1. Then the organiser revokes the worker: it exits 4, which the unit's
``RestartPreventExitStatus`` names, and a restart exits 4 at once.

Paths are the page's under a directory of the test's own, the user's name ``tourney-<hex>``
(a shared machine may run this twice at once); everything is removed afterwards. Needs root,
network namespaces, Debian's ``python3-venv`` and ``redis-server``, ``openssl`` and PyPI (the
venv's install); skipped without them.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import shlex
import shutil
import signal
import socket
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from bench.netns import Machine, machines, netns_problem
from runner.storage.store import RunStore
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import (
    ROOT,
    Organiser,
    assert_one_official_result_per_match,
    start_tourney,
    store_rows,
    tourney,
    unique,
    wait_for,
    write_config,
)

DEPLOY = ROOT / "docs" / "deploy.md"
DEBIAN_PYTHON = "/usr/bin/python3"
DEBIAN_REDIS = "/usr/bin/redis-server"


def _fenced(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DEPLOY.read_text(), flags=re.S)


def _indented_lines() -> list[str]:
    return [line.strip() for line in DEPLOY.read_text().splitlines() if line.startswith("    ")]


def _skip_unless_possible() -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root (useradd, setpriv, network namespaces)")
    for tool in ("useradd", "userdel", "setpriv", "openssl"):
        if shutil.which(tool) is None:
            pytest.skip(f"no {tool} here")
    for path in (DEBIAN_PYTHON, DEBIAN_REDIS):
        if not Path(path).exists():
            pytest.skip(f"no {path} (Debian's python3-venv and redis-server)")
    if subprocess.run([DEBIAN_PYTHON, "-c", "import ensurepip, venv"], capture_output=True).returncode:
        pytest.skip("Debian's python3 has no venv here (apt-get install python3-venv)")
    problem = netns_problem()
    if problem is not None:
        pytest.skip(problem)
    if bwrap_problem() is not None:
        pytest.skip(f"no sandbox here: {bwrap_problem()}")
    try:
        socket.create_connection(("pypi.org", 443), timeout=5).close()
    except OSError:
        pytest.skip("PyPI unreachable: the install step cannot run")


def _sh(command: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, shell=True, capture_output=True, text=True, timeout=900, cwd=cwd)


def _as(user: str, argv: list[str]) -> list[str]:
    """``argv`` as systemd's ``User=``/``Group=`` run it: that uid, gid and its groups."""
    return ["setpriv", "--reuid", user, "--regid", user, "--init-groups", *argv]


def test_an_operator_follows_deploy_md_on_debian_12(tmp_path: Path) -> None:
    _skip_unless_possible()
    token = secrets.token_hex(3)
    user = f"tourney-{token}"
    base = Path(f"/tmp/tourney-deploy-{token}")  # not under pytest's 0700 directory: the user reads it
    opt, etc, cache, redis_dir = (
        base / "opt" / "tourney",
        base / "etc" / "tourney",
        base / "cache",
        base / "redis",
    )

    def here(text: str) -> str:
        """The page's paths and user, as this test lays them out."""
        return (
            text.replace("/opt/tourney", str(opt)).replace("/etc/tourney", str(etc))
            .replace("/etc/redis", str(redis_dir)).replace("/var/cache/tourney", str(cache))
            .replace(" tourney\n", f" {user}\n").replace("-o root -g tourney", f"-o root -g {user}")
        )  # fmt: skip

    (install,) = [block for block in _fenced("sh") if "useradd" in block]
    commands = [line for line in install.splitlines() if line and not line.startswith("#")]
    useradd = next(c for c in commands if c.startswith("useradd"))
    assert useradd.endswith(" tourney") and "--home-dir /nonexistent" in useradd
    created_user = False
    try:
        base.mkdir(mode=0o755)
        done = _sh(here(useradd + "\n").strip())
        assert done.returncode == 0, done.stderr
        created_user = True
        # the source tree where the page clones it (git clone: here, the files of this checkout)
        files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
        for rel in files.decode().split("\0"):
            if rel and (ROOT / rel).is_file():
                (opt / rel).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(ROOT / rel, opt / rel)
        for command in commands:
            if command.startswith(("apt-get", "useradd", "git clone")):
                continue  # installed already (the skip checks); made above
            done = _sh(here(command))
            assert done.returncode == 0, f"{command}: {done.stdout[-2000:]}{done.stderr[-2000:]}"
        tourney_bin = opt / ".venv" / "bin" / "tourney"
        version = subprocess.run(
            [str(opt / ".venv" / "bin" / "python"), "-V"], capture_output=True, text=True
        )
        print(f"venv: {version.stdout.strip()} from {DEBIAN_PYTHON}")

        # the broker: Debian's redis-server as user redis, the page's TLS and ACL
        with machines(1) as (box,):
            _broker_and_worker(tmp_path, box, user, here, etc, cache, redis_dir, tourney_bin)
    finally:
        if created_user:
            subprocess.run(["userdel", user], capture_output=True, timeout=60)
        shutil.rmtree(base, ignore_errors=True)


def _broker_and_worker(
    tmp_path: Path,
    box: Machine,
    user: str,
    here: Callable[[str], str],
    etc: Path,
    cache: Path,
    redis_dir: Path,
    tourney_bin: Path,
) -> None:
    tag = unique("deploy")
    organiser = Organiser(tmp_path / "home")
    redis_dir.mkdir(parents=True)
    # the page's certificate commands, the broker at this link's host end instead of 10.0.0.1
    tls_lines = [
        line for line in _indented_lines() if line.startswith(("openssl ", "printf 'subjectAltName"))
    ]
    tls_lines += [line for line in _indented_lines() if line.startswith("install -m 0") and "redis" in line]
    assert any("IP:127.0.0.1" in line for line in tls_lines), tls_lines
    work = tmp_path / "ca"
    work.mkdir()
    for line in tls_lines:
        command = here(line).replace("10.0.0.1", box.host_ip).replace("rsa:3072", "rsa:2048")
        done = _sh(command, cwd=work)
        assert done.returncode == 0, f"{command}: {done.stderr}"
    key_stat = (redis_dir / "redis.key").stat()
    assert key_stat.st_mode & 0o777 == 0o640 and key_stat.st_uid == 0
    conf_blocks = _fenced("conf")
    (acl_block,) = [b for b in conf_blocks if "user tourney-worker" in b]
    (tls_block,) = [b for b in conf_blocks if "tls-port" in b]
    worker_pw, organiser_pw = unique("wpw"), unique("opw")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    conf = "\n".join(
        [
            acl_block.replace("10.0.0.1", box.host_ip).replace("6379", "0")
            .replace("WORKER_PASSWORD", worker_pw).replace("ORGANISER_PASSWORD", organiser_pw),
            here(tls_block).replace("6380", str(port)),
            f"dir {redis_dir}", "save \"\"", "appendonly no", f"logfile {redis_dir / 'redis.log'}",
        ]
    )  # fmt: skip
    (redis_dir / "redis.conf").write_text(conf)
    shutil.chown(redis_dir, "redis", "redis")
    redis_proc = subprocess.Popen(_as("redis", [DEBIAN_REDIS, str(redis_dir / "redis.conf")]))
    try:
        ca = etc / "ca.pem"
        coordinator_url = here("rediss://:ORGANISER_PASSWORD@127.0.0.1:6380/0?ssl_ca_certs=/etc/redis/ca.pem")
        page = DEPLOY.read_text()
        assert "rediss://:ORGANISER_PASSWORD@127.0.0.1:6380/0?ssl_ca_certs=/etc/redis/ca.pem" in page
        coordinator_url = coordinator_url.replace("ORGANISER_PASSWORD", organiser_pw).replace(
            "6380", str(port)
        )
        (tmp_path / "coord.url").write_text(coordinator_url + "\n")
        (tmp_path / "coord.url").chmod(0o600)
        wait_for(lambda: "Ready to accept connections" in _read(redis_dir / "redis.log"), 30, "redis")

        # the worker machine's files, as the page installs them
        shutil.copy(work / "ca.pem", ca)
        ca.chmod(0o644)
        name = f"deploy-{tag}"
        key = organiser.enrol(name, etc / "worker.key")
        url_file = etc / "broker.url"
        url_file.write_text(f"rediss://tourney-worker:{worker_pw}@{box.host_ip}:{port}/0?ssl_ca_certs={ca}\n")
        for f in (key, url_file):
            f.chmod(0o600)
            shutil.chown(f, user, user)
        cache.mkdir(mode=0o700)  # systemd's CacheDirectory=
        shutil.chown(cache, user, user)

        (unit,) = _fenced("ini")
        (exec_start,) = [
            line[len("ExecStart=") :] for line in unit.splitlines() if line.startswith("ExecStart=")
        ]
        argv = shlex.split(here(exec_start).replace("%H", name))
        assert argv[0] == str(tourney_bin)
        # systemd's environment for User=: HOME from the passwd entry (it does not exist)
        service_env = {
            "PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            "HOME": "/nonexistent", "USER": user, "LOGNAME": user, "LANG": "C.UTF-8",
            "CACHE_DIRECTORY": str(cache),
        }  # fmt: skip
        log = tmp_path / "worker.log"
        worker = box.popen(_as(user, argv), cwd=Path("/"), log=log, env=service_env)
        wait_for(lambda: "active run" in _read(log), 180, f"the worker's start lines: {_read(log)[-2000:]}")
        config = write_config(tmp_path, "deploy", entrants=3, sandbox="bwrap", tag=tag)
        run = tourney("run", config, "--broker-file", tmp_path / "coord.url", "--no-local-workers",
                      cwd=tmp_path, timeout=300, extra_env=organiser.env())  # fmt: skip
        assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
        run_dir = tmp_path / "runs" / "deploy"
        with RunStore.open(run_dir) as store:
            assert {row.worker for row in store.match_rows()} == {name}
        assert_one_official_result_per_match(run_dir)
        # everything under --work-dir, the launcher too; nothing under a home
        assert list((cache / "sandbox").glob("launcher-*")), sorted(p.name for p in cache.iterdir())
        assert not Path("/nonexistent").exists()
        text = _read(log)
        assert f"cache {cache}" in text and "NOPERM" not in text, text[-3000:]
        print(
            "worker start lines:\n"
            + "\n".join(line for line in text.splitlines() if "tourney worker" in line)
        )

        # revoked: exit 4, which the unit does not restart; started again, it exits 4 at once
        restart_prevent = next(
            line for line in unit.splitlines() if line.startswith("RestartPreventExitStatus=")
        )
        assert "4" in restart_prevent.split("=", 1)[1].split()
        # the organiser revokes the key while a run of it plays: the worker is told and stops
        config2 = write_config(tmp_path, "deploy2", entrants=4, sandbox="bwrap", sleep=0.05, tag=tag)
        second = start_tourney("run", config2, "--broker-file", tmp_path / "coord.url", "--no-local-workers",
                               "--no-progress", cwd=tmp_path, log=tmp_path / "run2.log",
                               extra_env=organiser.env())  # fmt: skip
        try:
            run2 = tmp_path / "runs" / "deploy2"
            wait_for(lambda: any(r.started_at for r in store_rows(run2)), 120, "the second run to play")
            revoked = tourney("fleet", "revoke", name, "--reason", "deploy test", cwd=tmp_path,
                              extra_env=organiser.env())  # fmt: skip
            assert revoked.returncode == 0, revoked.stderr
            assert worker.wait(120) == 4, _read(log)[-2000:]
        finally:
            second.send_signal(signal.SIGINT)  # the run waits for another worker: stop it cleanly
            try:
                second.wait(60)
            except subprocess.TimeoutExpired:
                second.kill()
        again = box.popen(_as(user, argv), cwd=Path("/"), log=tmp_path / "again.log", env=service_env)
        assert again.wait(120) == 4, _read(tmp_path / "again.log")
        print("revoked:", _read(log).strip().splitlines()[-1])
        print("restarted:", _read(tmp_path / "again.log").strip().splitlines()[-1])
    finally:
        box.stop()
        if redis_proc.poll() is None:
            redis_proc.terminate()
            with contextlib.suppress(subprocess.TimeoutExpired):
                redis_proc.wait(20)
        if redis_proc.poll() is None:
            redis_proc.kill()


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""
