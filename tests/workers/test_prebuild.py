"""Builds made ahead of a worker (``workers.prebuild``): the worker's own build, made once.

Real builds in the plain host (``sandbox: none``) into a real cache; the worker's side is
what ``execute_match`` does: an ``ArtifactCache`` over the same root with its own limits.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from runner.domain.entries import pack_entry
from runner.domain.match_values import EntryRef, Limits
from workers.artifacts import PREBUILT_MARKER, ArtifactCache, BuildFailed
from workers.policy import LimitCeiling, WorkerPolicy
from workers.prebuild import PrebuildPlan, plan_prebuild, prebuild
from workers.sandbox.plain import PlainHostFactory

from .conftest import ref

LIMITS = Limits(move_wall_s=2.0)
PLAIN_POLICY = WorkerPolicy(allow_unsandboxed=True)


def _entry(tmp_path: Path, name: str, build: str, counter: Path) -> Path:
    """An entry whose build appends a line to ``counter`` (outside any cache), then runs ``build``."""
    d = tmp_path / name
    d.mkdir()
    (d / "entry.yaml").write_text(
        f"name: {name}\ngame: mnk\nprotocol: mnk\n"
        f'build: "echo built >> {counter}; {build}"\n'
        "run: [sh, play.sh]\n"
    )
    (d / "play.sh").write_text("echo 1 1\n")
    return d


def _fetch(*dirs: Path) -> dict[str, Path]:
    return {ref(d).digest: d for d in dirs}


def _packed(paths: dict[str, Path]) -> Callable[[str], bytes]:
    return lambda digest: pack_entry(paths[digest])


def _plan(
    refs: list[EntryRef], work: Path, *, sandbox: str = "none", policy: WorkerPolicy = PLAIN_POLICY
) -> PrebuildPlan:
    plan = plan_prebuild(
        refs, [work], requested_sandbox=sandbox, limits=LIMITS, policy=policy, exclusive_cores=False
    )
    assert plan is not None
    return plan


def _worker_cache(work: Path, limits: Limits = LIMITS) -> ArtifactCache:
    """The cache a worker's match opens (``execute_match``), its limits after the policy."""
    return ArtifactCache(work / "artifacts", PlainHostFactory(), PLAIN_POLICY.limits_for(limits))


