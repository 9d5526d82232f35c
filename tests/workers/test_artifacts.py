"""The build cache: one build per digest, even across processes; failures cached; digests checked."""

from __future__ import annotations

import errno
import multiprocessing
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

import workers.artifacts
from runner.domain.entries import pack_entry
from runner.domain.match_values import EntryRef
from runner.domain.packing import refused_artifact
from workers.artifacts import ArtifactCache, ArtifactError, BuildFailed, error_lines, local_fetch
from workers.sandbox.plain import PlainHostFactory

from .conftest import fixture, ref


@pytest.fixture
def counter(tmp_path: Path) -> Iterator[Path]:
    """Where a build counts itself: a file the build can write, which as root (entries run as
    another user: workers/sandbox/plain_user.py) is outside the test's root-only directory."""
    if os.geteuid() != 0:
        yield tmp_path / "count"
        return
    shared = Path(tempfile.mkdtemp(prefix="tourney-test-count-", dir="/tmp"))
    shared.chmod(0o777)
    try:
        yield shared / "count"
    finally:
        shutil.rmtree(shared, ignore_errors=True)


def _counting_entry(tmp_path: Path, counter: Path, name: str = "counted") -> Path:
    """An entry whose build appends a line to ``counter`` (outside the cache) and makes a file."""
    d = tmp_path / name
    d.mkdir()
    (d / "entry.yaml").write_text(
        f"name: {name}\ngame: mnk\nprotocol: mnk\n"
        f'build: "sleep 0.2; echo built >> {counter}; echo ok > built.txt"\n'
        "run: [sh, play.sh]\n"
    )
    (d / "play.sh").write_text("echo 1 1\n")
    return d


def test_a_digest_is_built_once_and_reused_by_a_fresh_cache(tmp_path: Path, counter: Path) -> None:
    d = _counting_entry(tmp_path, counter)
    r = ref(d)
    fetches: list[str] = []

    def fetch(digest: str) -> bytes:
        fetches.append(digest)
        return pack_entry(d)

    cache = ArtifactCache(tmp_path / "cache", PlainHostFactory())
    first = cache.ensure(r, fetch)
    assert isinstance(first, Path) and (first / "built.txt").read_text() == "ok\n"
    assert cache.ensure(r, fetch) == first
    again = ArtifactCache(tmp_path / "cache", PlainHostFactory()).ensure(r, fetch)  # another worker process
    assert again == first
    assert counter.read_text() == "built\n" and fetches == [r.digest]
    assert "$ sleep 0.2" in (first.parent / "build.log").read_text()


def test_a_changed_file_changes_the_digest_and_builds_again(tmp_path: Path, counter: Path) -> None:
    d = _counting_entry(tmp_path, counter)
    cache = ArtifactCache(tmp_path / "cache", PlainHostFactory())
    r1 = ref(d)
    cache.ensure(r1, local_fetch({r1.digest: d}))
    (d / "play.sh").write_text("echo 2 2\n")
    r2 = ref(d)
    assert r2.digest != r1.digest
    built = cache.ensure(r2, local_fetch({r2.digest: d}))
    assert isinstance(built, Path) and (built / "play.sh").read_text() == "echo 2 2\n"
    assert counter.read_text() == "built\nbuilt\n"


def _ensure_in_child(root: str, entry: str, digest: str) -> str:
    r = ref(Path(entry))
    assert r.digest == digest
    out = ArtifactCache(Path(root), PlainHostFactory()).ensure(r, local_fetch({digest: Path(entry)}))
    return str(out)


def test_concurrent_ensure_from_several_processes_builds_once(tmp_path: Path, counter: Path) -> None:
    d = _counting_entry(tmp_path, counter)
    r = ref(d)
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(3) as pool:
        outs = pool.starmap(_ensure_in_child, [(str(tmp_path / "cache"), str(d), r.digest)] * 3)
    assert len(set(outs)) == 1
    assert counter.read_text() == "built\n"


def test_a_failed_build_is_cached_with_its_log(tmp_path: Path) -> None:
    r = ref("boxing/broken_build")
    fetch = local_fetch({r.digest: fixture("boxing/broken_build")})
    cache = ArtifactCache(tmp_path / "cache", PlainHostFactory())
    failed = cache.ensure(r, fetch)
    assert isinstance(failed, BuildFailed)
    log = tmp_path / "cache" / r.digest / "build.log"
    assert failed.detail == (
        "exit code 1: main.c:1: error: expected a program "
        f"(full log: tourney build-log RUN ENTRY; on the worker {log})"
    )
    assert "expected a program" in failed.log and "expected a program" in log.read_text()
    assert cache.ensure(r, fetch) == failed and cache.builds == 1


