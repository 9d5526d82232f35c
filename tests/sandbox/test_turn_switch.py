"""A persistent entry's per-turn cgroup controls (workers/sandbox/turn_switch.py): the files
held open, the CPU time read from the kernel's count, and under cgroup v1 the empty cgroup
held frozen so that the freezer stays cheap. That freezing still stops an entry is
tests/sandbox/test_trust.py's (the busy-children brain, the kernel's own count)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from workers.sandbox import turn_switch
from workers.sandbox.cgroups import PREFIX, Cgroups, process_start_time, shared_cgroups
from workers.sandbox.turn_switch import TurnFiles, TurnSwitch


def test_v2_files_are_written_and_read_in_place(tmp_path: Path) -> None:
    freeze, cpu = tmp_path / "cgroup.freeze", tmp_path / "cpu.stat"
    freeze.write_text("0")
    cpu.write_text("usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n")
    switch = TurnSwitch(TurnFiles(freeze, "1", "0", cpu))
    try:
        switch.freeze()
        assert freeze.read_text() == "1"
        switch.thaw()
        assert freeze.read_text() == "0"
        assert switch.cpu_ms() == 1.5
        cpu.write_text("usage_usec 2500000\n")  # the same descriptor sees the new count
        assert switch.cpu_ms() == 2500.0
    finally:
        switch.close()
    switch.close()  # idempotent


def test_the_v1_cpu_counter_is_in_nanoseconds(tmp_path: Path) -> None:
    freeze, cpu = tmp_path / "freezer.state", tmp_path / "cpuacct.usage"
    freeze.write_text("THAWED")
    cpu.write_text("12345678\n")
    # not "FROZEN": that would make this process's warm cgroup under tmp_path (the next test's)
    switch = TurnSwitch(TurnFiles(freeze, "frozen", "thawed", cpu))
    try:
        assert switch.cpu_ms() == pytest.approx(12.345678)
    finally:
        switch.close()


def _v1() -> Cgroups:
    cgroups = shared_cgroups()
    if cgroups.version != "cgroup v1":
        pytest.skip(f"the warm freezer is for cgroup v1 ({cgroups.version or cgroups.problem})")
    return cgroups


def test_a_v1_switch_holds_one_empty_cgroup_frozen_for_the_process() -> None:
    cgroups = _v1()
    group = cgroups.create(64 << 20, 16)
    try:
        switch = TurnSwitch(group.turn_files())
        switch.freeze()
        switch.thaw()
        switch.close()
        parent = group.turn_files().freeze.parents[2]
        pid = os.getpid()
        warm = parent / f"{PREFIX}freezer-{pid}-{process_start_time(pid)}-0"
        assert (warm / "entry" / "freezer.state").read_text().strip() == "FROZEN"
        assert (warm / "entry" / "tasks").read_text() == ""  # empty: it stops nothing
        TurnSwitch(group.turn_files()).close()  # a second switch makes no second one
        assert len(list(parent.glob(f"{PREFIX}freezer-{pid}-*"))) == 1
    finally:
        group.destroy()


def test_the_warm_cgroup_goes_at_exit_and_a_dead_workers_is_swept(tmp_path: Path) -> None:
    cgroups = _v1()
    parent = cgroups.create(64 << 20, 16)
    freezer_parent = parent.turn_files().freeze.parents[2]
    parent.destroy()
    # a process that makes its warm cgroup and exits: gone with it
    code = (
        "from workers.sandbox.turn_switch import warm_v1_freezer\n"
        f"warm_v1_freezer(__import__('pathlib').Path({str(freezer_parent)!r}))\n"
        "import os; print(os.getpid())\n"
    )
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, timeout=60, check=True
    )
    assert not list(freezer_parent.glob(f"{PREFIX}freezer-{done.stdout.strip()}-*"))
    # one a killed worker left (its pid gone): the next sweep takes it
    left = freezer_parent / f"{PREFIX}freezer-{done.stdout.strip()}-1-0"
    (left / "entry").mkdir(parents=True)
    (left / "entry" / "freezer.state").write_text("FROZEN")
    try:
        assert left.name in cgroups.sweep()
        assert not left.exists()
    finally:
        turn_switch._unwarm(left)
