"""Shared pieces of the sandbox tests: a real bwrap factory that remembers its
sandboxes, the faulty entries, one-call matches, and the survivor check.

Tests that run real sandboxes get them through the ``bwrap_factory``
fixture, which skips them (with the reason and the fix) on a machine where
bubblewrap cannot work.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import psutil
import pytest

from runner.domain.entries import load_entry
from runner.domain.match_values import EntryRef, Limits, MatchPlan, MatchResult, MatchSpec
from workers.artifacts import ArtifactCache, local_fetch
from workers.match import play_match
from workers.sandbox.base import EntryHost, HostFactory, RunOutcome, WrappedHost
from workers.sandbox.checks import sandbox_problem

ROOT = Path(__file__).resolve().parents[2]
FAULTY = ROOT / "entries" / "_faulty"
STEADY = Path(__file__).resolve().parent / "fixtures" / "steady"
#: the worker tests' tiny entries (tests/fixtures), reused here under the sandbox
FIXTURES = ROOT / "tests" / "fixtures"

#: a clean 32x16 arena: steady players need 32 moves to fill it with 4x4 boxes
OPEN_ARENA = ("-" * 32 + "\n") * 16
#: limits of the faulty matches: a CPU limit below the wall limit tells a busy
#: loop (cpu_limit) from a sleeper (timeout)
FAULTY_LIMITS = Limits(move_wall_s=1.0, move_cpu_s=0.5)
#: limits for entries that should just play, on a machine that may be loaded
EASY = Limits(move_wall_s=10.0)


def pid_namespace(pid: int) -> str:
    return os.readlink(f"/proc/{pid}/ns/pid")


#: ioctl on a namespace fd: the namespace it is nested in (linux/nsfs.h NS_GET_PARENT)
NS_GET_PARENT = 0xB702


def pid_namespaces(pid: int) -> list[str]:
    """The PID namespace of ``pid`` and every one it is nested in, innermost first: an
    entry's processes are in their game's namespace, nested in the sandbox's."""
    chain = []
    fd = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY)
    try:
        while True:
            chain.append(os.readlink(f"/proc/self/fd/{fd}"))
            try:
                parent = fcntl.ioctl(fd, NS_GET_PARENT)
            except OSError:  # the initial namespace (or one outside ours): the end of the chain
                return chain
            os.close(fd)
            fd = parent
    finally:
        os.close(fd)


@dataclass
class SandboxRecord:
    """One sandbox a test opened: its PID 1 on the host and its PID namespace, held open
    (``pinned``) until the test ends: a namespace whose processes are gone is kept while a
    file refers to it, so the kernel cannot give its inode number to another test's sandbox,
    whose processes would then look like ours (a sandbox's init may be gone well before its
    host is closed: its entry's verdict tears it down)."""

    pid: int
    namespace: str
    born: float  # the launcher's create_time
    pinned: int  # an open fd of its PID namespace
    closed_at: float | None = None

    def unpin(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.pinned)


class RecordedHost(WrappedHost):
    """An ``EntryHost`` that notes when it was closed."""

    def __init__(self, host: EntryHost, record: SandboxRecord):
        super().__init__(host)
        self.record = record
        self.launcher_pid = record.pid

    def close(self) -> None:
        # noted as the close begins: its processes were all born by then (one forked while
        # they are killed dies with the PID namespace), and once they are gone the kernel may
        # give the namespace's inode number to another test's sandbox, whose launcher a later
        # bound (the close's end, slow under load: freeing 256 MiB of an shm hoarder's) counted
        if self.record.closed_at is None:
            self.record.closed_at = time.time()
        super().close()


