"""``PinningHostFactory`` walks a host's process tree only when its launcher is not
already on the match's CPUs (the walk over ``/proc`` cost several ms per seat and
game, issue 13): a real process stands in for a kept sandbox's launcher."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.domain.match_values import Limits
from workers.sandbox import cores
from workers.sandbox.base import EntryHost, HostFactory, InteractiveProcess, RunOutcome
from workers.sandbox.cores import PinningHostFactory, runs_on

CPUS = frozenset(os.sched_getaffinity(0))


class _LauncherHost(EntryHost):
    def __init__(self, pid: int):
        self.launcher_pid = pid
        self.workdir = Path("/")

    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        raise NotImplementedError

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        raise NotImplementedError

    def close(self) -> None:
        pass


class _Kept(HostFactory):
    name = "bwrap"

    def __init__(self, pid: int):
        self.pid = pid

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        return _LauncherHost(self.pid)

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        raise NotImplementedError


@pytest.fixture
def launcher() -> Iterator[subprocess.Popen[bytes]]:
    proc = subprocess.Popen(["sleep", "30"])
    try:
        yield proc
    finally:
        proc.kill()
        proc.wait()


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids ``pin_tree`` is called for (and still does its work)."""
    called: list[int] = []
    real = cores.pin_tree

    def recording(pid: int, cpus: frozenset[int]) -> None:
        called.append(pid)
        real(pid, cpus)

    monkeypatch.setattr(cores, "pin_tree", recording)
    return called


def test_a_launcher_already_on_the_matchs_cpus_is_not_walked(
    launcher: subprocess.Popen[bytes], walks: list[int]
) -> None:
    assert runs_on(launcher.pid, CPUS)
    PinningHostFactory(_Kept(launcher.pid), CPUS).open(Path("/"), Limits(), "X")
    assert walks == []
    assert os.sched_getaffinity(launcher.pid) == CPUS


@pytest.mark.skipif(len(CPUS) < 2, reason="needs two usable CPUs to pin elsewhere")
def test_a_launcher_on_other_cpus_is_pinned_to_the_matchs(
    launcher: subprocess.Popen[bytes], walks: list[int]
) -> None:
    one = frozenset({min(CPUS)})
    os.sched_setaffinity(launcher.pid, one)  # kept from a match that held that core
    assert not runs_on(launcher.pid, CPUS)
    PinningHostFactory(_Kept(launcher.pid), CPUS).open(Path("/"), Limits(), "X")
    assert walks == [launcher.pid]
    assert os.sched_getaffinity(launcher.pid) == CPUS


def test_a_gone_launcher_counts_as_not_pinned(launcher: subprocess.Popen[bytes]) -> None:
    launcher.kill()
    launcher.wait()
    assert not runs_on(launcher.pid, CPUS)
