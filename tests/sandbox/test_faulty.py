"""Every misbehaving entry of ``entries/_faulty`` in a real match against a
legal player: the right verdict, charged to it, the opponent wins, no process
of either survives the game, and a normal match played at the same time on
the same machine (same marks, A and B) ends normally."""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

import pytest

from runner.domain.match_values import Limits, MatchResult, VerdictKind
from workers.artifacts import ArtifactCache

from .conftest import EASY, FAULTY_LIMITS, STEADY, Recorder, faulty_copy, play, survivors_after


@dataclass(frozen=True)
class Case:
    entry: str
    kind: VerdictKind
    detail: str  # a part of the verdict's detail
    seat: int = 0  # the faulty entry's seat (the snoop moves second, after the opponent wrote its file)
    limits: Limits = FAULTY_LIMITS


#: CPU hogs get a wall limit far above their CPU limit: on a loaded machine a
#: busy process may get a small share of a core, and must still hit the CPU
#: limit first (with equal limits a single busy loop is a timeout)
CPU_HOG = Limits(move_wall_s=5.0, move_cpu_s=0.3)
#: filling half a gigabyte takes a while on a loaded machine
MEMORY_HOG = Limits(move_wall_s=5.0)
#: the hoarders try to pin 1 GB that no process maps, against a 256 MiB limit
HOARDER = Limits(move_wall_s=20.0, memory_mb=256)
#: walking every visible directory takes seconds on a loaded machine
WALKER = Limits(move_wall_s=120.0)
#: entries of entries/_faulty tested elsewhere (not a boxing move's fault)
ELSEWHERE = {
    "busy-children": "test_trust.py::test_busy_children_are_frozen_between_turns",
    "hostile-build": "test_trust.py::test_hostile_build_is_build_failed_and_cached",
    "terminal-escapes": "test_trust.py::test_terminal_escapes_are_inert_in_tourney_play",
}


CASES = [
    Case("sleeper", VerdictKind.TIMEOUT, "wall-clock limit 1 s exceeded"),
    Case("busy-loop", VerdictKind.CPU_LIMIT, "CPU limit 0.3 s exceeded", limits=CPU_HOG),
    Case("sigterm-ignorer", VerdictKind.TIMEOUT, "wall-clock limit 1 s exceeded"),
    Case("fork-bomb", VerdictKind.CPU_LIMIT, "CPU limit 0.3 s exceeded", limits=CPU_HOG),
    Case("daemon", VerdictKind.LEFT_PROCESSES, "did not kill all its processes"),
    Case("memory-hog", VerdictKind.MEMORY_LIMIT, "memory limit 512 MiB exceeded", limits=MEMORY_HOG),
    Case("stdout-flood", VerdictKind.BAD_OUTPUT, "output over 64 KiB"),
    Case("garbage", VerdictKind.BAD_OUTPUT, ""),
    Case("silent", VerdictKind.NO_OUTPUT, ""),
    Case("nonzero", VerdictKind.CRASH, "exit code 3"),
    Case("segfault", VerdictKind.CRASH, "signal 11 (SIGSEGV)"),
    Case("network", VerdictKind.CRASH, "exit code 42"),
    Case("snoop", VerdictKind.CRASH, "exit code 43", seat=1),
    Case("escape", VerdictKind.CRASH, "exit code 44"),
    Case("stdout-closer", VerdictKind.TIMEOUT, "wall-clock limit 1 s exceeded"),
    Case("shm-hoarder", VerdictKind.MEMORY_LIMIT, "memory limit 256 MiB exceeded", limits=HOARDER),
    Case("memfd-hoarder", VerdictKind.MEMORY_LIMIT, "memory limit 256 MiB exceeded", limits=HOARDER),
    Case("tmpfs-hoarder", VerdictKind.CRASH, "exit code 45", limits=HOARDER),
    Case("inode-hoarder", VerdictKind.CRASH, "exit code 45", limits=HOARDER),
    Case("run-snoop", VerdictKind.CRASH, "exit code 43", seat=1, limits=WALKER),
]


def test_every_faulty_entry_is_covered() -> None:
    on_disk = {p.parent.name for p in (STEADY.parents[3] / "entries" / "_faulty").glob("*/entry.yaml")}
    assert on_disk == {c.entry for c in CASES} | set(ELSEWHERE)


class NormalMatch(threading.Thread):
    """A match of two legal players, played while the faulty one runs."""

    def __init__(self, recorder: Recorder, cache: ArtifactCache):
        super().__init__(daemon=True)
        self.recorder, self.cache = recorder, cache
        self.result: MatchResult | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            seats = [("steady-a", STEADY), ("steady-b", STEADY)]
            self.result = play(self.recorder, self.cache, seats, limits=EASY, match_id="normal")
        except BaseException as e:  # reported by the test
            self.error = e


# fork bombs, CPU and memory hogs beside a normal match, for seconds each: the full suite's
# job (their neighbours in a parallel fast lane would be starved by them)
@pytest.mark.integration
@pytest.mark.parametrize("case", CASES, ids=[c.entry for c in CASES])
def test_faulty_entry_loses_with_the_right_verdict(
    case: Case, recorder: Recorder, build_cache: ArtifactCache, tmp_path: Path
) -> None:
    entry = faulty_copy(case.entry, tmp_path)
    listener = None
    outside = None
    if case.entry == "network":  # a real server on the host's loopback, like Redis
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        listener.listen(8)
        listener.settimeout(0.1)
        (entry / "port.txt").write_text(f"{listener.getsockname()[1]}\n")
    if case.entry == "escape":  # a world-writable directory outside the sandbox's places
        outside = Path(tempfile.mkdtemp(prefix="tourney-escape-", dir="/var/tmp"))
        outside.chmod(0o777)
        (entry / "targets.txt").write_text(f"{outside}/pwned\n")
    try:
        normal = NormalMatch(recorder, build_cache)
        normal.start()
        seats = [("faulty", entry), ("steady", STEADY)]
        if case.seat == 1:
            seats.reverse()
        result = play(recorder, build_cache, seats, limits=case.limits)
        normal.join(60)

        (game,) = result.games
        assert game.verdict.kind is case.kind, game.verdict
        assert game.verdict.player == "faulty"
        assert case.detail in game.verdict.detail
        assert "\n" not in game.verdict.detail
        assert game.winner == "steady"

        assert not normal.is_alive() and normal.error is None, normal.error
        assert normal.result is not None
        (normal_game,) = normal.result.games
        assert normal_game.verdict.kind is VerdictKind.NORMAL, normal_game.verdict
        assert normal_game.winner in ("steady-a", "steady-b")

        assert survivors_after(recorder) == []  # psutil: no process of any of the games is alive

        if listener is not None:
            with pytest.raises(TimeoutError):
                listener.accept()
        if outside is not None:
            assert list(outside.iterdir()) == []
    finally:
        if listener is not None:
            listener.close()
        if outside is not None:
            for p in outside.iterdir():
                p.unlink()
            os.rmdir(outside)