@dataclass
class Recorder(HostFactory):
    """A bwrap factory that remembers every sandbox it opened (for the survivor check)."""

    inner: HostFactory
    sandboxes: list[SandboxRecord] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    name = "bwrap"

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        host = self.inner.open(entry_dir, limits, mark)
        pid: int = host.launcher_pid  # type: ignore[attr-defined]
        pinned = os.open(f"/proc/{pid}/ns/pid", os.O_RDONLY | os.O_CLOEXEC)
        namespace = os.readlink(f"/proc/self/fd/{pinned}")
        record = SandboxRecord(pid, namespace, psutil.Process(pid).create_time(), pinned)
        with self._lock:
            self.sandboxes.append(record)
        return RecordedHost(host, record)

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        return self.inner.run_build(entry_dir, command, limits)

    def survivors(self) -> list[str]:
        """Processes still alive from any sandbox this factory opened.

        A process counts if it is in one of our sandboxes' PID namespaces (or in a
        game's namespace nested in one) and was born while that sandbox was open (from its
        launcher's birth to the start of its close): the kernel reuses namespace inode
        numbers, so a later sandbox (another test's) may show ours.
        """
        found = []
        for rec in self.sandboxes:
            with contextlib.suppress(psutil.Error):
                p = psutil.Process(rec.pid)
                if p.create_time() == rec.born and p.status() != psutil.STATUS_ZOMBIE:
                    found.append(f"launcher {rec.pid}")
        for p in psutil.process_iter(["pid", "name", "create_time", "status"]):
            with contextlib.suppress(OSError):
                chain = pid_namespaces(p.info["pid"])
                for rec in self.sandboxes:
                    born = p.info["create_time"]
                    born_inside = rec.born <= born and (rec.closed_at is None or born <= rec.closed_at)
                    if rec.namespace in chain and born_inside and p.info["status"] != psutil.STATUS_ZOMBIE:
                        found.append(f"{p.info['pid']} {p.info['name']}")
        return found


@pytest.fixture(scope="session")
def bwrap_factory() -> HostFactory:
    """The real sandbox; tests that need it skip, with the reason and the fix,
    on a machine where bubblewrap cannot work."""
    problem = sandbox_problem()
    if problem is not None:
        pytest.skip(f"bubblewrap sandbox unavailable: {problem}")
    from workers.sandbox.bwrap import BwrapHostFactory

    return BwrapHostFactory()


def survivors_after(rec: Recorder, wait_s: float = 5.0) -> list[str]:
    """``rec.survivors()`` once they are gone or ``wait_s`` passed (the kernel reaps
    a dead sandbox's processes asynchronously; nothing should need the wait)."""
    deadline = time.monotonic() + wait_s
    while (found := rec.survivors()) and time.monotonic() < deadline:
        time.sleep(0.05)
    return found


@contextlib.contextmanager
def recording(factory: HostFactory) -> Iterator[Recorder]:
    """A ``Recorder`` of ``factory`` whose sandboxes must leave no process behind; their
    namespaces are unpinned once that is checked."""
    rec = Recorder(factory)
    try:
        yield rec
        assert survivors_after(rec) == []
    finally:
        for record in rec.sandboxes:
            record.unpin()


@pytest.fixture
def recorder(bwrap_factory: HostFactory) -> Iterator[Recorder]:
    with recording(bwrap_factory) as rec:
        yield rec


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
    game: str = "boxing",
    board: str = OPEN_ARENA,
    orders: list[list[str]] | None = None,
    match_id: str = "sandbox-test",
) -> MatchResult:
    """A match between ``seats`` ((name, entry directory)); one game in seat order by default."""
    refs = {name: entry_ref(path, name) for name, path in seats}
    paths = {refs[name].digest: path for name, path in seats}
    spec = MatchSpec.playing(
        MatchPlan.ad_hoc(match_id, "test-board", orders or [[name for name, _ in seats]]),
        game=game,
        board_text=board,
        entries=refs,
        limits=limits,
        seed=0,
        sandbox="bwrap",
    )
    dirs = cache.ensure_all(refs, local_fetch(paths))
    return play_match(spec, dirs, hosts, "sandbox-test")
