"""The entries' seccomp filter (issue 25, item 3; workers/sandbox/entry_filter.h).

Real sandboxes, real entry processes: a C entry makes the refused system calls
itself (tests/sandbox/fixtures/syscall_probe.c) and reports what each returned;
keyrings are looked at from a second live sandbox, and after a reused
sandbox's reset."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from runner.domain.match_values import Limits
from workers.sandbox.base import HostFactory
from workers.sandbox.bwrap import BwrapHostFactory

PROBE_SOURCE = Path(__file__).resolve().parent / "fixtures" / "syscall_probe.c"
TABLE_SOURCE = Path(__file__).resolve().parent / "fixtures" / "filter_table.c"
SANDBOX_SOURCES = Path(__file__).resolve().parents[2] / "workers" / "sandbox"
CONFIG_DOC = Path(__file__).resolve().parents[2] / "docs" / "config.md"
LIMITS = Limits(move_wall_s=10.0)

#: what the probe's calls return in a sandbox: refused ones EPERM (clone3 ENOSYS,
#: so that the C library falls back to clone), everything a program needs ok
EXPECTED = {
    **dict.fromkeys(
        (
            "add_key",
            "keyctl_get_persistent",
            "request_key",
            "unshare_user",
            "unshare_net",
            "clone_newuser",
            "setns",
            "io_uring_setup",
            "bpf",
            "ptrace_traceme",
            "perf_event_open",
            "userfaultfd",
            "personality_read_implies_exec",
            "process_vm_readv",
            "int80_getpid",
            "x32_getpid",
        ),
        "EPERM",
    ),
    "clone3": "ENOSYS",
    **dict.fromkeys(("personality_query", "personality_no_aslr", "pthread", "fork", "popen"), "ok"),
}


@pytest.fixture(scope="module")
def probe_entry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An entry directory holding the compiled probe."""
    if platform.machine() != "x86_64" or shutil.which("cc") is None:
        pytest.skip("the probe is x86_64's (int 0x80, x32) and needs cc")
    entry = tmp_path_factory.mktemp("probe")
    subprocess.run(
        ["cc", "-O2", "-pthread", "-o", str(entry / "probe"), str(PROBE_SOURCE)],
        check=True,
        capture_output=True,
    )
    return entry


def _answers(stdout: bytes) -> dict[str, str]:
    return dict(line.split(" ", 1) for line in stdout.decode().splitlines())


def test_refused_calls_get_eperm_and_threads_forks_still_work(
    bwrap_factory: HostFactory, probe_entry: Path
) -> None:
    with bwrap_factory.open(probe_entry, LIMITS, "A") as host:
        out = host.run(["./probe"], b"", LIMITS)
    assert out.failure is None and out.exit_code == 0, out
    assert _answers(out.stdout) == EXPECTED


def _keys(stdout: bytes) -> set[str]:
    """Serial and description of each key in a /proc/keys listing.

    Not "the listing is empty": every sandbox runs as the same uid, so another
    worker's sandboxes on this machine (or one of an older launcher) may show
    theirs; what must not show is what ours made."""
    return {f"{line.split()[0]} {line.split()[-2]}" for line in stdout.decode().splitlines()}


def test_no_sandbox_sees_or_reaches_another_sandboxes_keys(
    bwrap_factory: HostFactory, probe_entry: Path
) -> None:
    with bwrap_factory.open(probe_entry, LIMITS, "A") as a, bwrap_factory.open(probe_entry, LIMITS, "B") as b:
        planted = a.run(["./probe", "add-key", "tourney-planted"], b"", LIMITS)
        seen = b.run(["cat", "/proc/keys"], b"", LIMITS)
    assert _answers(planted.stdout) == {"add_key": "EPERM"}
    assert seen.exit_code == 0, seen
    assert b"tourney-planted" not in seen.stdout, seen.stdout.decode()


def test_a_reset_leaves_no_keyring_for_other_sandboxes_to_see(
    bwrap_factory: HostFactory, probe_entry: Path
) -> None:
    # the launcher once cleared the uid's keyrings at reset, which created them
    assert isinstance(bwrap_factory, BwrapHostFactory)
    reused = bwrap_factory.game_sandbox(probe_entry, LIMITS)
    other = bwrap_factory.game_sandbox(probe_entry, LIMITS)
    try:
        before = other.run(["cat", "/proc/keys"], b"", LIMITS)
        reused.begin_reset([])
        reused.end_reset()
        after = other.run(["cat", "/proc/keys"], b"", LIMITS)
    finally:
        reused.close()
        other.close()
    assert before.exit_code == 0 and after.exit_code == 0, after
    assert _keys(after.stdout) - _keys(before.stdout) == set(), after.stdout.decode()


def test_python_threads_and_subprocesses_run_under_the_filter(
    bwrap_factory: HostFactory, tmp_path: Path
) -> None:
    script = (
        "import concurrent.futures, os, subprocess\n"
        "with concurrent.futures.ThreadPoolExecutor(4) as pool:\n"
        "    print(sum(pool.map(lambda n: n * n, range(10))))\n"
        "print(subprocess.run(['echo', 'child'], capture_output=True, text=True).stdout.strip())\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(3)\n"
        "print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]))\n"
        "print(open('/proc/self/status').read().split('Seccomp:')[1].split()[0])\n"
    )
    with bwrap_factory.open(tmp_path, LIMITS, "A") as host:
        out = host.run(["python3", "-c", script], b"", LIMITS)
    assert out.failure is None and out.exit_code == 0, out.stderr_tail
    # 2: SECCOMP_MODE_FILTER
    assert out.stdout.decode().split() == ["285", "child", "3", "2"]


