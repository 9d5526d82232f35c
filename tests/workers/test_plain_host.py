"""PlainHost (sandbox: none): real processes, their limits, and nothing left behind."""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from runner.domain.match_values import Limits, VerdictKind
from workers.sandbox import HostError, host_factory
from workers.sandbox.plain import GAME_DIR_PREFIX, PlainHostFactory, sweep_stale_dirs

from .conftest import processes_running

#: the system's python3: as root, sandbox: none runs entries as another user
#: (workers/sandbox/plain_user.py), to which a virtualenv in a root-only home is closed
PY = "python3"


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    d = tmp_path / "entry"
    d.mkdir()
    (d / "data.txt").write_text("original\n")
    return d


def test_a_move_runs_in_a_private_copy_with_a_private_tmpdir(entry: Path) -> None:
    code = (
        "import os, sys\n"
        "print(open('data.txt').read().strip(), os.environ['TMPDIR'] != '/tmp', sys.stdin.read())\n"
        "open('data.txt', 'w').write('changed')\n"
    )
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        out = host.run([PY, "-c", code], b"hello", Limits(move_wall_s=10))
        assert out.failure is None and out.exit_code == 0
        assert out.stdout == b"original True hello\n"
        assert (host.workdir / "data.txt").read_text() == "changed"
        workdir = host.workdir
    assert (entry / "data.txt").read_text() == "original\n"  # the entry itself is untouched
    assert not workdir.exists()  # the game's copy is gone


def test_exit_code_and_signal_are_crashes_with_the_number(entry: Path) -> None:
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        out = host.run(["sh", "-c", "echo oops >&2; exit 3"], b"", Limits(move_wall_s=10))
        assert (out.failure, out.detail, out.exit_code) == (VerdictKind.CRASH, "exit code 3", 3)
        assert out.stderr_tail == b"oops\n"
        out = host.run(["sh", "-c", "kill -SEGV $$"], b"", Limits(move_wall_s=10))
        assert (out.failure, out.signal) == (VerdictKind.CRASH, 11)
        assert out.detail == "signal 11 (SIGSEGV)"


def test_a_missing_program_is_the_entrys_crash_not_a_runner_error(entry: Path) -> None:
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        out = host.run(["./a.out"], b"", Limits(move_wall_s=10))
    assert out.failure is VerdictKind.CRASH and "a.out" in out.detail


def test_wall_clock_deadline_kills_the_whole_group_promptly(entry: Path) -> None:
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        started = time.monotonic()
        out = host.run(["sh", "-c", "sleep 31.5 & sleep 31.5; echo never"], b"", Limits(move_wall_s=0.3))
        elapsed = time.monotonic() - started
    assert out.failure is VerdictKind.TIMEOUT and "0.3 s" in out.detail
    assert 0.3 <= elapsed < 3.0  # killed at the deadline; the slack is for a loaded machine
    assert out.stdout == b""
    assert processes_running("sleep", "31.5") == []


def test_a_descendant_alive_after_the_program_exits_is_left_processes_and_is_killed(entry: Path) -> None:
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        out = host.run(["sh", "-c", "(sleep 32.5 &); echo T1"], b"", Limits(move_wall_s=10))
        assert out.stdout == b"T1\n"
        assert out.failure is VerdictKind.LEFT_PROCESSES, out
        assert processes_running("sleep", "32.5") == []  # killed before run() returned


def test_a_child_waited_for_is_fine(entry: Path) -> None:
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        out = host.run(["sh", "-c", "sleep 0.01; echo ok"], b"", Limits(move_wall_s=10))
    assert out.failure is None and out.stdout == b"ok\n"


def test_output_over_the_cap_is_bad_output_and_stops_the_program(entry: Path) -> None:
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        started = time.monotonic()
        out = host.run(["yes"], b"", Limits(move_wall_s=10, output_kb=16))
    assert out.failure is VerdictKind.BAD_OUTPUT and "16 KiB" in out.detail
    assert len(out.stdout) <= 16 * 1024
    assert time.monotonic() - started < 5


def test_large_stdin_is_fed_without_deadlock(entry: Path) -> None:
    data = b"x" * (1 << 20)
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        out = host.run(["wc", "-c"], data, Limits(move_wall_s=10))
    assert out.failure is None and out.stdout.strip() == str(len(data)).encode()


def test_cpu_limit(entry: Path) -> None:
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        out = host.run([PY, "-c", "while True: pass"], b"", Limits(move_wall_s=10, move_cpu_s=0.2))
    assert out.failure is VerdictKind.CPU_LIMIT, out


def test_memory_limit(entry: Path) -> None:
    code = "x = bytearray(600 * 1024 * 1024)"
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        out = host.run([PY, "-c", code], b"", Limits(move_wall_s=10, memory_mb=256))
    assert out.failure is VerdictKind.MEMORY_LIMIT, out


