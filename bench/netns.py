"""Separate "machines" on one host: network namespaces joined to the host by veth pairs.

Each ``Machine`` is a namespace ``tourney-test-<token>-<i>`` with one veth
link: host side ``10.B.i.1/30``, namespace side ``10.B.i.2/30`` (``B`` a
second octet no route on this host uses). Only these namespaces and links
are created, and only their own addresses are ever contacted. A process
started with ``Machine.popen`` runs inside the namespace and, optionally,
in its own mount namespace with directories hidden under empty tmpfs
mounts, so a worker provably shares no files with the coordinator.

Used by ``bench/throughput_bench.py`` and by the multi-machine test
(``tests/integration/test_multi_machine.py``): it lives in ``bench/`` because
benchmarks must not import from ``tests/``.
"""

from __future__ import annotations

import contextlib
import os
import random
import secrets
import shlex
import shutil
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from runner.orchestration import procs


class NetnsUnavailable(RuntimeError):
    """Network namespaces cannot be made here (not root, no ``ip``, no kernel support)."""


def _ip(*args: str, netns: str | None = None) -> subprocess.CompletedProcess[str]:
    cmd = ["ip", *args] if netns is None else ["ip", "netns", "exec", netns, "ip", *args]
    return subprocess.run(cmd, capture_output=True, text=True, timeout=20)


def _check(result: subprocess.CompletedProcess[str], what: str) -> None:
    if result.returncode != 0:
        raise NetnsUnavailable(f"{what}: {(result.stderr or result.stdout).strip()}")


@dataclass
class Machine:
    name: str  # the namespace
    host_if: str
    ns_if: str
    host_ip: str  # the host end: where this machine reaches Redis
    ns_ip: str
    procs: list[subprocess.Popen[bytes]] = field(default_factory=list)

    def popen(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        log: Path,
        hide: Sequence[Path] = (),
        env: dict[str, str] | None = None,
    ) -> subprocess.Popen[bytes]:
        """Start ``argv`` inside this namespace (in its own process group), ``hide`` made empty for it."""
        inner = shlex.join(argv)
        if hide:
            mounts = " && ".join(
                f"mount -t tmpfs -o size=1m tourney-hidden {shlex.quote(str(p))}" for p in hide
            )
            inner = f"{mounts} && exec {inner}"
            cmd = [
                "ip",
                "netns",
                "exec",
                self.name,
                "unshare",
                "--mount",
                "--propagation",
                "private",
                "sh",
                "-c",
                inner,
            ]
        else:
            cmd = ["ip", "netns", "exec", self.name, *argv]
        with open(log, "ab") as out:
            proc = subprocess.Popen(
                cmd,
                cwd=cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.procs.append(proc)
        return proc

    def stop(self, grace_s: float = 10.0) -> None:
        """Stop what was started here: SIGQUIT (Celery's cold shutdown), then SIGKILL the group."""
        for p in self.procs:
            if p.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(p.pid, signal.SIGQUIT)
        deadline = time.monotonic() + grace_s
        for p in self.procs:
            if p.returncode is None:
                # unreaped, its pid is still its group's id: the group kill reaches only our processes
                procs.wait_unreaped(p.pid, max(0.1, deadline - time.monotonic()))
                procs.kill_own_group(p.pid)
            with contextlib.suppress(subprocess.TimeoutExpired):
                p.wait(5)
        self.procs.clear()
        # anything else still inside the namespace was started by us too
        pids = subprocess.run(["ip", "netns", "pids", self.name], capture_output=True, text=True, timeout=10)
        for pid in pids.stdout.split():
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)


def netns_problem() -> str | None:
    """Why namespaces cannot be used here, or None."""
    if shutil.which("ip") is None:
        return "the ip command (iproute2) is not installed"
    if shutil.which("unshare") is None:
        return "the unshare command (util-linux) is not installed"
    if os.geteuid() != 0:
        return "creating network namespaces needs root"
    probe = f"tourney-probe-{secrets.token_hex(3)}"
    r = _ip("netns", "add", probe)
    if r.returncode != 0:
        return f"ip netns add is not permitted: {r.stderr.strip()}"
    _ip("netns", "del", probe)
    return None


def _free_octet() -> int:
    """A second octet B such that no route of this host touches 10.B.0.0/16."""
    routes = _ip("-4", "route", "show", "table", "all").stdout + _ip("-4", "addr").stdout
    choices = [b for b in range(200, 250) if f"10.{b}." not in routes]
    if not choices:
        raise NetnsUnavailable("no free 10.B.0.0/16 range for test links")
    return random.choice(choices)


@contextlib.contextmanager
def machines(count: int) -> Iterator[list[Machine]]:
    """``count`` namespaces with their links; everything removed on exit."""
    problem = netns_problem()
    if problem is not None:
        raise NetnsUnavailable(problem)
    token = secrets.token_hex(3)
    octet = _free_octet()
    made: list[Machine] = []
    try:
        for i in range(count):
            m = Machine(
                name=f"tourney-test-{token}-{i}",
                host_if=f"tt{token}h{i}",
                ns_if=f"tt{token}n{i}",
                host_ip=f"10.{octet}.{i}.1",
                ns_ip=f"10.{octet}.{i}.2",
            )
            _check(_ip("netns", "add", m.name), "ip netns add")
            made.append(m)
            _check(_ip("link", "add", m.host_if, "type", "veth", "peer", "name", m.ns_if), "ip link add veth")
            _check(_ip("link", "set", m.ns_if, "netns", m.name), "ip link set netns")
            _check(_ip("addr", "add", f"{m.host_ip}/30", "dev", m.host_if), "ip addr add")
            _check(_ip("link", "set", m.host_if, "up"), "ip link set up")
            _check(_ip("addr", "add", f"{m.ns_ip}/30", "dev", m.ns_if, netns=m.name), "ip addr add (netns)")
            _check(_ip("link", "set", m.ns_if, "up", netns=m.name), "ip link set up (netns)")
            _check(_ip("link", "set", "lo", "up", netns=m.name), "ip link set lo up (netns)")
        yield made
    finally:
        for m in made:
            with contextlib.suppress(Exception):
                m.stop()
            _ip("link", "del", m.host_if)  # takes its peer with it
            _ip("netns", "del", m.name)
