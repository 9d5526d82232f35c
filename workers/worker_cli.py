"""``tourney worker --broker URL``: serve matches from any run on that broker.

A worker needs nothing but the broker URL: entries arrive as artifacts by
digest through Redis and are built once per digest in ``--work-dir``
(default ``~/.cache/tourney``). It can join or leave at any time; a joining
worker takes the next queued match. A broker URL without a password is
refused (DESIGN §6) unless ``--allow-no-password`` says otherwise.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import ctypes
import ctypes.util
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from urllib.parse import urlsplit

import redis

from runner.redis_server import BROKER_ENV
from workers.sandbox.cgroups import sandbox_memory_note

#: presence key refresh period and lifetime
PRESENCE_EVERY_S = 5.0
PRESENCE_TTL_S = 15.0


class BrokerURLError(ValueError):
    pass


def check_broker_url(url: str, *, allow_no_password: bool) -> None:
    """Refuse what is not a Redis URL, and one without a password unless allowed."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        raise BrokerURLError(
            f"broker URL must be redis://:PASSWORD@HOST:PORT/DB, got scheme {parts.scheme!r}"
        )
    if not parts.hostname:
        raise BrokerURLError("broker URL names no host")
    if not parts.password and not allow_no_password:
        raise BrokerURLError(
            "broker URL has no password; Redis must always have one (redis://:PASSWORD@HOST:PORT/0). "
            "Pass --allow-no-password to use it anyway."
        )


def _presence(url: str, name: str, concurrency: int, stop: threading.Event) -> None:
    r = redis.Redis.from_url(url, socket_timeout=5.0, socket_connect_timeout=5.0)
    from workers.celery_app import KEYS

    key = KEYS.worker(name)
    while not stop.is_set():
        with contextlib.suppress(redis.exceptions.RedisError):
            r.set(key, str(concurrency), px=int(PRESENCE_TTL_S * 1000))
        stop.wait(PRESENCE_EVERY_S)
    with contextlib.suppress(redis.exceptions.RedisError):
        r.delete(key)


def _die_with_parent() -> None:
    """Celery pool processes: SIGKILL when the worker's main process dies, so a
    killed worker leaves no pool process behind."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def broker_url_of(args: argparse.Namespace) -> str:
    """The broker URL from ``--broker``, ``--broker-file`` (which must be private:
    mode 0600 or stricter) or ``$TOURNEY_BROKER_URL``, in that order."""
    if getattr(args, "broker", None):
        return str(args.broker)
    path = getattr(args, "broker_file", None)
    if path:
        try:
            st = os.stat(path)
            text = Path(path).read_text().strip()
        except OSError as e:
            raise BrokerURLError(f"cannot read --broker-file {path}: {e.strerror}") from e
        if st.st_mode & 0o077:
            raise BrokerURLError(f"--broker-file {path} is readable by others: chmod 600 {path}")
        return text
    url = os.environ.get(BROKER_ENV)
    if not url:
        raise BrokerURLError(f"no broker: give --broker URL, --broker-file FILE or ${BROKER_ENV}")
    return url


def cmd_worker(args: argparse.Namespace) -> int:
    try:
        url = broker_url_of(args)
        check_broker_url(url, allow_no_password=bool(args.allow_no_password))
    except BrokerURLError as e:
        print(f"tourney worker: {e}", file=sys.stderr)
        return 2
    concurrency = int(args.concurrency or os.cpu_count() or 1)
    if concurrency < 1:
        print("tourney worker: --concurrency must be at least 1", file=sys.stderr)
        return 2
    name = args.name or f"tourney-{os.getpid()}@{socket.gethostname()}"
    work = Path(args.work_dir).expanduser() if args.work_dir else Path.home() / ".cache" / "tourney"
    work = work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    work.chmod(0o700)  # the artifact and build cache: no other local user reads it
    # pool processes read these (they inherit the environment)
    os.environ["TOURNEY_WORK_DIR"] = str(work)
    os.environ[BROKER_ENV] = url
    os.environ["TOURNEY_WORKER_NAME"] = name

    from celery.signals import worker_process_init

    from workers.celery_app import QUEUE, configure

    app = configure(url)
    worker_process_init.connect(lambda **_: _die_with_parent(), weak=False)

    stop = threading.Event()
    threading.Thread(target=_presence, args=(url, name, concurrency, stop), daemon=True).start()
    atexit.register(stop.set)
    print(f"tourney worker {name}: {concurrency} process(es), cache {work}", flush=True)
    print(f"tourney worker {name}: {sandbox_memory_note()}", flush=True)
    app.worker_main(
        [
            "worker",
            "--pool=prefork",
            f"--concurrency={concurrency}",
            f"--hostname={name}",
            f"--queues={QUEUE}",
            "--loglevel=INFO",
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
        ]
    )
    stop.set()
    return 0