def test_the_first_error_like_lines_are_the_cause() -> None:
    log = """$ cc -O2 -o a.out main.c
main.c: In function 'main':
main.c:3:5: error: unknown type name 'strng'
main.c:4:9: warning: unused variable 'x'
main.c:7:1: error: expected ';' before '}' token
main.c:9:1: error: expected declaration
main.c:12:1: error: one too many
2 errors generated.
"""
    assert error_lines(log) == [
        "main.c:3:5: error: unknown type name 'strng'",
        "main.c:7:1: error: expected ';' before '}' token",
        "main.c:9:1: error: expected declaration",
        "main.c:12:1: error: one too many",
    ]
    assert len(error_lines(log * 3)) == 5  # at most five: the cause, and what it led to


def test_a_native_entry_builds_with_cc(tmp_path: Path) -> None:
    if shutil.which("cc") is None:
        pytest.skip("no C compiler")
    r = ref("boxing/native")
    built = ArtifactCache(tmp_path / "cache", PlainHostFactory()).ensure(
        r, local_fetch({r.digest: fixture("boxing/native")})
    )
    assert isinstance(built, Path) and (built / "a.out").exists()


def test_an_artifact_that_does_not_match_its_digest_never_runs_and_is_the_entrys_build_failed(
    tmp_path: Path,
) -> None:
    """Issue 34 item 1: every worker would find the same mismatch, so it is the entry's verdict,
    never a worker's failure; not cached, so a good artifact later builds."""
    good = ref("mnk/first_empty")
    other = fixture("boxing/first_fit")
    cache = ArtifactCache(tmp_path / "cache", PlainHostFactory())
    got = cache.ensure(good, lambda digest: pack_entry(other))
    assert isinstance(got, BuildFailed) and got.digest == good.digest
    assert got.detail.startswith("artifact digest mismatch: expected") and "\n" not in got.detail
    assert cache.cached(good.digest) is None
    assert not list((tmp_path / "cache").glob(".*-*"))  # no half-made directories left
    assert isinstance(cache.ensure(good, local_fetch({good.digest: fixture("mnk/first_empty")})), Path)


def test_what_the_organiser_could_not_pack_and_what_does_not_unpack_are_the_entrys(tmp_path: Path) -> None:
    r = ref("mnk/first_empty")
    cache = ArtifactCache(tmp_path / "cache", PlainHostFactory())
    why = "entry first-empty: changed after the run read it (digest a when loaded, b when packed)"
    got = cache.ensure(r, lambda digest: refused_artifact(why))
    assert isinstance(got, BuildFailed) and got.detail == why
    garbage = cache.ensure(r, lambda digest: b"\x1f\x8b not really gzip")
    assert isinstance(garbage, BuildFailed) and "does not unpack" in garbage.detail
    missing = cache.ensure(r, lambda digest: (tmp_path / "nowhere.tar.gz").read_bytes())
    assert isinstance(missing, BuildFailed) and "cannot fetch its artifact" in missing.detail


def test_a_full_disk_while_unpacking_is_the_machines_and_names_the_entry(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The one fault a worker can prove its own: it is retried elsewhere (``system_error``), with the
    entry's digest so that the coordinator counts it once in a row for that entry."""
    r = ref("mnk/first_empty")

    def full(blob: bytes, dest: Path) -> None:
        raise OSError(errno.ENOSPC, "No space left on device", str(dest))

    monkeypatch.setattr(workers.artifacts, "unpack_entry", full)
    cache = ArtifactCache(tmp_path / "cache", PlainHostFactory())
    with pytest.raises(ArtifactError, match="No space left") as e:
        cache.ensure(r, local_fetch({r.digest: fixture("mnk/first_empty")}))
    assert e.value.digest == r.digest


def test_a_bad_digest_never_becomes_a_path(tmp_path: Path) -> None:
    r = EntryRef("evil", "../../etc", "mnk", ["x"])
    with pytest.raises(ArtifactError, match="not a sha256"):
        ArtifactCache(tmp_path / "cache", PlainHostFactory()).ensure(r, lambda d: b"")
