"""The bwrap host, one program at a time: isolation, limits and verdicts as a
user of ``EntryHost.run`` and ``spawn`` sees them."""

from __future__ import annotations

import contextlib
import os
import socket
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.domain.match_values import Limits, VerdictKind
from workers.sandbox.base import EntryHost, HostError, HostFactory, RunOutcome
from workers.sandbox.bwrap import BwrapHostFactory

from .conftest import Recorder

QUICK = Limits(move_wall_s=2.0)


@pytest.fixture
def entry_dir(tmp_path: Path) -> Path:
    d = tmp_path / "entry"
    d.mkdir()
    (d / "prog.sh").write_text('#!/bin/sh\necho "mark $1"\ncat\n')
    (d / "prog.sh").chmod(0o755)
    (d / "support").mkdir()
    (d / "support" / "count").write_text("0\n")
    return d


@pytest.fixture
def host(recorder: Recorder, entry_dir: Path) -> Iterator[EntryHost]:
    h = recorder.open(entry_dir, QUICK, "A")
    yield h
    h.close()


def sh(host: EntryHost, script: str, stdin: bytes = b"", limits: Limits = QUICK) -> RunOutcome:
    return host.run(["sh", "-c", script], stdin, limits)


def test_runs_the_entry_in_its_working_copy(host: EntryHost) -> None:
    out = host.run(["./prog.sh", "A"], b"the arena\n", QUICK)
    assert out.failure is None
    assert out.exit_code == 0
    assert out.stdout == b"mark A\nthe arena\n"
    assert out.wall_ms > 0 and out.cpu_ms >= 0


def test_clean_environment_and_unprivileged_user(host: EntryHost) -> None:
    out = sh(host, "pwd; id -u; echo $HOME $TMPDIR; env | sort | cut -d= -f1 | tr '\\n' ' '")
    cwd, uid, dirs, names = out.stdout.decode().splitlines()
    assert cwd == "/entry"
    assert uid != "0"
    assert dirs == "/entry /tmp"
    assert "REDIS" not in names and "CELERY" not in names


def test_tmp_persists_across_moves_and_dies_with_the_host(recorder: Recorder, entry_dir: Path) -> None:
    with recorder.open(entry_dir, QUICK, "A") as host:
        assert sh(host, "echo 1 > /tmp/arena.A").failure is None
        assert sh(host, "cat /tmp/arena.A").stdout == b"1\n"
    with recorder.open(entry_dir, QUICK, "A") as host:
        out = sh(host, "ls -A /tmp")
        assert out.stdout == b""  # a new game starts with an empty /tmp


def test_same_mark_in_concurrent_games_is_invisible(recorder: Recorder, entry_dir: Path) -> None:
    """Two games on one machine, both with a seat A: neither sees the other's arena file."""
    with recorder.open(entry_dir, QUICK, "A") as one, recorder.open(entry_dir, QUICK, "A") as two:
        assert sh(one, "echo one > /tmp/arena.A").failure is None
        assert sh(two, "cat /tmp/arena.A 2>/dev/null || echo none").stdout == b"none\n"
        assert sh(two, "echo two > /tmp/arena.A").failure is None
        assert sh(one, "cat /tmp/arena.A").stdout == b"one\n"
        # the machine's own /tmp/arena.A belongs to sandbox-none games (another test process's
        # may remove it at any moment): whatever it holds, it is not these sandboxes' files
        with contextlib.suppress(FileNotFoundError):
            assert Path("/tmp/arena.A").read_text() not in ("one\n", "two\n")


def test_working_copy_is_private_and_writable(recorder: Recorder, entry_dir: Path) -> None:
    """ICFP'98 support/ state: written during one game, never seen by the next or the source."""
    with recorder.open(entry_dir, QUICK, "A") as host:
        out = sh(host, "echo 1 >> support/count; echo 2 >> support/count; cat support/count")
        assert out.stdout == b"0\n1\n2\n"
        assert (host.workdir / "support" / "count").read_text() == "0\n1\n2\n"
    assert (entry_dir / "support" / "count").read_text() == "0\n"
    with recorder.open(entry_dir, QUICK, "A") as host:
        assert sh(host, "cat support/count").stdout == b"0\n"


def test_file_system_is_read_only_outside_its_places(host: EntryHost) -> None:
    target = Path(tempfile.mkdtemp(prefix="tourney-escape-", dir="/var/tmp"))
    try:
        target.chmod(0o777)  # only the sandbox can stop the write, not permissions
        script = f"for p in {target}/x /etc/x /x /run/x /dev/x; do echo hi > $p || true; done; echo done"
        out = sh(host, script)
        assert out.stdout == b"done\n"
        assert out.stderr_tail.count(b"Read-only file system") >= 4
        assert list(target.iterdir()) == []
    finally:
        os.rmdir(target)


