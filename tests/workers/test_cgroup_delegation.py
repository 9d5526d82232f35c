"""A worker alone in a cgroup v2 delegated to it (systemd Delegate=yes) moves into a leaf and
makes its sandboxes' cgroups beside it (workers.sandbox.cgroup_delegation).

This machine's cgroups are v1, so the steps are checked on a directory laid out as systemd
lays a delegated service's cgroup out (docs/deploy.md's walkthrough says what could not be run
here); the writes are the ones the kernel is given."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from workers.sandbox import cgroup_delegation
from workers.sandbox.cgroup_delegation import adopt_delegated_cgroup

SERVICE = "system.slice/tourney-worker.service"


def layout(tmp: Path, *, procs: str, controllers: str = "cpu io memory pids") -> tuple[Path, Path]:
    fs = tmp / "cgroup"
    own = fs / SERVICE
    (own / "worker").mkdir(parents=True)  # the kernel makes a new cgroup's files; here they exist
    (fs / "cgroup.controllers").write_text("cpu io memory pids\n")
    (own / "cgroup.controllers").write_text(controllers + "\n")
    (own / "cgroup.subtree_control").write_text("\n")
    (own / "cgroup.procs").write_text(procs)
    (own / "worker" / "cgroup.procs").write_text("")
    proc = tmp / "proc-self-cgroup"
    proc.write_text(f"0::/{SERVICE}\n")
    return fs, proc


def test_alone_in_a_delegated_cgroup_it_moves_into_a_leaf_and_enables_memory_and_pids(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(cgroup_delegation.ROOT_ENV, raising=False)
    fs, proc = layout(tmp_path, procs=f"{os.getpid()}\n")
    said = adopt_delegated_cgroup(fs, proc)
    own = fs / SERVICE
    assert said is not None and "delegated" in said, said
    assert (own / "worker" / "cgroup.procs").read_text() == str(os.getpid())
    assert (own / "cgroup.subtree_control").read_text() == "+memory +pids"
    assert os.environ[cgroup_delegation.ROOT_ENV] == str(own)


@pytest.mark.parametrize(
    ("procs", "controllers", "why"),
    [
        ("1\n{pid}\n", "cpu io memory pids", "a shell shares it"),
        ("{pid}\n", "cpu io", "memory and pids not delegated"),
    ],
)
def test_it_changes_nothing_where_it_may_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, procs: str, controllers: str, why: str
) -> None:
    monkeypatch.delenv(cgroup_delegation.ROOT_ENV, raising=False)
    fs, proc = layout(tmp_path, procs=procs.format(pid=os.getpid()), controllers=controllers)
    assert adopt_delegated_cgroup(fs, proc) is None, why
    assert (fs / SERVICE / "cgroup.subtree_control").read_text() == "\n"
    assert cgroup_delegation.ROOT_ENV not in os.environ


def test_a_root_given_by_the_operator_is_kept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(cgroup_delegation.ROOT_ENV, "/sys/fs/cgroup/somewhere")
    fs, proc = layout(tmp_path, procs=f"{os.getpid()}\n")
    assert adopt_delegated_cgroup(fs, proc) is None
