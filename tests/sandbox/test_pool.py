"""Sandboxes reused across games (``workers.sandbox.pool``): the next game of the
same entry gets the same sandbox (same launcher, same namespaces), and sees
nothing of the previous game: no file, no process, no IPC object, no memory peak."""

from __future__ import annotations

import contextlib
import os
import select
import time
from collections.abc import Iterator
from pathlib import Path

import psutil
import pytest

from runner.domain.match_values import Limits, VerdictKind
from workers.sandbox.base import EntryHost, HostError, HostFactory, RunOutcome
from workers.sandbox.bwrap import BwrapHostFactory
from workers.sandbox.pool import PooledHost, ReusingHostFactory, SandboxPool

from .conftest import pid_namespace, pid_namespaces

QUICK = Limits(move_wall_s=5.0)
#: SysV shared memory segments, message queues and semaphore sets in the sandbox
IPC_OBJECTS = "cat /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem | grep -c '^ *[0-9-]' || true"


def sh(host: EntryHost, script: str, limits: Limits = QUICK) -> RunOutcome:
    return host.run(["sh", "-c", script], b"", limits)


@pytest.fixture
def entry_dir(tmp_path: Path) -> Path:
    d = tmp_path / "entry"
    d.mkdir()
    (d / "prog.sh").write_text("#!/bin/sh\necho hello\n")
    (d / "prog.sh").chmod(0o755)
    (d / "support").mkdir()
    (d / "support" / "count").write_text("0\n")
    return d