def test_private_places_are_size_capped(recorder: Recorder, entry_dir: Path) -> None:
    limits = Limits(move_wall_s=5.0, file_size_mb=1)  # scratch: 4 x 1 MiB
    with recorder.open(entry_dir, limits, "A") as host:
        out = sh(
            host,
            "for i in 1 2 3 4 5 6; do head -c 1000000 /dev/zero > /tmp/f$i || exit 9; done",
            limits=limits,
        )
        assert out.failure is VerdictKind.CRASH
        assert b"No space left" in out.stderr_tail


def test_no_network_not_even_the_hosts_loopback(host: EntryHost) -> None:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    server.settimeout(0.2)
    port = server.getsockname()[1]
    try:
        probe = f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=1)"
        out = host.run(["python3", "-c", probe], b"", QUICK)
        assert out.failure is VerdictKind.CRASH
        assert b"Connection refused" in out.stderr_tail
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


def test_exit_codes_and_signals_are_crashes(host: EntryHost) -> None:
    out = sh(host, "exit 3")
    assert (out.failure, out.detail, out.exit_code) == (VerdictKind.CRASH, "exit code 3", 3)
    out = sh(host, "kill -SEGV $$")
    assert (out.failure, out.detail, out.signal) == (VerdictKind.CRASH, "signal 11 (SIGSEGV)", 11)


def test_missing_program_is_the_entrys_crash(host: EntryHost) -> None:
    out = host.run(["./no-such-program"], b"", QUICK)
    assert out.failure is VerdictKind.CRASH
    assert b"cannot execute ./no-such-program" in out.stderr_tail


def test_wall_clock_deadline(host: EntryHost) -> None:
    limits = Limits(move_wall_s=0.3)
    t = time.monotonic()
    out = sh(host, "trap '' TERM; sleep 10", limits=limits)
    assert out.failure is VerdictKind.TIMEOUT
    assert out.detail == "wall-clock limit 0.3 s exceeded"
    assert time.monotonic() - t < 0.3 + 1.0
    assert sh(host, "echo alive").stdout == b"alive\n"  # the sandbox goes on


def test_cpu_limit_counts_the_whole_tree(host: EntryHost) -> None:
    """Two busy children: the tree uses CPU twice as fast as the wall clock runs."""
    limits = Limits(move_wall_s=5.0, move_cpu_s=0.4)
    out = host.run(["python3", "-c", "import os\nos.fork()\nwhile True: pass"], b"", limits)
    assert out.failure is VerdictKind.CPU_LIMIT
    assert out.detail.startswith("CPU limit 0.4 s exceeded")
    assert out.cpu_ms >= 400


def test_memory_limit(host: EntryHost) -> None:
    out = host.run(["python3", "-c", "x = bytearray(4 << 30)"], b"", Limits(move_wall_s=5.0, memory_mb=256))
    assert out.failure is VerdictKind.MEMORY_LIMIT
    assert "256 MiB" in out.detail


def test_process_count_limit(host: EntryHost) -> None:
    limits = Limits(move_wall_s=5.0, processes=4)
    script = "for i in 1 2 3 4 5 6 7 8; do sleep 0.5 & done; wait; echo ok"
    out = sh(host, script, limits=limits)
    assert (
        b"fork" in out.stderr_tail.lower() or b"resource temporarily unavailable" in out.stderr_tail.lower()
    )


def test_output_cap(host: EntryHost) -> None:
    out = sh(host, "head -c 10000000 /dev/zero", limits=Limits(move_wall_s=5.0, output_kb=64))
    assert (out.failure, out.detail) == (VerdictKind.BAD_OUTPUT, "output over 64 KiB")
    assert len(out.stdout) == 64 * 1024


def test_left_processes_and_their_end(host: EntryHost, recorder: Recorder) -> None:
    # the move ends once the leftover has become `sleep` (a forked shell may not have exec'd yet)
    became_sleep = "until ps -e -o comm= | grep -qx sleep; do sleep 0.01; done"
    out = sh(host, f"setsid sh -c 'sleep 30 &' ; {became_sleep}; echo move")
    assert out.failure is VerdictKind.LEFT_PROCESSES
    assert "did not kill all its processes" in out.detail and "sleep" in out.detail
    assert out.stdout == b"move\n"
    assert sh(host, "ps -e -o comm= | grep -c sleep || true").stdout == b"0\n"


def test_closing_stdout_does_not_end_the_move(host: EntryHost) -> None:
    out = sh(host, "echo answer; exec >&-; sleep 10", limits=Limits(move_wall_s=0.5))
    assert out.failure is VerdictKind.TIMEOUT