def test_builds_and_persistent_processes_are_filtered(bwrap_factory: HostFactory, tmp_path: Path) -> None:
    entry = tmp_path / "entry"
    entry.mkdir()
    built = bwrap_factory.run_build(entry, "grep ^Seccomp: /proc/self/status > seccomp.txt", Limits())
    assert built.exit_code == 0, built
    assert (entry / "seccomp.txt").read_text().split() == ["Seccomp:", "2"]
    with bwrap_factory.open(entry, LIMITS, "A") as host:
        proc = host.spawn(["sh", "-c", "grep ^Seccomp: /proc/self/status; read line"], LIMITS)
        try:
            assert proc.read_line(5.0) == "Seccomp:\t2"
        finally:
            proc.close()


# -- the program itself, number by number ------------------------------------------------

#: (clone, personality or a socket call, its arguments as filter_table.c prints them) ->
#: what the filter must do with it
ARGUMENT_RULES = {
    ("clone", "268435456"): "eperm",  # CLONE_NEWUSER
    ("clone", str(0x40000000 | 17)): "eperm",  # CLONE_NEWNET | SIGCHLD
    ("clone", str(0x100 | 0x10000 | 0x800)): "allow",  # CLONE_VM | CLONE_THREAD | CLONE_SIGHAND
    ("personality", str(0x0400000)): "eperm",  # READ_IMPLIES_EXEC
    ("personality", str(0xFFFFFFFF)): "allow",  # the query
    ("personality", str(0x0040000)): "allow",  # ADDR_NO_RANDOMIZE
    ("socket", "1"): "allow",  # AF_UNIX
    ("socket", "2"): "allow",  # AF_INET
    ("socket", "10"): "allow",  # AF_INET6
    ("socket", "16"): "eafnosupport",  # AF_NETLINK
    ("socket", "40"): "eafnosupport",  # AF_VSOCK
    ("socketpair", "1"): "allow",
    ("socketpair", "17"): "eafnosupport",  # AF_PACKET
    ("socket", str(0x100000010)): "eafnosupport",  # AF_NETLINK: the kernel reads an int
    ("setsockopt", "3,41,32"): "eperm",  # SOL_IPV6, IPV6_FLOWLABEL_MGR
    ("setsockopt", "3,0,35"): "eperm",  # SOL_IP, IP_ADD_MEMBERSHIP
    ("setsockopt", "3,41,26"): "allow",  # IPV6_V6ONLY
    ("setsockopt", "3,1,32"): "allow",  # SOL_SOCKET's option of the same number
}


@pytest.fixture(scope="module")
def filter_table(tmp_path_factory: pytest.TempPathFactory) -> str:
    """fixtures/filter_table.c's output: the list, and the kernel's answer for every number."""
    if platform.machine() != "x86_64" or shutil.which("cc") is None:
        pytest.skip("the table is x86_64's (int 0x80, x32) and needs cc")
    binary = tmp_path_factory.mktemp("table") / "filter_table"
    subprocess.run(
        ["cc", "-O2", "-I", str(SANDBOX_SOURCES), "-o", str(binary), str(TABLE_SOURCE)],
        check=True,
        capture_output=True,
    )
    done = subprocess.run([str(binary)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout[-500:]
    return done.stdout


def test_the_kernel_refuses_exactly_the_listed_calls(filter_table: str) -> None:
    listed: dict[int, str] = {}
    answers: dict[tuple[int, str], str] = {}
    for line in filter_table.splitlines():
        kind, a, b, *rest = line.split()
        if kind == "list":
            listed[int(a)] = b
        else:
            answers[(int(a), b)] = " ".join(rest)
    numbers = {
        name: nr
        for name, rule in (("clone", "clone"), ("personality", "personality"))
        for nr, r in listed.items()
        if r == rule
    }
    numbers |= {"socket": 41, "socketpair": 53, "setsockopt": 54}  # x86_64's
    assert {nr for nr, rule in listed.items() if rule in ("socket", "sockopt")} == {41, 53, 54}
    # every number with zero arguments: a socket call's family 0 (AF_UNSPEC) is refused
    zero_args = {"refuse": "eperm", "no_such": "enosys", "socket": "eafnosupport"}
    expected = {
        (nr, "0"): zero_args.get(listed.get(nr, ""), "allow") for nr, arg in answers if arg == "0" and nr >= 0
    }
    expected.update({(numbers[name], arg): want for (name, arg), want in ARGUMENT_RULES.items()})
    expected[(0x40000000 | 39, "0")] = "eperm"  # x32 getpid
    expected[(-20, "0")] = "eperm"  # i386 getpid through int 0x80
    assert answers == expected
    assert len(listed) > 60 and sum(1 for a in answers.values() if a == "allow") > 400


def test_the_documented_list_is_the_filters_list() -> None:
    header = (SANDBOX_SOURCES / "entry_filter.h").read_text()
    in_filter = set(re.findall(r"ENTRY_DENY\((\w+)\)", header)) - {"name"}
    doc = CONFIG_DOC.read_text()
    refused = doc[doc.index("* **System calls refused**") : doc.index("* **TCP socket buffers**")]
    # every name in backquotes but the errnos and the calls refused by their arguments
    by_argument = {"clone", "clone3", "personality", "fork", "CLONE_NEW", "0xffffffff"}
    by_argument |= {"PER_LINUX", "PER_LINUX32", "UNAME26", "ADDR_NO_RANDOMIZE"}
    by_argument |= {"socket", "socketpair", "setsockopt", "EAFNOSUPPORT"}
    by_argument |= set(re.findall(r"`((?:AF|IPV6|IP|MCAST)_\w+)`", refused))
    documented = set(re.findall(r"`(\w+)`", refused)) - {"EPERM", "ENOSYS", "errno"} - by_argument
    assert in_filter == documented
