"""``left_processes`` against machine load (issue 14 item 9): how often a program that SIGTERMs
its searchers and exits at once is charged, with the old fixed 20 ms grace and with the
default ``limits.exit_grace_ms`` (300 ms), under both hosts, with every core kept busy.

The entry is ``tests/fixtures/pousse/term_children`` with searchers holding a touched
transposition table each, so dying takes the kernel a while (it tears the memory down).
Printed: the fraction of moves charged per grace; the point is that it is 0 with the grace,
whatever the load, while a fixed 20 ms depends on it. Only a move that leaves dying processes
waits (a healthy move pays nothing: see the sandbox benchmark's per-move ratio).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from bench.sandbox_bench import burners
from runner.domain.match_values import Limits, VerdictKind
from workers.sandbox.base import HostFactory
from workers.sandbox.bwrap import BwrapHostFactory
from workers.sandbox.plain import PlainHostFactory

ROOT = Path(__file__).resolve().parents[1]
ENTRY = ROOT / "tests" / "fixtures" / "pousse" / "term_children"
#: searchers per move, and MiB each holds
SEARCHERS, TABLE_MB = 4, 48
GRACES_MS = (20, 300)


def charged(hosts: HostFactory, grace_ms: int, moves: int) -> tuple[int, float]:
    """(moves charged left_processes, median wall ms of a move) out of ``moves``."""
    limits = Limits(move_wall_s=30.0, memory_mb=1024, exit_grace_ms=grace_ms)
    bad = 0
    walls = []
    with hosts.open(ENTRY, limits, "X") as host:
        for _ in range(moves):
            started = time.monotonic()
            out = host.run(["./runme", str(SEARCHERS), "0", str(TABLE_MB)], b"6\n", limits)
            walls.append((time.monotonic() - started) * 1000)
            bad += out.failure is VerdictKind.LEFT_PROCESSES
    walls.sort()
    return bad, walls[len(walls) // 2]


def main(quick: bool = False) -> None:
    moves = 10 if quick else 40
    cores = os.cpu_count() or 1
    factories: list[tuple[str, HostFactory]] = [("none", PlainHostFactory())]
    try:
        factories.insert(0, ("bwrap", BwrapHostFactory()))
    except Exception as e:  # no sandbox here: the plain host still shows the point
        print(f"bwrap unavailable ({e}); plain host only")
    with burners(cores):
        for name, hosts in factories:
            for grace in GRACES_MS:
                bad, median = charged(hosts, grace, moves)
                print(
                    f"exit grace {grace:>3} ms, sandbox {name:5}: left_processes in {bad}/{moves} moves "
                    f"({bad / moves:.0%}); median move {median:.0f} ms "
                    f"({SEARCHERS} searchers x {TABLE_MB} MiB SIGTERMed at exit, {cores} cores busy)",
                    flush=True,
                )
