"""What ``tourney worker`` checks before it takes any work (docs/scale-out.md).

A worker that cannot do its job must not take matches (each would come back
as a ``system_error`` in milliseconds and use up other machines' retries).
So before consuming it proves, in this order:

1. the broker answers with this password (a wrong password or an unreachable
   broker ends the worker within seconds, with one line saying which);
2. it holds a usable worker key (``tourney fleet add``);
3. it can unpack an entry's artifact (packed as the organiser packs one), build that small C
   entry with ``cc`` in its sandbox and run a move of it there.

Each failure is a ``PreflightFailed`` whose message is the one line to print.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import redis

from runner.domain.fleet import WorkerKey, load_worker_key
from runner.domain.match_values import Limits
from runner.domain.packing import pack_entry, unpack_entry
from runner.domain.signing import KeyFileError
from runner.errors import (
    BrokerNotRedis,
    BrokerPasswordRefused,
    BrokerRefused,
    BrokerUnreachable,
    BrokerWireError,
    WorkerUnfit,
)
from workers.broker_wire import wire_errors
from workers.sandbox import HostError, host_factory
from workers.sandbox.limits import build_limits

#: seconds the broker may take to answer at start (connect + PING)
BROKER_CHECK_TIMEOUT_S = 5.0

_C_SOURCE = '#include <stdio.h>\nint main(void) { puts("ok"); return 0; }\n'


class PreflightFailed(WorkerUnfit, RuntimeError):
    """The worker cannot serve: the message says why, in one line."""


def safe_url(url: str) -> str:
    from urllib.parse import urlsplit

    p = urlsplit(url)
    return f"{p.scheme}://{p.hostname}:{p.port}{p.path}"


def check_broker(url: str, timeout_s: float = BROKER_CHECK_TIMEOUT_S) -> None:
    client = redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)
    try:
        with wire_errors():
            client.ping()
    except BrokerPasswordRefused:
        raise PreflightFailed(f"broker {safe_url(url)} refused the password (wrong password)") from None
    except BrokerRefused as e:
        raise PreflightFailed(f"broker {safe_url(url)} answered with an error: {e.reason}") from None
    except BrokerNotRedis as e:  # something answers there, in another protocol
        why = e.reason.splitlines()[0]
        raise PreflightFailed(f"broker {safe_url(url)} answers but is not a Redis server ({why})") from None
    except BrokerUnreachable as e:
        why = e.reason.splitlines()[0]
        raise PreflightFailed(f"broker {safe_url(url)} is unreachable: {why}") from None
    except BrokerWireError as e:
        why = e.reason.splitlines()[0]
        raise PreflightFailed(f"broker {safe_url(url)} cannot be used: {why}") from None
    finally:
        client.close()


def check_worker_key(key_file: Path | None) -> WorkerKey:
    try:
        return load_worker_key(key_file)
    except KeyFileError as e:
        raise PreflightFailed(str(e)) from None


def check_sandbox(kind: str) -> None:
    """Run one move and one small C build in the worker's own sandbox."""
    try:
        _check_sandbox(kind)
    except PreflightFailed:
        raise
    except Exception as e:  # anything else this machine cannot do is the same answer: do not serve
        raise PreflightFailed(
            f"sandbox {kind} check failed: {type(e).__name__}: {e}".splitlines()[0]
        ) from None


def unpacked_entry(tmp: Path) -> Path:
    """The small C entry as a worker meets every entry: packed as the organiser packs it, then
    unpacked from its artifact (``runner.domain.packing``). A Python whose ``tarfile`` cannot
    unpack one (Debian 12's 3.11.2 lacked extraction filters) is found here, not by failing
    every match."""
    source = tmp / "source"
    source.mkdir()
    (source / "main.c").write_text(_C_SOURCE)
    entry = tmp / "entry"
    entry.mkdir()
    try:
        unpack_entry(pack_entry(source), entry)
    except Exception as e:
        raise PreflightFailed(
            f"cannot unpack an entry's artifact with this Python ({sys.version.split()[0]}): "
            f"{type(e).__name__}: {e}".splitlines()[0]
        ) from None
    if (entry / "main.c").read_text() != _C_SOURCE:
        raise PreflightFailed("an entry's artifact unpacked into other files than were packed")
    return entry


def _check_sandbox(kind: str) -> None:
    try:
        hosts = host_factory(kind)
    except HostError as e:
        raise PreflightFailed(f"sandbox {kind} unavailable: {e}") from None
    limits = Limits(move_wall_s=10.0)
    with tempfile.TemporaryDirectory(prefix="tourney-preflight-") as tmp:
        entry = unpacked_entry(Path(tmp))
        try:
            built = hosts.run_build(entry, "cc -O0 -o a.out main.c", build_limits(limits))
        except HostError as e:
            raise PreflightFailed(f"sandbox {kind} cannot build a C entry: {e}") from None
        if built.failure is not None or built.exit_code != 0:
            tail = (built.stderr_tail or built.stdout).decode(errors="replace").strip().splitlines()
            why = [
                f"exit {built.exit_code}",
                built.failure.value if built.failure else "",
                tail[-1] if tail else built.detail,
            ]
            raise PreflightFailed(f"sandbox {kind} cannot build a C entry: {' '.join(w for w in why if w)}")
        try:
            with hosts.open(entry, limits, "X") as host:
                ran = host.run(["./a.out"], b"", limits)
        except HostError as e:
            raise PreflightFailed(f"sandbox {kind} cannot run a move: {e}") from None
        if ran.failure is not None or ran.exit_code != 0 or ran.stdout.strip() != b"ok":
            why = [f"exit {ran.exit_code}", f"signal {ran.signal}" if ran.signal else "", ran.detail]
            why.append(ran.failure.value if ran.failure else "")
            raise PreflightFailed(f"sandbox {kind} cannot run a move: {' '.join(w for w in why if w)}")
