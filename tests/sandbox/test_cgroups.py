"""Which cgroup back end a worker picks (narrow unit tests over a fake
/sys/fs/cgroup), and the real one's lifecycle on this machine."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workers.sandbox.cgroups import (
    RLIMIT_ONLY,
    TCP_BUFFER_CAP_BYTES,
    CgroupError,
    Cgroups,
    CgroupV1,
    CgroupV2,
    shared_cgroups,
    tcp_buffer_limit,
)


def test_v2_is_chosen_where_memory_and_pids_are_delegated(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("memory pids\n")
    own = Path("/proc/self/cgroup").read_text()
    if "0::/" not in own:
        pytest.skip("no unified hierarchy line in /proc/self/cgroup")
    cgroups = Cgroups(fs=tmp_path)
    # our own cgroup path does not exist under the fake mount: the mount itself is used
    assert cgroups.version == "cgroup v2"
    assert cgroups.memory_mode == "memory: cgroup v2"


def test_v2_without_delegated_controllers_falls_back(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu memory pids\n")
    (tmp_path / "cgroup.subtree_control").write_text("\n")  # nothing delegated
    cgroups = Cgroups(fs=tmp_path)  # and no v1 hierarchies either
    assert cgroups.version is None
    assert cgroups.memory_mode == RLIMIT_ONLY
    assert cgroups.problem is not None and "Fix:" in cgroups.problem
    with pytest.raises(CgroupError):
        cgroups.create(1 << 28, 40)


def test_v1_hierarchies_are_used_where_writable(tmp_path: Path) -> None:
    for c in ("memory", "pids", "freezer", "cpuacct"):
        (tmp_path / c).mkdir()
    assert Cgroups(fs=tmp_path).version == "cgroup v1"


def test_real_cgroup_counts_and_freezes_and_is_removed() -> None:
    cgroups = shared_cgroups()
    if cgroups.version is None:
        pytest.skip(f"no cgroups here: {cgroups.problem}")
    group = cgroups.create(64 << 20, 16)
    try:
        used = group.usage()
        assert used.oom_kills == 0 and used.peak_memory_bytes >= 0
        group.freeze()
        group.thaw()
        fd = group.entry_procs_fd()
        os.close(fd)
    finally:
        group.destroy()
    group.destroy()  # idempotent
    # its own directories are gone (not every cgroup of this process: another test's idle
    # sandboxes, kept for reuse by workers.sandbox.pool, keep theirs until they are closed)
    assert isinstance(group, CgroupV1 | CgroupV2)
    dirs = [group.path] if isinstance(group, CgroupV2) else list(group.dirs.values())
    assert dirs and not [d for d in dirs if d.exists()]


def test_real_v1_cgroup_charges_tcp_buffers_up_to_its_memory_limit() -> None:
    """v1 counts socket buffers apart from memory and only once a limit is written
    (tests/sandbox/test_tcp_memory.py plays the attack); v2 has them in memory.max."""
    cgroups = shared_cgroups()
    if cgroups.version != "cgroup v1":
        pytest.skip(f"no v1 cgroups here ({cgroups.version or cgroups.problem})")
    group = cgroups.create(48 << 20, 16)
    try:
        assert isinstance(group, CgroupV1)
        tcp = int((group.dirs["memory"] / "memory.kmem.tcp.limit_in_bytes").read_text())
        assert tcp == tcp_buffer_limit(48 << 20) == 48 << 20
    finally:
        group.destroy()


def test_tcp_buffers_never_get_more_than_the_cap() -> None:
    # a 512 MiB entry: four such sandboxes must not approach the host's tcp_mem
    assert tcp_buffer_limit((512 << 20) + (16 << 20)) == TCP_BUFFER_CAP_BYTES == 64 << 20