def test_entry_cannot_kill_its_launcher(host: EntryHost) -> None:
    out = sh(host, "kill -9 1; kill -9 -1; echo survived")
    assert out.stdout in (b"survived\n", b"")  # kill -1 may take the shell itself
    assert sh(host, "echo still here").stdout == b"still here\n"


def test_persistent_process(host: EntryHost) -> None:
    script = 'while read line; do [ "$line" = quit ] && exit 4; echo "got $line"; done'
    proc = host.spawn(["sh", "-c", script], QUICK)
    try:
        proc.send("one\ntwo\n")
        assert proc.read_line(2.0) == "got one"
        assert proc.read_line(2.0) == "got two"
        proc.send("quit\n")
        end = proc.read_line(2.0)
        assert not isinstance(end, str)
        assert (end.failure, end.detail) == (VerdictKind.CRASH, "exit code 4")
    finally:
        proc.close()
    assert sh(host, "echo next").stdout == b"next\n"  # the sandbox is free again


def test_a_persistent_entry_that_grows_past_its_memory_mid_move_gets_memory_limit(host: EntryHost) -> None:
    # an engine's first move is cheap, its second grows in steps for longer than the first
    # tree sample's delay (whichever of the sample, the cgroup or the rlimit catches it first)
    grow = "x = []\nwhile True:\n    x.append(bytearray(8 << 20)); time.sleep(0.005)"
    script = f"import sys, time\nprint('ready', flush=True)\nsys.stdin.readline()\n{grow}"
    proc = host.spawn(["python3", "-c", script], Limits(move_wall_s=10.0, memory_mb=128))
    try:
        assert proc.read_line(5.0) == "ready"
        proc.send("go\n")
        end = proc.read_line(10.0)
        assert not isinstance(end, str)
        assert end.failure is VerdictKind.MEMORY_LIMIT, end
    finally:
        proc.close()


def test_persistent_process_timeout_kills_it(host: EntryHost) -> None:
    proc = host.spawn(["sh", "-c", "sleep 30"], QUICK)
    end = proc.read_line(0.2)
    assert not isinstance(end, str) and end.failure is VerdictKind.TIMEOUT
    proc.close()
    assert sh(host, "ps -e -o comm= | grep -c sleep || true").stdout == b"0\n"


def test_a_line_already_in_the_pipe_is_read_with_no_time_left(host: EntryHost) -> None:
    """Issue 35, item 3: a read whose deadline had passed killed the process without looking
    whether its answer was already waiting (an xboard engine's features, read late)."""
    proc = host.spawn(["sh", "-c", "echo ready; read x; echo got $x; sleep 30"], QUICK)
    try:
        time.sleep(1.0)  # the line is written well before it is read
        assert proc.read_line(0.0, pause=False) == "ready"
        # a wait that is no deadline leaves it running
        assert proc.wait_line(0.2) is None
        proc.send("more\n")
        assert proc.read_line(2.0) == "got more"
    finally:
        proc.close()


def test_build_writes_back_into_the_entry(recorder: Recorder, tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "main.c").write_text('#include <stdio.h>\nint main(void){puts("built");return 0;}\n')
    out = recorder.run_build(src, "cc -o a.out main.c && ln -s a.out link", Limits(move_wall_s=60.0))
    assert out.failure is None and out.exit_code == 0
    assert (src / "a.out").is_file() and os.access(src / "a.out", os.X_OK)
    assert (src / "link").is_symlink()


def test_closed_host_refuses_work(recorder: Recorder, entry_dir: Path) -> None:
    host = recorder.open(entry_dir, QUICK, "A")
    host.close()
    host.close()  # idempotent
    with pytest.raises(HostError):
        host.run(["true"], b"", QUICK)


def test_hosts_in_threads(recorder: Recorder, entry_dir: Path) -> None:
    errors: list[BaseException] = []

    def game() -> None:
        try:
            with recorder.open(entry_dir, QUICK, "B") as h:
                for i in range(5):
                    assert (
                        sh(h, f"echo {i} >> /tmp/arena.B; wc -l < /tmp/arena.B").stdout
                        == f"{i + 1}\n".encode()
                    )
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=game) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert errors == []


def test_factory_needs_no_arguments(bwrap_factory: HostFactory) -> None:
    assert BwrapHostFactory().name == "bwrap"


def test_a_sandbox_that_cannot_start_is_a_host_error_with_bwraps_reason(
    bwrap_factory: HostFactory, entry_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from workers.sandbox import bwrap_view

    monkeypatch.setattr(bwrap_view, "system_view", lambda *_: ("--ro-bind", "/no/such/dir", "/usr"))
    with pytest.raises(HostError, match="Can't find source path /no/such/dir"):
        bwrap_factory.open(entry_dir, QUICK, "A")
