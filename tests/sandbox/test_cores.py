"""Fair timing on a real machine (``workers.sandbox.cores``): core leases between
threads and processes, and an entry that reads its own ``Cpus_allowed_list`` inside
the real sandbox (bwrap) and as a plain process (``sandbox: none``)."""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest

from runner.domain.match_values import Limits, MatchResult, MatchSpec, VerdictKind
from runner.domain.timing import WORKER_CPUS_ENV
from runner.errors import UsageError
from workers.artifacts import ArtifactCache, local_fetch
from workers.executor import execute_match
from workers.sandbox.base import EntryHost, HostFactory, RunOutcome
from workers.sandbox.cores import (
    CONCURRENCY_ENV,
    CORES_DIR_ENV,
    NoFreeCore,
    lease_core,
    pin_to_worker_cpus,
    timed_conditions,
    timing_note,
    usable_cores,
    worker_concurrency,
)

from .conftest import entry_ref

AFFINITY = Path(__file__).resolve().parent / "fixtures" / "affinity"
BOARD = "20 2 2"  # 20 columns: the entry names CPUs 0..18 by its first move's column; over in a few moves
LIMITS = Limits(move_wall_s=10.0)


@pytest.fixture(autouse=True)
def private_cores_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """Leases of these tests only: other runs on this machine keep their own cores."""
    directory = tmp_path / "cores"
    monkeypatch.setenv(CORES_DIR_ENV, str(directory))
    before = os.sched_getaffinity(0)
    yield directory
    assert os.sched_getaffinity(0) == before  # every lease gave the thread its CPUs back


def test_a_lease_pins_this_thread_to_one_cpu_and_restores_it() -> None:
    before = os.sched_getaffinity(0)
    lease = lease_core(wait_s=1.0)
    try:
        assert len(lease.cpus) == 1 and set(lease.cpus) <= before
        assert os.sched_getaffinity(0) == set(lease.cpus)
    finally:
        lease.release()
    assert os.sched_getaffinity(0) == before


def test_a_held_core_is_not_leased_twice_and_frees_on_release() -> None:
    one = {min(usable_cores())}
    first = lease_core(wait_s=1.0, usable=one)
    try:
        with pytest.raises(NoFreeCore):
            lease_core(wait_s=0.2, usable=one)
    finally:
        first.release()
    second = lease_core(wait_s=1.0, usable=one)
    second.release()
    assert second.cpus == first.cpus


