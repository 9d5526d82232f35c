"""Kernel memory in loopback TCP buffers is charged to the sandbox (issue 25, item 2;
workers/sandbox/cgroups.py ``tcp_buffer_limit``).

A real C entry in the real sandbox opens loopback connections to itself in the
sandbox's own network namespace and tries to queue 4x its cgroup's memory limit
in buffers nobody reads."""

from __future__ import annotations

import shutil
import socket
import subprocess
from pathlib import Path

import pytest

from runner.domain.match_values import Limits
from workers.sandbox.base import HostFactory
from workers.sandbox.cgroups import CgroupV1, CgroupV2, shared_cgroups

HOARDER_SOURCE = Path(__file__).resolve().parent / "fixtures" / "tcp_hoarder.c"
CONNECTIONS = 64
#: a small limit keeps what the test pins small (and what it would pin unbounded)
LIMITS = Limits(move_wall_s=20.0, move_cpu_s=20.0, memory_mb=16, open_files=2 * CONNECTIONS + 16)
#: past the limit the kernel still charges, unasked, the segments already on their way
#: (measured: ~33 KiB a connection); a bound per connection, far below 4x the limit
IN_FLIGHT_PER_CONNECTION = 64 << 10


def _loopback_round_trip() -> bytes:
    """One message over a fresh TCP connection on the host's loopback (the worker's side)."""
    with (
        socket.create_server(("127.0.0.1", 0)) as server,
        socket.create_connection(server.getsockname()[:2], timeout=5.0) as client,
    ):
        conn, _ = server.accept()
        with conn:
            client.sendall(b"still here")
            conn.settimeout(5.0)
            return conn.recv(64)


@pytest.mark.integration
def test_unread_loopback_buffers_are_bounded_by_the_sandbox_memory_limit(
    bwrap_factory: HostFactory, tmp_path: Path
) -> None:
    if shared_cgroups().version is None:
        pytest.skip(f"no cgroups here: {shared_cgroups().problem}")
    if shutil.which("cc") is None:
        pytest.skip("no C compiler (cc) for the hoarding entry")
    subprocess.run(["cc", "-O2", "-o", str(tmp_path / "hoarder"), str(HOARDER_SOURCE)], check=True)
    with bwrap_factory.open(tmp_path, LIMITS, "A") as host:
        cgroup = host._sandbox.cgroup  # type: ignore[attr-defined]
        if isinstance(cgroup, CgroupV1):
            memory = cgroup.dirs["memory"]
            limit = int((memory / "memory.limit_in_bytes").read_text())
            tcp_limit = int((memory / "memory.kmem.tcp.limit_in_bytes").read_text())
        else:
            assert isinstance(cgroup, CgroupV2)
            limit = tcp_limit = int((cgroup.path / "memory.max").read_text())
        out = host.run(["./hoarder", str(CONNECTIONS), str(4 * limit), "6"], b"", LIMITS)
        assert out.failure is None and out.exit_code == 0, (out.failure, out.detail, out.stderr_tail)
        queued = int(out.stdout.decode().split()[1])
        bound = min(limit, tcp_limit) + CONNECTIONS * IN_FLIGHT_PER_CONNECTION
        print(f"\n[{cgroup.version}: limit {limit >> 20} MiB, queued {queued / 2**20:.1f} MiB]")
        assert 0 < queued <= bound, f"queued {queued} bytes past a {limit}-byte limit"
        if isinstance(cgroup, CgroupV1):
            tcp_peak = int((cgroup.dirs["memory"] / "memory.kmem.tcp.max_usage_in_bytes").read_text())
            assert 0 < tcp_peak <= bound, f"TCP buffers peaked at {tcp_peak} bytes (limit {limit})"
        # the worker: its own TCP works, the sandbox answers its next move
        assert _loopback_round_trip() == b"still here"
        after = host.run(["true"], b"", LIMITS)
        assert after.failure is None and after.exit_code == 0, after
