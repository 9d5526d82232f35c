"""The memory limit is the entry's memory (issue 34, item 5; docs/sandbox.md, "A
cgroup per sandbox").

An entry's working copy lives on a tmpfs, in memory. The sandbox's cgroup used to
grant ``memory_mb`` plus the size of the entry's own files, so an entry shipping
150 MiB of zeros (a 153 KB artifact) deleted them at run time and held 200 MiB
under ``memory_mb: 64``, verdict ``normal``. Now the files count within
``memory_mb``: real sandboxes, real cgroups, a hostile entry holding memory in
memfds (which no address-space rlimit limits)."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.domain.match_values import Limits, VerdictKind
from workers.sandbox.base import HostFactory
from workers.sandbox.bwrap import BwrapHostFactory
from workers.sandbox.pool import ReusingHostFactory, SandboxPool

#: deletes its zeros, then holds ``argv[1]`` MiB in memfds of 8 MiB (each under the file-size
#: rlimit), touching every page, and says how much it held
HOARDER = r"""
import os, sys
os.remove("zeros")
want = int(sys.argv[1])
held = []
for i in range(want // 8):
    fd = os.memfd_create("hoard")
    for _ in range(8):
        os.write(fd, b"\1" * (1 << 20))
    held.append(fd)
print("held", 8 * len(held), "MiB")
"""


def hoarder(tmp_path: Path, zeros_mib: int) -> Path:
    entry = tmp_path / f"hoarder-{zeros_mib}"
    entry.mkdir()
    (entry / "hoard.py").write_text(HOARDER)
    with open(entry / "zeros", "wb") as f:
        for _ in range(zeros_mib):
            f.write(bytes(1 << 20))  # real zeros, not a hole: an artifact of zeros packs small
    return entry


def _needs_cgroups(factory: HostFactory) -> None:
    assert isinstance(factory, BwrapHostFactory)
    if factory.cgroups.version is None:
        pytest.skip(f"no cgroup for sandboxes here ({factory.memory_mode}): the limit is an rlimit's")


def test_files_that_do_not_fit_in_memory_mb_are_memory_limit(
    bwrap_factory: HostFactory, tmp_path: Path
) -> None:
    """The issue's entry: 150 MiB of zeros under memory_mb 64, deleted at run time to hold
    200 MiB. Its files alone are past its limit: memory_limit, and nothing runs."""
    _needs_cgroups(bwrap_factory)
    entry = hoarder(tmp_path, 150)
    limits = Limits(move_wall_s=20.0, memory_mb=64)
    for factory in (bwrap_factory, ReusingHostFactory(bwrap_factory, SandboxPool(max_idle=1))):  # type: ignore[arg-type]
        with factory.open(entry, limits, "X") as host:
            out = host.run(["python3", "hoard.py", "200"], b"", limits)
        assert out.failure is VerdictKind.MEMORY_LIMIT, out
        assert b"held" not in out.stdout
        assert "150.0 MiB" in out.detail and "64 MiB" in out.detail, out.detail


def test_deleting_the_entrys_files_frees_nothing_beyond_memory_mb(
    bwrap_factory: HostFactory, tmp_path: Path
) -> None:
    """40 MiB of zeros under memory_mb 64: the entry runs, but deleting its files gives it
    back only what they took of its 64 MiB. Holding 96 MiB (64 + 32: more than memory_mb and
    the launcher's 16 MiB, less than memory_mb and the files) is memory_limit, where the old
    grant (64 + 40 + 16 MiB) let it through as normal."""
    _needs_cgroups(bwrap_factory)
    entry = hoarder(tmp_path, 40)
    limits = Limits(move_wall_s=20.0, memory_mb=64)
    with bwrap_factory.open(entry, limits, "X") as host:
        out = host.run(["python3", "hoard.py", "96"], b"", limits)
    assert out.failure is VerdictKind.MEMORY_LIMIT, (out.stdout, out.stderr_tail[-300:], out.detail)
    assert b"held 96" not in out.stdout


def test_an_entry_with_files_holds_what_memory_mb_leaves_it(
    bwrap_factory: HostFactory, tmp_path: Path
) -> None:
    """The control: the same entry holding 32 MiB (its 40 MiB of files deleted, 64 MiB
    granted) plays normally: the limit did not become smaller than memory_mb."""
    _needs_cgroups(bwrap_factory)
    entry = hoarder(tmp_path, 40)
    limits = Limits(move_wall_s=20.0, memory_mb=64)
    with bwrap_factory.open(entry, limits, "X") as host:
        out = host.run(["python3", "hoard.py", "32"], b"", limits)
    assert out.failure is None and out.exit_code == 0, (out.stderr_tail[-300:], out.detail)
    assert out.stdout == b"held 32 MiB\n"