def test_a_waiting_match_gets_the_core_as_soon_as_it_is_released() -> None:
    one = {min(usable_cores())}
    first = lease_core(wait_s=1.0, usable=one)
    got: list[float] = []

    def wait_for_it() -> None:
        lease = lease_core(wait_s=30.0, usable=one)
        got.append(lease.waited_s)
        lease.release()

    t = threading.Thread(target=wait_for_it)
    t.start()
    threading.Event().wait(0.3)
    assert not got  # still waiting: the only core is held
    first.release()
    t.join(10.0)
    assert len(got) == 1 and got[0] >= 0.25


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two usable CPUs")
def test_concurrent_matches_get_different_cpus() -> None:
    seen: list[tuple[int, ...]] = []
    barrier = threading.Barrier(2, timeout=10.0)

    def hold() -> None:
        lease = lease_core(wait_s=5.0)
        seen.append(lease.cpus)
        barrier.wait()  # both hold theirs at once
        lease.release()

    threads = [threading.Thread(target=hold) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(15.0)
    assert len(seen) == 2 and seen[0] != seen[1]


def test_shared_timing_pins_nothing_and_says_so() -> None:
    before = os.sched_getaffinity(0)
    with timed_conditions(False) as timing:
        assert os.sched_getaffinity(0) == before
    assert (timing.exclusive, timing.cpus, timing.worker_cores) == (False, [], len(before))


def _spec(sandbox: str, *, exclusive: bool) -> tuple[MatchSpec, dict[str, Path]]:
    refs = {n: entry_ref(AFFINITY, n) for n in ("a", "b")}
    spec = MatchSpec.of(
        match_id="fair", game="mnk", board_id="b", board_text=BOARD, orders=[["a", "b"]],
        entries=refs, limits=LIMITS, seed=0, sandbox=sandbox,
    )  # fmt: skip
    return replace(spec, exclusive_cores=exclusive), {refs["a"].digest: AFFINITY}


def _first_columns(result: MatchResult) -> dict[str, int]:
    (game,) = result.games
    assert game.verdict.kind is VerdictKind.NORMAL, game.verdict
    firsts: dict[str, int] = {}
    for m in game.moves:
        firsts.setdefault(m.player, int(m.move.split()[0]))
    return firsts


def _host(sandbox: str, request: pytest.FixtureRequest) -> HostFactory | None:
    if sandbox == "bwrap":
        factory: HostFactory = request.getfixturevalue("bwrap_factory")  # skips where bwrap cannot work
        return factory
    return None  # execute_match's own choice: the plain host


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_an_entry_runs_on_the_single_cpu_its_match_holds(
    sandbox: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    hosts = _host(sandbox, request)
    spec, paths = _spec(sandbox, exclusive=True)
    result = execute_match(spec, local_fetch(paths), tmp_path / "cache", worker="w", hosts=hosts)
    assert result.timing is not None and result.timing.exclusive
    (cpu,) = result.timing.cpus
    # what each entry read from /proc/self/status inside its sandbox: exactly that CPU
    assert _first_columns(result) == {"a": cpu + 1, "b": cpu + 1}


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="needs two usable CPUs to tell pinned from not")
@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
def test_without_the_option_an_entry_may_use_every_cpu(
    sandbox: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    hosts = _host(sandbox, request)
    spec, paths = _spec(sandbox, exclusive=False)
    result = execute_match(spec, local_fetch(paths), tmp_path / "cache", worker="w", hosts=hosts)
    assert result.timing is not None and not result.timing.exclusive and result.timing.cpus == []
    assert _first_columns(result) == {"a": 20, "b": 20}  # more than one CPU allowed


def test_a_worker_says_at_start_whether_its_concurrency_fits_its_cores(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cores = len(usable_cores())
    assert timing_note(cores) == f"{cores} usable core(s), {cores} match(es) at once; " + (
        "a match asking for an exclusive core holds one (waiting if other workers here hold all)"
    )
    assert f"waits for one of the {cores}" in timing_note(cores + 1)
    monkeypatch.setenv(CONCURRENCY_ENV, "6")
    assert worker_concurrency() == 6
    monkeypatch.setenv(CONCURRENCY_ENV, "many")
    assert worker_concurrency() == 1


class KeptSandboxes(HostFactory):
    """Hands out sandboxes opened before the match, as a factory that reuses sandboxes
    across games does: their launchers were started under another affinity."""

    name = "bwrap"

    def __init__(self, inner: HostFactory, kept: list[EntryHost]):
        self.inner = inner
        self.kept = kept

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        return self.kept.pop(0)

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        return self.inner.run_build(entry_dir, command, limits)


def test_a_sandbox_started_before_the_match_is_pinned_to_the_matchs_cpu(
    bwrap_factory: HostFactory, tmp_path: Path
) -> None:
    spec, paths = _spec("bwrap", exclusive=True)
    dirs = ArtifactCache(tmp_path / "cache", bwrap_factory).ensure_all(spec.entries, local_fetch(paths))
    entry_dir = dirs["a"]
    assert isinstance(entry_dir, Path)
    kept = [bwrap_factory.open(entry_dir, LIMITS, mark) for mark in ("X", "O")]  # every CPU allowed
    try:
        hosts = KeptSandboxes(bwrap_factory, list(kept))
        result = execute_match(spec, local_fetch(paths), tmp_path / "cache", worker="w", hosts=hosts)
    finally:
        for host in kept:
            host.close()
    assert result.timing is not None
    (cpu,) = result.timing.cpus
    assert _first_columns(result) == {"a": cpu + 1, "b": cpu + 1}


def test_a_local_worker_pins_itself_to_the_cpus_tourney_run_left_to_matches(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    cpu = max(usable_cores())
    seen: list[object] = []

    def start_worker() -> None:  # in a thread of its own: the test's thread keeps its CPUs
        try:
            pin_to_worker_cpus()
            seen.append(os.sched_getaffinity(0))
        except UsageError as e:
            seen.append(e)

    monkeypatch.setenv(WORKER_CPUS_ENV, str(cpu))
    t = threading.Thread(target=start_worker)
    t.start()
    t.join(10.0)
    monkeypatch.setenv(WORKER_CPUS_ENV, "0-3")  # not a list tourney run writes
    t = threading.Thread(target=start_worker)
    t.start()
    t.join(10.0)
    assert seen[0] == {cpu}
    assert isinstance(seen[1], UsageError) and "TOURNEY_WORKER_CPUS" in str(seen[1])