def test_closing_the_host_kills_persistent_processes(entry: Path) -> None:
    host = PlainHostFactory().open(entry, Limits(), "Q")
    try:
        proc = host.spawn(["sh", "-c", "echo ready; exec sleep 33.5"], Limits(move_wall_s=10))
        assert proc.read_line(10) == "ready"
        deadline = time.monotonic() + 5
        while not processes_running("sleep", "33.5") and time.monotonic() < deadline:
            time.sleep(0.01)  # the exec after "ready" may not have happened yet
        assert processes_running("sleep", "33.5")
    finally:
        host.close()
    host.close()  # idempotent
    assert processes_running("sleep", "33.5") == []


def test_interactive_process_timeout_and_death_are_outcomes(entry: Path) -> None:
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        proc = host.spawn(["sh", "-c", "read x; echo got $x; read y; exit 7"], Limits(move_wall_s=10))
        proc.send("one\n")
        assert proc.read_line(10) == "got one"
        silent = proc.read_line(0.2)
        assert not isinstance(silent, str) and silent.failure is VerdictKind.TIMEOUT
        proc2 = host.spawn(["sh", "-c", "read x; exit 7"], Limits(move_wall_s=10))
        proc2.send("go\n")
        died = proc2.read_line(10)
        assert not isinstance(died, str)
        assert (died.failure, died.detail) == (VerdictKind.CRASH, "exit code 7")


def test_build_runs_in_the_entry_directory(entry: Path) -> None:
    out = PlainHostFactory().run_build(entry, "cp data.txt built.txt && echo done", Limits(move_wall_s=10))
    assert out.failure is None and out.exit_code == 0 and out.stdout == b"done\n"
    assert (entry / "built.txt").read_text() == "original\n"


def test_host_factory_by_sandbox_name() -> None:
    assert isinstance(host_factory("none"), PlainHostFactory)
    with pytest.raises(HostError, match="unknown sandbox"):
        host_factory("docker")


def test_bwrap_missing_is_a_clear_host_error() -> None:
    if (Path(__file__).resolve().parents[2] / "workers" / "sandbox" / "bwrap.py").exists():
        pytest.skip("the bwrap sandbox is installed here")
    with pytest.raises(HostError, match="not available"):
        host_factory("bwrap")


def test_no_stray_tempdirs_after_many_games(entry: Path) -> None:
    before = set(os.listdir(os.environ.get("TMPDIR", "/tmp")))
    for _ in range(5):
        with PlainHostFactory().open(entry, Limits(), "A") as host:
            host.run(["true"], b"", Limits(move_wall_s=10))
    after = set(os.listdir(os.environ.get("TMPDIR", "/tmp")))
    # only this process's games: another test process may be opening its own meanwhile
    assert not {n for n in after - before if n.startswith(f"{GAME_DIR_PREFIX}{os.getpid()}-")}


def test_a_process_that_stops_reading_its_input_cannot_block_the_referee(entry: Path) -> None:
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        proc = host.spawn(["sh", "-c", "echo hi; exec sleep 34.5"], Limits(move_wall_s=0.3))
        assert proc.read_line(10) == "hi"
        started = time.monotonic()
        proc.send("x" * (1 << 20) + "\n")  # far more than a pipe holds
        assert time.monotonic() - started < 5
        stuck = proc.read_line(1)
        assert not isinstance(stuck, str) and stuck.failure is VerdictKind.TIMEOUT
        assert stuck.detail == "wall-clock limit 0.3 s exceeded", stuck.detail  # it did not read its input
    assert processes_running("sleep", "34.5") == []


def test_directories_of_a_dead_worker_are_swept_when_old(tmp_path: Path) -> None:
    # a pid no process has: a worker killed mid-match. Not the pid of a process that just ended:
    # pid_max is 32,768 here, and a forking entry of a test beside this one can take every pid
    # round again within a second, so such a pid can be a live process's by the time of the sweep
    gone = int(Path("/proc/sys/kernel/pid_max").read_text()) + 1
    tmp = Path(tempfile.gettempdir())
    dead = tmp / f"{GAME_DIR_PREFIX}{gone}-test"
    fresh = tmp / f"{GAME_DIR_PREFIX}{gone}-fresh"
    live = tmp / f"{GAME_DIR_PREFIX}1-test"  # pid 1 is alive
    for d in (dead, fresh, live):
        (d / "work").mkdir(parents=True)
    old = time.time() - 3600
    for d in (dead, live):
        os.utime(d, (old, old))
    try:
        sweep_stale_dirs()
        assert not dead.exists()
        assert fresh.exists() and live.exists()
    finally:
        for d in (dead, fresh, live):
            shutil.rmtree(d, ignore_errors=True)


def test_a_line_already_in_the_pipe_is_read_with_no_time_left(entry: Path) -> None:
    """Issue 35, item 3: a read past its deadline looks in the pipe before it kills."""
    with PlainHostFactory().open(entry, Limits(), "A") as host:
        proc = host.spawn(["sh", "-c", "echo ready; read x; echo got $x; sleep 30"], Limits(move_wall_s=2))
        try:
            time.sleep(1.0)  # the line is written well before it is read
            assert proc.read_line(0.0) == "ready"
            assert proc.wait_line(0.2) is None  # a wait that is no deadline leaves it running
            proc.send("more\n")
            assert proc.read_line(2.0) == "got more"
        finally:
            proc.close()