@pytest.fixture
def pooled(bwrap_factory: HostFactory) -> Iterator[ReusingHostFactory]:
    """A reusing factory with a pool of its own; at the end every sandbox it kept is
    closed, and no process of any of them may be left."""
    assert isinstance(bwrap_factory, BwrapHostFactory)
    factory = ReusingHostFactory(bwrap_factory, SandboxPool(max_idle=4))
    launchers: list[tuple[int, float, str]] = []
    hosts: list[PooledHost] = []
    real_open = factory.open

    def open_and_note(entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        host = real_open(entry_dir, limits, mark)
        assert isinstance(host, PooledHost)
        hosts.append(host)
        pid = host.launcher_pid
        launchers.append((pid, psutil.Process(pid).create_time(), pid_namespace(pid)))
        return host

    factory.open = open_and_note  # type: ignore[method-assign]
    yield factory
    for host in hosts:  # a failed test may have left a host open: close its sandbox for good
        if host._sandbox is not None:
            host._sandbox.close()
    factory.pool.close_all()
    deadline = time.monotonic() + 5.0
    while time.monotonic() < deadline:
        left = [p for p in psutil.process_iter(["pid", "create_time"]) if _inside(p, launchers)]
        if not left:
            break
        time.sleep(0.05)
    assert left == []


def _inside(p: psutil.Process, launchers: list[tuple[int, float, str]]) -> bool:
    try:
        chain = pid_namespaces(p.pid)
    except OSError:
        return False
    return any(n in chain and p.info["create_time"] >= born - 1 for _, born, n in launchers)


def test_the_next_game_reuses_the_sandbox(pooled: ReusingHostFactory, entry_dir: Path) -> None:
    first = pooled.open(entry_dir, QUICK, "X")
    pid = first.launcher_pid  # type: ignore[attr-defined]
    assert sh(first, "./prog.sh").stdout == b"hello\n"
    first.close()
    second = pooled.open(entry_dir, QUICK, "O")
    try:
        assert second.launcher_pid == pid  # type: ignore[attr-defined]
        assert (pooled.pool.created, pooled.pool.reused) == (1, 1)
        assert sh(second, "./prog.sh").stdout == b"hello\n"
    finally:
        second.close()


def test_a_reused_sandbox_shows_nothing_of_the_previous_game(
    pooled: ReusingHostFactory, entry_dir: Path
) -> None:
    game1 = pooled.open(entry_dir, QUICK, "X")
    pid = game1.launcher_pid  # type: ignore[attr-defined]
    leave = (
        "echo secret > /tmp/arena.X; mkdir -p /tmp/deep/er; echo s > /tmp/deep/er/f; chmod 000 /tmp/deep; "
        "echo shm > /dev/shm/seg; echo 99 > support/count; echo new > notes; rm prog.sh; "
        "mkdir locked; touch locked/f; chmod 500 locked; ln -s /etc/passwd link; "
        "ipcmk -M 4096 >/dev/null; ipcmk -Q >/dev/null; ipcmk -S 1 >/dev/null; echo done"
    )
    assert sh(game1, leave).stdout == b"done\n"
    assert sh(game1, IPC_OBJECTS).stdout == b"3\n"  # what game 2 must not see
    daemon = game1.spawn(["sleep", "300"], QUICK)  # a process still running when the game ends
    assert isinstance(daemon.cpu_ms, float)
    game1.close()

    game2 = pooled.open(entry_dir, QUICK, "X")
    try:
        assert game2.launcher_pid == pid  # type: ignore[attr-defined]
        files = sh(game2, "cd / && find /entry /tmp /dev/shm | sort").stdout.decode().split()
        assert files == [
            "/dev/shm",
            "/entry",
            "/entry/prog.sh",
            "/entry/support",
            "/entry/support/count",
            "/tmp",
        ]
        assert sh(game2, "cat support/count").stdout == b"0\n"  # the working copy is fresh
        assert sh(game2, IPC_OBJECTS).stdout == b"0\n"
        # ps first, then sort: in a pipe, sort's shell may not have become sort yet when ps looks
        procs = sh(game2, "ps -e -o comm= > /tmp/procs; sort /tmp/procs").stdout.decode().split()
        assert procs == ["launcher", "ps", "sh"]
        # no POSIX message queue can outlive a game (none can be made)
        assert sh(game2, "grep -i 'msgqueue' /proc/self/limits | awk '{print $4, $5}'").stdout == b"0 0\n"
    finally:
        game2.close()


def test_an_entry_cannot_keep_a_process_past_its_game(pooled: ReusingHostFactory, entry_dir: Path) -> None:
    game1 = pooled.open(entry_dir, QUICK, "X")
    proc = game1.spawn(["sh", "-c", "sleep 300 & sleep 300 & echo up; wait"], QUICK)
    assert proc.read_line(5.0) == "up"
    launcher = psutil.Process(game1.launcher_pid)  # type: ignore[attr-defined]
    # the launcher's own children are its game inits (this game's and the next's)
    below = launcher.children(recursive=True)
    entry_procs = [(p.pid, p.create_time()) for p in below if p.ppid() != launcher.pid]
    assert len(entry_procs) == 3  # sh and its two sleeps
    game1.close()
    game2 = pooled.open(entry_dir, QUICK, "X")
    try:
        assert game2.launcher_pid == launcher.pid  # type: ignore[attr-defined]
        for pid, born in entry_procs:
            with contextlib.suppress(psutil.NoSuchProcess):
                assert psutil.Process(pid).create_time() != born, f"process {pid} of the last game lives"
    finally:
        game2.close()


def test_verdicts_are_the_same_in_a_reused_sandbox(pooled: ReusingHostFactory, entry_dir: Path) -> None:
    limits = Limits(move_wall_s=2.0, move_cpu_s=0.2)  # a CPU limit well below the wall, on a loaded machine
    # a move that sleeps far past it reaches any wall limit: a short one is as sure and waits less
    short_wall = Limits(move_wall_s=0.5, move_cpu_s=0.2)
    for _ in range(2):  # the second time in the same sandbox
        host = pooled.open(entry_dir, limits, "X")
        try:
            assert sh(host, "sleep 10", short_wall).failure is VerdictKind.TIMEOUT
            assert sh(host, "while :; do :; done", limits).failure is VerdictKind.CPU_LIMIT
            assert sh(host, "sleep 5 & echo started", limits).failure is VerdictKind.LEFT_PROCESSES
            assert sh(host, "exit 3", limits).failure is VerdictKind.CRASH
            assert sh(host, "echo fine", limits).failure is None
        finally:
            host.close()
    assert pooled.pool.reused == 1


def test_peak_memory_starts_again(pooled: ReusingHostFactory, entry_dir: Path) -> None:
    limits = Limits(move_wall_s=10.0, memory_mb=512)
    game1 = pooled.open(entry_dir, limits, "X")
    assert isinstance(game1, PooledHost)
    cgroup = game1._sandbox.cgroup if game1._sandbox is not None else None
    if cgroup is None:
        game1.close()
        pytest.skip("no cgroup on this machine (memory: rlimit only)")
    grab = "python3 -c \"b = bytearray(150 << 20); b[::4096] = b'x' * len(b[::4096]); print('ok')\""
    assert sh(game1, grab, limits).stdout == b"ok\n"
    assert cgroup.usage().peak_memory_bytes >= 150 << 20
    game1.close()
    game2 = pooled.open(entry_dir, limits, "X")
    try:
        assert isinstance(game2, PooledHost) and game2._sandbox is not None
        assert game2._sandbox.cgroup is cgroup
        if cgroup.version == "cgroup v2" and not os.path.exists(f"{getattr(cgroup, 'path', '')}/memory.peak"):
            pytest.skip("this kernel cannot reset a cgroup v2 peak")
        assert cgroup.usage().peak_memory_bytes < 100 << 20
    finally:
        game2.close()


def test_other_limits_or_changed_files_get_another_sandbox(
    pooled: ReusingHostFactory, entry_dir: Path
) -> None:
    host = pooled.open(entry_dir, QUICK, "X")
    first = host.launcher_pid  # type: ignore[attr-defined]
    host.close()
    other = pooled.open(entry_dir, Limits(move_wall_s=3.0), "X")
    assert other.launcher_pid != first  # type: ignore[attr-defined]
    other.close()
    (entry_dir / "prog.sh").write_text("#!/bin/sh\necho changed\n")
    changed = pooled.open(entry_dir, QUICK, "X")
    try:
        assert changed.launcher_pid != first  # type: ignore[attr-defined]
        assert sh(changed, "./prog.sh").stdout == b"changed\n"
    finally:
        changed.close()


def _wait_until_dead(pid: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if psutil.Process(pid).status() == psutil.STATUS_ZOMBIE:
                return
        except psutil.NoSuchProcess:
            return
        time.sleep(0.01)
    raise AssertionError(f"process {pid} still runs {timeout_s} s after SIGKILL")


def test_a_sandbox_that_died_idle_is_replaced(pooled: ReusingHostFactory, entry_dir: Path) -> None:
    host = pooled.open(entry_dir, QUICK, "X")
    pid = host.launcher_pid  # type: ignore[attr-defined]
    host.close()
    (idle,) = pooled.pool.idle_sandboxes()
    # the launcher dies after its reset answered, while its sandbox waits in the pool (the
    # answer waits in the socket: taking the sandbox must not trust it), and is gone for good
    # before the next game asks (a signal is delivered some time after kill() returns)
    assert select.select([idle.channel.sock], [], [], 10.0)[0], "no answer to the reset"
    os.kill(pid, 9)
    _wait_until_dead(pid)
    again = pooled.open(entry_dir, QUICK, "X")
    try:
        assert again.launcher_pid != pid  # type: ignore[attr-defined]
        assert sh(again, "./prog.sh").stdout == b"hello\n"
    finally:
        again.close()


def test_a_closed_pooled_host_refuses_work(pooled: ReusingHostFactory, entry_dir: Path) -> None:
    host = pooled.open(entry_dir, QUICK, "X")
    host.close()
    host.close()  # idempotent
    with pytest.raises(HostError):
        host.run(["true"], b"", QUICK)


def test_the_pool_keeps_at_most_max_idle(pooled: ReusingHostFactory, tmp_path: Path) -> None:
    hosts = []
    for i in range(6):
        d = tmp_path / f"e{i}"
        d.mkdir()
        (d / "f").write_text(str(i))
        hosts.append(pooled.open(d, QUICK, "X"))
    for h in hosts:
        h.close()
    assert len(pooled.pool) == 4


def test_the_pool_keeps_at_most_max_idle_bytes_of_working_copies(
    pooled: ReusingHostFactory, tmp_path: Path
) -> None:
    pooled.pool.max_idle_bytes = 300_000
    hosts = []
    for i, size in enumerate((100_000, 100_000, 100_000, 400_000)):
        d = tmp_path / f"e{i}"
        d.mkdir()
        (d / "blob").write_bytes(b"x" * size)
        hosts.append(pooled.open(d, QUICK, "X"))
    for h in hosts:
        h.close()
    # the 400 kB one is never kept; of the others, the oldest goes to stay under 300 kB
    assert len(pooled.pool) == 2


#: game 1's traffic: a loopback TCP connection the client closes first (its socket stays in
#: TIME_WAIT for a minute), and a UDP datagram
LOOPBACK_TRAFFIC = """
import socket
server = socket.create_server(("127.0.0.1", 0))
client = socket.create_connection(server.getsockname())
conn, _ = server.accept()
client.close()
conn.close()
server.close()
udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
udp.sendto(b"x", ("127.0.0.1", 9))
print("sent")
"""
#: what a game can read of its PID, network and IPC namespaces and its scratch tmpfs: its
#: shell's pid, loopback's received packets, TCP connections opened, sockets in /proc/net/tcp
#: (TIME_WAIT included), SysV objects, the inode number a new file in /tmp, /dev/shm and
#: /entry gets
NAMESPACE_STATE = (
    "echo pid $$; "
    'awk \'$1 == "lo:" {print "lo_rx_packets", $3}\' /proc/net/dev; '
    'awk \'$1 == "Tcp:" && $6 ~ /^[0-9]+$/ {print "tcp_active_opens", $6}\' /proc/net/snmp; '
    "echo tcp_sockets $(tail -n +2 /proc/net/tcp | wc -l); "
    "echo sysv $(cat /proc/sysvipc/shm /proc/sysvipc/msg /proc/sysvipc/sem | grep -c '^ *[0-9-]'); "
    "for d in /tmp /dev/shm /entry; do "
    "touch $d/.probe; echo inode$d $(stat -c %i $d/.probe); rm $d/.probe; done"
)


def namespace_state(host: EntryHost) -> dict[str, int]:
    out = sh(host, NAMESPACE_STATE)
    assert out.failure is None, out.detail
    return {k: int(v) for k, v in (line.split() for line in out.stdout.decode().splitlines())}


def test_each_game_gets_fresh_pid_network_and_ipc_namespaces(
    pooled: ReusingHostFactory, entry_dir: Path
) -> None:
    """Issue 25 item 4: the PID counter, loopback's counters, TIME_WAIT sockets, SysV ids and
    the inode counters of /tmp, /dev/shm and /entry of game 1 are not there in game 2 of the
    same reused sandbox."""
    game1 = pooled.open(entry_dir, QUICK, "X")
    pid = game1.launcher_pid  # type: ignore[attr-defined]
    fresh = namespace_state(game1)
    assert {k: v for k, v in fresh.items() if not k.startswith("inode")} == {
        "pid": 2, "lo_rx_packets": 0, "tcp_active_opens": 0, "tcp_sockets": 0, "sysv": 0,
    }  # fmt: skip
    many_files = (
        "for d in /tmp /dev/shm /entry; do for i in $(seq 40); do touch $d/f$i; done; done; echo made"
    )
    assert sh(game1, many_files).stdout == b"made\n"
    assert sh(game1, "for i in $(seq 50); do /bin/true; done; echo forked").stdout == b"forked\n"
    assert game1.run(["python3", "-c", LOOPBACK_TRAFFIC], b"", QUICK).stdout == b"sent\n"
    made = sh(game1, "ipcmk -M 4096 >/dev/null; ipcmk -Q >/dev/null; ipcmk -S 1 >/dev/null; echo made")
    assert made.stdout == b"made\n"
    used = namespace_state(game1)  # what game 2 must not see
    assert used["pid"] > 50 and used["lo_rx_packets"] > 0 and used["tcp_active_opens"] == 1
    assert used["tcp_sockets"] >= 1 and used["sysv"] == 3  # the client's TIME_WAIT socket
    assert all(used[f"inode{d}"] > fresh[f"inode{d}"] + 40 for d in ("/tmp", "/dev/shm", "/entry"))
    game1.close()

    game2 = pooled.open(entry_dir, QUICK, "X")
    try:
        assert game2.launcher_pid == pid  # type: ignore[attr-defined]
        assert namespace_state(game2) == fresh
        # its /proc shows its own game's processes only: its init (the launcher) and this move's
        procs = sh(game2, "ps -e -o pid=,comm= > /tmp/procs; cat /tmp/procs").stdout.decode().split()
        assert procs[:2] == ["1", "launcher"] and sorted(procs[3::2]) == ["ps", "sh"]
    finally:
        game2.close()


def net_namespace(host: EntryHost) -> str:
    """The network namespace of the current game's init, read from the host (an entry
    has no earlier game's to compare it with: nothing of a game survives into the next)."""
    game_init = host.workdir.parts[2]  # /proc/<game's init>/root/entry
    return os.readlink(f"/proc/{game_init}/ns/net")


def test_a_network_namespace_nobody_used_goes_on_to_the_next_game_a_used_one_never(
    pooled: ReusingHostFactory, entry_dir: Path
) -> None:
    """A game whose network namespace still reads as a fresh one hands it on to the next
    game (no namespace made and torn down for nothing), which sees it exactly as fresh; one
    whose entry used loopback is replaced by a fresh one."""
    game1 = pooled.open(entry_dir, QUICK, "X")
    fresh = namespace_state(game1)
    untouched = net_namespace(game1)
    # processes, pipes, files and a unix socket pair: nothing a network namespace counts
    quiet = sh(game1, "for i in $(seq 20); do echo $i | cat >/dev/null; done; echo quiet")
    assert quiet.stdout == b"quiet\n"
    pair = "import socket; a, b = socket.socketpair(); a.send(b'x'); print(b.recv(1).decode())"
    assert game1.run(["python3", "-c", pair], b"", QUICK).stdout == b"x\n"
    game1.close()

    game2 = pooled.open(entry_dir, QUICK, "X")
    assert net_namespace(game2) == untouched
    assert namespace_state(game2) == fresh
    assert game2.run(["python3", "-c", LOOPBACK_TRAFFIC], b"", QUICK).stdout == b"sent\n"
    game2.close()

    game3 = pooled.open(entry_dir, QUICK, "X")
    try:
        assert net_namespace(game3) != untouched
        assert namespace_state(game3) == fresh  # no counter, no TIME_WAIT socket of game 2
    finally:
        game3.close()
