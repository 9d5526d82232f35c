"""Shared pieces of the sandbox tests: a real bwrap factory that remembers its
sandboxes, the faulty entries, one-call matches, and the survivor check.

Every test here runs real sandboxes, so the whole folder skips (with the
reason and the fix) on a machine where bubblewrap cannot work.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from runner.contracts import EntryRef, Limits, MatchResult, MatchSpec
from runner.entries import load_entry
from workers.artifacts import ArtifactCache, local_fetch
from workers.match import play_match
from workers.sandbox.base import EntryHost, HostFactory, RunOutcome
from workers.sandbox.checks import sandbox_problem

ROOT = Path(__file__).resolve().parents[2]
FAULTY = ROOT / "entries" / "_faulty"
STEADY = Path(__file__).resolve().parent / "fixtures" / "steady"

#: a clean 32x16 arena: steady players need 32 moves to fill it with 4x4 boxes
OPEN_ARENA = ("-" * 32 + "\n") * 16
#: limits of the faulty matches: a CPU limit below the wall limit tells a busy
#: loop (cpu_limit) from a sleeper (timeout)
FAULTY_LIMITS = Limits(move_wall_s=1.0, move_cpu_s=0.5)
#: limits for entries that should just play, on a machine that may be loaded
EASY = Limits(move_wall_s=10.0)


def _skip_reason() -> str | None:
    problem = sandbox_problem()
    return None if problem is None else f"bubblewrap sandbox unavailable: {problem}"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _skip_reason()
    if reason is None:
        return
    here = Path(__file__).resolve().parent
    for item in items:
        if here in Path(str(item.fspath)).resolve().parents:
            item.add_marker(pytest.mark.skip(reason=reason))


def pid_namespace(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/ns/pid")


@dataclass
class Recorder(HostFactory):
    """A bwrap factory that remembers every sandbox it opened (for the survivor check)."""

    inner: HostFactory
    namespaces: set[str] = field(default_factory=set)
    launchers: list[int] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    name = "bwrap"

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        host = self.inner.open(entry_dir, limits, mark)
        pid: int = host.launcher_pid  # type: ignore[attr-defined]
        with self._lock:
            self.launchers.append(pid)
            self.namespaces.add(pid_namespace(pid))
        return host

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        return self.inner.run_build(entry_dir, command, limits)

    def survivors(self) -> list[str]:
        """Processes still alive from any sandbox this factory opened."""
        found = []
        for pid in self.launchers:
            with contextlib.suppress(psutil.Error):
                if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                    found.append(f"launcher {pid}")
        for p in psutil.process_iter(["pid", "name"]):
            with contextlib.suppress(OSError):
                if pid_namespace(p.info["pid"]) in self.namespaces:
                    found.append(f"{p.info['pid']} {p.info['name']}")
        return found


@pytest.fixture(scope="session")
def bwrap_factory() -> HostFactory:
    from workers.sandbox.bwrap import BwrapHostFactory

    return BwrapHostFactory()


@pytest.fixture
def recorder(bwrap_factory: HostFactory) -> Iterator[Recorder]:
    rec = Recorder(bwrap_factory)
    yield rec
    # every sandbox is gone once its host is closed: a short wait for the kernel only
    deadline = time.monotonic() + 5
    while rec.survivors() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert rec.survivors() == []


@pytest.fixture(scope="session")
def build_cache(tmp_path_factory: pytest.TempPathFactory, bwrap_factory: HostFactory) -> ArtifactCache:
    """Built entries, shared by the session (building is the slow part)."""
    return ArtifactCache(tmp_path_factory.mktemp("builds"), bwrap_factory)


def faulty_copy(name: str, dest: Path) -> Path:
    """A private copy of ``entries/_faulty/<name>`` that a test may add files to."""
    target = dest / name
    shutil.copytree(FAULTY / name, target)
    return target


def entry_ref(path: Path, name: str | None = None) -> EntryRef:
    r = load_entry(path)[0].ref()
    return EntryRef(name or r.name, r.digest, r.protocol, r.run, r.build, r.args)


def play(
    hosts: HostFactory,
    cache: ArtifactCache,
    seats: list[tuple[str, Path]],
    *,
    limits: Limits,
    board: str = OPEN_ARENA,
    match_id: str = "sandbox-test",
) -> MatchResult:
    """One game of boxing between ``seats`` ((name, entry directory), in seat order)."""
    refs = {name: entry_ref(path, name) for name, path in seats}
    paths = {refs[name].digest: path for name, path in seats}
    spec = MatchSpec(
        match_id=match_id,
        game="boxing",
        board_id="open",
        board_text=board,
        orders=[[name for name, _ in seats]],
        entries=refs,
        limits=limits,
        seed=0,
        sandbox="bwrap",
    )
    dirs = cache.ensure_all(refs, local_fetch(paths))
    return play_match(spec, dirs, hosts, "sandbox-test")