def test_the_plan_is_one_build_per_digest_without_placeholders_in_the_workers_terms(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    a = _entry(tmp_path, "a", "true", counter)
    sized = tmp_path / "sized"
    sized.mkdir()
    (sized / "entry.yaml").write_text(
        'name: sized\ngame: mnk\nprotocol: mnk\nbuild: "cc -DW={size} -o x main.c"\nrun: [./x]\n'
    )
    unbuilt = tmp_path / "unbuilt"
    unbuilt.mkdir()
    (unbuilt / "entry.yaml").write_text("name: unbuilt\ngame: mnk\nprotocol: mnk\nrun: [sh, p.sh]\n")
    refs = [ref(a, name="a-1"), ref(a, name="a-2"), ref(sized), ref(unbuilt)]
    strict = WorkerPolicy(allow_unsandboxed=True, ceiling=LimitCeiling(move_wall_s=2.0))

    plan = _plan(refs, tmp_path / "w", policy=strict)
    assert [r.name for r in plan.entries] == ["a-1"]  # variants share it; placeholders are the worker's
    assert plan.cache_roots == (tmp_path / "w" / "artifacts",)
    assert plan.sandbox == "none" and plan.limits == LIMITS  # within the worker's ceilings: as asked
    assert _plan(refs, tmp_path / "w", sandbox="bwrap").sandbox == "bwrap"

    def nothing(
        refs: list[EntryRef], *, policy: WorkerPolicy = PLAIN_POLICY, exclusive: bool = False
    ) -> None:
        work = [tmp_path / "w"]
        plan = plan_prebuild(
            refs, work, requested_sandbox="none", limits=LIMITS, policy=policy, exclusive_cores=exclusive
        )
        assert plan is None

    nothing(refs, exclusive=True)  # a build here would share a core with a timed match
    nothing(refs, policy=WorkerPolicy(allow_unsandboxed=False))  # the workers refuse these matches
    # nor those above their ceilings (they hand them back unplayed)
    nothing(refs, policy=WorkerPolicy(allow_unsandboxed=True, ceiling=LimitCeiling(move_wall_s=1.0)))
    nothing([ref(sized), ref(unbuilt)])  # nothing the workers would build by digest


def test_the_worker_takes_the_build_made_ahead_and_builds_nothing(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    good = _entry(tmp_path, "good", "echo ok > built.txt", counter)
    bad = _entry(tmp_path, "bad", "echo 'x.c:1: error: nope' >&2; exit 3", counter)
    paths = _fetch(good, bad)
    work = tmp_path / "w"

    report = prebuild(_plan([ref(good), ref(bad)], work), _packed(paths))
    assert (report.built, report.skipped, report.error) == (2, 0, "")
    assert counter.read_text() == "built\nbuilt\n"

    worker = _worker_cache(work)
    done = worker.ensure(ref(good), _packed(paths))
    failed = worker.ensure(ref(bad), _packed(paths))
    assert worker.builds == 0 and counter.read_text() == "built\nbuilt\n"
    assert isinstance(done, Path) and (done / "built.txt").read_text() == "ok\n"
    assert (done.parent / PREBUILT_MARKER).read_text() == worker.build_conditions()

    # the failure is the one the worker would have cached itself: same line, same log path
    alone = tmp_path / "alone"
    own = _worker_cache(alone).ensure(ref(bad), _packed(paths))
    assert isinstance(failed, BuildFailed) and isinstance(own, BuildFailed)
    assert failed.detail.replace(str(work), "W") == own.detail.replace(str(alone), "W")
    assert "x.c:1: error: nope" in failed.detail and f"on the worker {work}/artifacts/" in failed.detail
    assert failed.log.split("[exit code")[0] == own.log.split("[exit code")[0]  # all but its timing


def test_a_worker_asking_during_the_build_waits_for_it(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    slow = _entry(tmp_path, "slow", "sleep 0.5; echo ok > built.txt", counter)
    paths = _fetch(slow)
    work = tmp_path / "w"
    ahead = threading.Thread(target=prebuild, args=(_plan([ref(slow)], work), _packed(paths)))
    ahead.start()
    try:
        while not list((work / "artifacts").glob(".*")):  # its build directory: it holds the lock
            assert ahead.is_alive(), "the build ended before the worker could ask"
            threading.Event().wait(0.01)
        worker = _worker_cache(work)
        done = worker.ensure(ref(slow), _packed(paths))
    finally:
        ahead.join(10.0)
    assert worker.builds == 0 and counter.read_text() == "built\n"
    assert isinstance(done, Path) and (done / "built.txt").exists()


def test_a_worker_with_other_conditions_builds_again(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    e = _entry(tmp_path, "e", "echo ok > built.txt", counter)
    paths = _fetch(e)
    work = tmp_path / "w"
    prebuild(_plan([ref(e)], work), _packed(paths))

    other = _worker_cache(work, Limits(move_wall_s=2.0, memory_mb=3072))  # another build memory limit
    assert other.cached(ref(e).digest) is None
    done = other.ensure(ref(e), _packed(paths))
    assert other.builds == 1 and counter.read_text() == "built\nbuilt\n"
    assert isinstance(done, Path) and not (done.parent / PREBUILT_MARKER).exists()  # its own now
    assert _worker_cache(work).cached(ref(e).digest) == done  # a worker's own build: taken as today


def test_stopped_before_it_starts_it_builds_nothing_and_leaves_nothing(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    e = _entry(tmp_path, "e", "true", counter)
    stop = threading.Event()
    stop.set()
    report = prebuild(_plan([ref(e)], tmp_path / "w"), _packed(_fetch(e)), stop)
    assert (report.built, report.skipped) == (0, 1)
    assert not counter.exists() and not (tmp_path / "w").exists()


def test_a_failure_of_this_machine_is_left_to_the_worker(tmp_path: Path) -> None:
    counter = tmp_path / "count"
    e = _entry(tmp_path, "e", "true", counter)
    other = _entry(tmp_path, "other", "true", counter)  # a different digest: not the entry's code
    wrong = {ref(e).digest: other}
    report = prebuild(_plan([ref(e)], tmp_path / "w"), _packed(wrong))
    assert (report.built, report.skipped) == (0, 1) and "digest mismatch" in report.error
    assert not counter.exists()
    assert [p.name for p in (tmp_path / "w" / "artifacts").iterdir()] == [f"{ref(e).digest}.lock"]
