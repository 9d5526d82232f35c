"""Shared helpers for the worker tests: fixture entries, refs, a build cache, one-call matches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import psutil
import pytest

from runner.domain.contracts import EntryRef, GameBound, Limits, MatchPlan, MatchResult, MatchSpec
from runner.domain.entries import load_entry
from workers.artifacts import ArtifactCache, local_fetch
from workers.match import MatchObserver, play_match
from workers.sandbox import HostError, HostFactory, host_factory

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


def processes_running(*argv: str) -> list[psutil.Process]:
    """Live processes whose command line is exactly ``argv``."""
    found = []
    for p in psutil.process_iter(["cmdline", "status"]):
        if p.info["cmdline"] == list(argv) and p.info["status"] != psutil.STATUS_ZOMBIE:
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
    spec = MatchSpec(
        plan=MatchPlan.ad_hoc("test", "b", orders or [names]),
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
