"""What an entry hands in, played through the real sandbox (issue 25 items 1 and 7).

An entry holds regular files and directories only: a link to another run's
key is refused before anything is packed, so no worker ever copies it into a
sandbox; an empty ``support/`` shipped with an entry is there in its sandbox
(seed 003). A build's output is charged its apparent size, so sparse files
cannot multiply on the worker's disk.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest

from runner.domain.entries import EntryPathRefused
from runner.domain.match_values import VerdictKind
from workers.artifacts import ArtifactCache, BuildFailed, local_fetch
from workers.sandbox.base import HostFactory
from workers.sandbox.plain import PlainHostFactory

from .conftest import EASY, FIXTURES, Recorder, entry_ref, play

SECRET = "run-key-bytes-9d2e"

#: an icfp98 entry that keeps its move count in support/count and, unlike
#: tests/fixtures/pousse/support_state, never creates support/ itself: seed 003
#: says the directory is the entry's, shipped with it (empty here)
SUPPORT_RUNME = """\
#!/usr/bin/env python3
import os, sys
lines = sys.stdin.read().split()
n, moves = int(lines[0]), lines[1:]
mine = len(moves) // 2
path = os.path.join("support", "count")
count = int(open(path).read()) if os.path.exists(path) else 0
if count != mine:
    sys.exit(5)
with open(path, "w") as f:
    f.write(str(count + 1))
k = len(moves)
print(f"{'LRTB'[k % 4]}{k // 4 % n + 1}")
"""


def _support_entry(root: Path) -> Path:
    d = root / "support-kept"
    d.mkdir()
    (d / "entry.yaml").write_text("name: support-kept\ngame: pousse\nprotocol: icfp98\nrun: [./runme]\n")
    (d / "runme").write_text(SUPPORT_RUNME)
    (d / "runme").chmod(0o755)
    (d / "support").mkdir()
    return d


def test_an_empty_support_directory_reaches_the_sandbox_and_keeps_state(
    recorder: Recorder, tmp_path: Path
) -> None:
    cache = ArtifactCache(tmp_path / "cache", recorder)
    seats = [("support-kept", _support_entry(tmp_path)), ("t1", FIXTURES / "pousse" / "t1")]
    result = play(recorder, cache, seats, limits=EASY, game="pousse", board="4",
                  orders=[["support-kept", "t1"], ["t1", "support-kept"]])  # fmt: skip
    for g in result.games:
        assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
        assert sum(1 for m in g.moves if m.player == "support-kept") >= 2  # state kept across moves


def test_a_link_to_a_run_key_never_reaches_a_sandbox(recorder: Recorder, tmp_path: Path) -> None:
    key = tmp_path / "other-run" / "run.key"
    key.parent.mkdir()
    key.write_text(SECRET)
    thief = tmp_path / "thief"
    shutil.copytree(FIXTURES / "pousse" / "t1", thief)
    (thief / "opp.c").symlink_to(key)
    with pytest.raises(EntryPathRefused, match=r"opp\.c: a symbolic link \(to .*run\.key\)"):
        seats = [("thief", thief), ("t1", FIXTURES / "pousse" / "t1")]
        cache = ArtifactCache(tmp_path / "cache", recorder)
        play(recorder, cache, seats, limits=EASY, game="pousse", board="4")
    # nor does a digest taken before the link appeared let it be packed for a worker
    (thief / "opp.c").unlink()
    ref = entry_ref(thief)
    (thief / "opp.c").symlink_to(key)
    # (the entry's own doing: its build_failed, never a worker's failure; issue 34 item 1)
    got = ArtifactCache(tmp_path / "cache2", recorder).ensure(ref, local_fetch({ref.digest: thief}))
    assert isinstance(got, BuildFailed) and re.search(r"opp\.c: a symbolic link", got.detail), got
    assert SECRET not in got.detail
    assert recorder.sandboxes == []  # no sandbox was ever started for it


SPARSE_BUILD = "truncate -s 250M a.bin && truncate -s 250M b.bin && truncate -s 250M c.bin"


@pytest.fixture(params=["bwrap", "none"])
def build_hosts(request: pytest.FixtureRequest) -> HostFactory:
    if request.param == "none":
        return PlainHostFactory()
    return request.getfixturevalue("bwrap_factory")  # type: ignore[no-any-return]


def test_sparse_build_output_is_charged_its_apparent_size(build_hosts: HostFactory, tmp_path: Path) -> None:
    """Three 250 MiB holes take no room where they are made; copied (out of the sandbox,
    or into each game's working copy by ``sandbox: none``) they would take 750 MiB."""
    d = tmp_path / "sparse"
    d.mkdir()
    (d / "entry.yaml").write_text(
        f"name: sparse\ngame: boxing\nprotocol: potm-arena\nbuild: {SPARSE_BUILD!r}\nrun: [sh, main.sh]\n"
    )
    (d / "main.sh").write_text("echo 1 1\n")
    ref = entry_ref(d)
    cache_root = tmp_path / "cache"
    try:
        done = ArtifactCache(cache_root, build_hosts).ensure(ref, local_fetch({ref.digest: d}))
    except BaseException:
        shutil.rmtree(cache_root, ignore_errors=True)  # never leave 750 MB in pytest's kept tmp dirs
        raise
    on_disk = sum(
        os.lstat(os.path.join(top, f)).st_blocks * 512 for top, _, files in os.walk(cache_root) for f in files
    )
    shutil.rmtree(cache_root, ignore_errors=True)
    assert isinstance(done, BuildFailed), done
    assert "build output over" in done.detail and "\n" not in done.detail, done.detail
    assert on_disk < 1 << 20, on_disk  # nothing large was written, not even for a moment's copy
