"""CPU seconds of a command and of every process it starts, read from ``/proc`` while it runs.

``getrusage(RUSAGE_CHILDREN)`` counts only the descendants that were waited for up the chain:
``tourney run``'s local worker runs in a session of its own and its pool processes are killed
with it, so their CPU (and that of the engines under them) never reaches the benchmark. Here a
thread lists ``/proc`` every ``INTERVAL_S`` and keeps each descendant's last CPU reading: a
process that lives shorter than the interval is missed (a sandbox's short helpers, a few ms).
"""

from __future__ import annotations

import os
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

INTERVAL_S = 0.02
_TICK = os.sysconf("SC_CLK_TCK")


@dataclass(frozen=True)
class TreeCpu:
    """CPU seconds of a finished command's process tree, by program name (``/proc/PID/comm``)."""

    by_name: dict[str, float]

    @property
    def total_s(self) -> float:
        return sum(self.by_name.values())

    def of(self, *names: str) -> float:
        return sum(v for k, v in self.by_name.items() if k in names)


def _stat(pid: str) -> tuple[str, int, float] | None:
    """(comm, parent pid, CPU seconds) of a live process, None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    close = text.rfind(")")
    fields = text[close + 2 :].split()
    return text[text.find("(") + 1 : close], int(fields[1]), (int(fields[11]) + int(fields[12])) / _TICK


def run_measured(
    argv: Sequence[str], *, cwd: Path, timeout: float, env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], TreeCpu]:
    """``subprocess.run(argv, capture_output=True, text=True)`` and its tree's CPU."""
    seen: dict[int, tuple[str, float]] = {}
    stop = threading.Event()
    pipe = subprocess.PIPE
    proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=pipe, stderr=pipe, text=True)
    tree = {proc.pid}

    def watch() -> None:
        while True:
            table = {int(p): s for p in os.listdir("/proc") if p.isdigit() and (s := _stat(p))}
            grown = True
            while grown:  # a whole new branch joins in one listing
                grown = False
                for pid, (_, ppid, _) in table.items():
                    if pid not in tree and ppid in tree:
                        tree.add(pid)
                        grown = True
            for pid in tree & table.keys():
                comm, _, cpu = table[pid]
                seen[pid] = (comm, max(cpu, seen.get(pid, ("", 0.0))[1]))
            if stop.wait(INTERVAL_S):
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    try:
        out, err = proc.communicate(timeout=timeout)
    finally:
        stop.set()
        watcher.join()
        proc.kill()
    by_name: dict[str, float] = {}
    for comm, cpu in seen.values():
        by_name[comm] = by_name.get(comm, 0.0) + cpu
    done = subprocess.CompletedProcess(list(argv), proc.returncode, out, err)
    return done, TreeCpu(dict(by_name))
