"""Shared helpers for the worker tests: fixture entries, refs, a build cache, one-call matches."""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil
import pytest

from runner.domain.entries import load_entry
from runner.domain.match_values import EntryRef, GameBound, Limits, MatchPlan, MatchResult, MatchSpec
from workers.artifacts import ArtifactCache, local_fetch
from workers.match import MatchObserver, play_match
from workers.sandbox import HostError, HostFactory, host_factory
from workers.sandbox.plain import GAME_DIR_PREFIX

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

#: generous limits for entries that should play: the suite may run on a loaded machine
EASY = Limits(move_wall_s=10.0)


def fixture(path: str) -> Path:
    return FIXTURES / path


def ref(path: str | Path, *, name: str | None = None, args: list[str] | None = None) -> EntryRef:
    """The EntryRef of an entry directory (a fixture path or a real path), optionally renamed."""
    spec = load_entry(path if isinstance(path, Path) else fixture(path))[0]
    r = spec.ref()
    return EntryRef(name or r.name, r.digest, r.protocol, r.run, r.build, args or list(r.args))


def started_by_this_process(p: psutil.Process) -> bool:
    """Whether ``p`` is this test process's own: a descendant (a running game's
    programs, a sandbox's processes), or an orphan that escaped a ``sandbox: none``
    game's process group but still carries that game's private directory (its
    TMPDIR or cwd, named after the pid that opened the game).

    Other test processes (pytest-xdist workers, another checkout's suite on the
    same machine) run the same fixture programs with the same arguments; their
    processes are not ours to count.
    """
    me = os.getpid()
    own_game_dir = f"/{GAME_DIR_PREFIX}{me}-"
    with contextlib.suppress(psutil.Error):
        if any(parent.pid == me for parent in p.parents()):
            return True
        if own_game_dir in p.environ().get("TMPDIR", "") or own_game_dir in p.cwd():
            return True
    return False


def processes_running(*argv: str) -> list[psutil.Process]:
    """Live processes of this test process (``started_by_this_process``) whose
    command line is exactly ``argv``."""
    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        if (
            p.info["cmdline"] == list(argv)
            and p.info["status"] != psutil.STATUS_ZOMBIE
            and started_by_this_process(p)
        ):
            found.append(p)
    return found


def play(
    cache: ArtifactCache,
    game: str,
    board: str,
    seats: list[str | Path | tuple[str | Path, list[str]]],
    *,
    orders: list[list[str]] | None = None,
    limits: Limits = EASY,
    game_params: dict[str, Any] | None = None,
    observer: MatchObserver | None = None,
    max_moves: int | None = None,
    bound: GameBound | None = None,
) -> MatchResult:
    """Build the entries (paths, or (path, args)) and play one match of them with PlainHost.

    Entries that appear twice are renamed ``name#2``; the default is one game in seat order.
    """
    refs: dict[str, EntryRef] = {}
    paths: dict[str, Path] = {}
    for seat in seats:
        path, args = seat if isinstance(seat, tuple) else (seat, None)
        r = ref(path, args=args)
        name = r.name
        n = 2
        while name in refs:
            name, n = f"{r.name}#{n}", n + 1
        refs[name] = EntryRef(name, r.digest, r.protocol, r.run, r.build, r.args)
        paths[r.digest] = path if isinstance(path, Path) else fixture(path)
    names = list(refs)
    spec = MatchSpec.playing(
        MatchPlan.ad_hoc("test", "b", orders or [names]),
        game=game,
        board_text=board,
        entries=refs,
        limits=limits,
        seed=0,
        sandbox=cache.hosts.name,
        game_params=game_params or {},
        bound=bound or GameBound(),
    )
    dirs = cache.ensure_all(refs, local_fetch(paths))
    return play_match(spec, dirs, cache.hosts, "test-worker", observer=observer, max_moves=max_moves)


@pytest.fixture
def real_tmp_arena() -> Iterator[None]:
    """For a test that writes the machine's real ``/tmp/arena.<MARK>`` itself, outside
    a game (a game's host locks that file only for the game): one such test at a time
    on this machine, across pytest-xdist workers and other checkouts' suites, so that
    none overwrites or deletes the file under another's running game."""
    fd = os.open("/tmp/tourney-tests-real-arena.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # bounded by the suite's per-test timeout
        yield
    finally:
        os.close(fd)


@pytest.fixture(params=["none", "bwrap"])
def hosts(request: pytest.FixtureRequest) -> HostFactory:
    """Each host the protocols must work under; bwrap is skipped where it cannot run."""
    kind = str(request.param)
    try:
        return host_factory(kind)
    except HostError as e:
        pytest.skip(f"sandbox {kind} unavailable: {e}")


@pytest.fixture
def cache(tmp_path: Path, hosts: HostFactory) -> ArtifactCache:
    return ArtifactCache(tmp_path / "cache", hosts)
