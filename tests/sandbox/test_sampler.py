"""The tree sampler's listing of a process's descendants (workers.sandbox.sampler):
the same processes psutil finds by scanning the whole machine, read from the tree alone."""

from __future__ import annotations

import subprocess
import time

import psutil

from workers.sandbox.sampler import TreeWatch, descendants

# a shell with a child shell holding a grandchild, plus a background sleeper of its own
TREE = "sleep 30 & sh -c 'sleep 30 & wait' & wait"


def _tree() -> subprocess.Popen[bytes]:
    proc = subprocess.Popen(["sh", "-c", TREE], start_new_session=True)
    deadline = time.monotonic() + 10
    while len(psutil.Process(proc.pid).children(recursive=True)) < 3:
        assert time.monotonic() < deadline, "the test tree did not start"
        time.sleep(0.01)
    return proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    for p in psutil.Process(proc.pid).children(recursive=True):
        p.kill()
    proc.kill()
    proc.wait()


def test_descendants_are_the_ones_psutil_finds() -> None:
    proc = _tree()
    try:
        root = psutil.Process(proc.pid)
        found = descendants(root)
        assert found is not None
        assert sorted(p.pid for p in found) == sorted(p.pid for p in root.children(recursive=True))
        assert len(found) == 3  # its sleep, the inner shell, that one's sleep
    finally:
        _stop(proc)


def test_a_gone_root_has_no_descendants() -> None:
    proc = subprocess.Popen(["true"])
    root = psutil.Process(proc.pid)
    proc.wait()
    assert descendants(root) is None


def test_a_sample_counts_the_whole_tree() -> None:
    proc = _tree()
    try:
        watch = TreeWatch(proc.pid, cpu_limit_ms=None, memory_limit_kb=None)
        assert watch.sample() is None
        assert watch.usage.peak_processes == 3 and watch.usage.peak_rss_kb > 0
        assert TreeWatch(proc.pid, cpu_limit_ms=None, memory_limit_kb=1).sample() == "memory"
    finally:
        _stop(proc)
