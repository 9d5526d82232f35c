"""The survivor check of the worker tests (``processes_running``) counts this test
process's own processes, escaped ones included, and not those of another test
process running the same fixture programs (pytest-xdist workers, another suite)."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import psutil

from runner.domain.match_values import Limits
from workers.sandbox.plain import PlainHostFactory

from .conftest import processes_running


def _wait_for(argv: tuple[str, ...], timeout_s: float = 10.0) -> psutil.Process:
    """The process running exactly ``argv`` (any owner), once it has started."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for p in psutil.process_iter(["cmdline"]):
            if p.info["cmdline"] == list(argv):
                return p
        time.sleep(0.02)
    raise AssertionError(f"{argv} never started")


@contextlib.contextmanager
def _killed_after(argv: tuple[str, ...]) -> Iterator[psutil.Process]:
    p = _wait_for(argv)
    try:
        yield p
    finally:
        with contextlib.suppress(psutil.Error):
            p.kill()


def test_a_child_is_counted() -> None:
    child = subprocess.Popen(["sleep", "36.1"])
    try:
        assert [p.pid for p in processes_running("sleep", "36.1")] == [child.pid]
    finally:
        child.kill()
        child.wait()
    assert processes_running("sleep", "36.1") == []


def test_an_orphan_that_escaped_a_plain_game_is_still_counted(tmp_path: Path) -> None:
    # setsid leaves the game's process group: the plain host cannot kill it (documented),
    # and its parent is gone, so only the game directory it carries says whose it is
    with PlainHostFactory().open(tmp_path, Limits(), "A") as host:
        # Popen returns once the child has called setsid() and exec'd: no race with the group kill
        escape = "import subprocess; subprocess.Popen(['sleep', '36.2'], start_new_session=True)"
        # the system's python3: as root the entry runs as another user (workers/sandbox/plain_user.py)
        host.run(["python3", "-c", escape], b"", Limits(move_wall_s=10))
    with _killed_after(("sleep", "36.2")) as escaped:
        assert [p.pid for p in processes_running("sleep", "36.2")] == [escaped.pid]


def test_another_process_tree_running_the_same_program_is_not_counted() -> None:
    # an orphan with nothing of ours: as another test process's leftover looks to us
    subprocess.run(
        ["sh", "-c", "sleep 36.3 >/dev/null 2>&1 < /dev/null &"],
        cwd="/", env={"PATH": "/usr/bin:/bin", "TMPDIR": "/tmp"}, check=True,
    )  # fmt: skip
    with _killed_after(("sleep", "36.3")):
        assert processes_running("sleep", "36.3") == []
