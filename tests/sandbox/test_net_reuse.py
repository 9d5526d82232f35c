"""A reused network namespace is exactly a fresh one, and an entry reaches only
the socket families a game needs (issue 34, items 3 and 4; docs/sandbox.md, "A
game's network namespace", and workers/sandbox/entry_filter.h).

Real sandboxes reused through a real pool: a hostile entry plays an attack in
one game, the same entry's next game (in the same sandbox, and in its network
namespace if the launcher judged it untouched) reads every file of /proc/net,
and that must read as a fresh namespace's /proc/net does."""

from __future__ import annotations

import errno
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.domain.match_values import Limits
from workers.sandbox.base import EntryHost, HostFactory
from workers.sandbox.bwrap import BwrapHostFactory
from workers.sandbox.pool import ReusingHostFactory, SandboxPool

QUICK = Limits(move_wall_s=10.0)

#: every file of /proc/net as this game reads it, as JSON {relative path: text}
DUMP_PROC_NET = r"""
import json, os
out = {}
for root, dirs, files in os.walk("/proc/self/net"):
    for name in files:
        path = os.path.join(root, name)
        try:
            with open(path, "rb") as f:
                out[os.path.relpath(path, "/proc/self/net")] = f.read().decode("latin-1")
        except OSError as e:
            out[os.path.relpath(path, "/proc/self/net")] = "<unreadable: %s>" % e.strerror
print(json.dumps(out))
"""

#: figures in /proc/net that are the machine's, not the namespace's (the same in every
#: namespace at one moment, and moving with whatever else the machine does)
MACHINE_WIDE_FILES = {"softnet_stat", "stat/rt_cache", "stat/arp_cache", "stat/ndisc_cache", "protocols"}


def _normalised(files: dict[str, str]) -> dict[str, str]:
    """A /proc/net reading without what differs between any two fresh namespaces: the
    machine-wide files and figures, and the kernel's own netlink sockets' addresses and
    inode numbers (each namespace has its own, made with it)."""
    out = {}
    for name, text in files.items():
        if name in MACHINE_WIDE_FILES:
            continue
        if name == "sockstat":
            # alloc, mem and orphan count the machine's sockets
            text = "\n".join(
                " ".join(w for i, w in enumerate(line.split()) if not _machine_wide_sockstat(line.split(), i))
                for line in text.splitlines()
            )
        elif name == "netlink":
            lines = text.splitlines()
            text = "\n".join([lines[0], *sorted(" ".join(line.split()[1:-1]) for line in lines[1:])])
        out[name] = text
    return out


def _machine_wide_sockstat(words: list[str], i: int) -> bool:
    if words[i] in ("alloc", "mem", "orphan"):
        return True
    return i > 0 and words[i - 1] in ("alloc", "mem", "orphan")


def read_proc_net(host: EntryHost) -> dict[str, str]:
    out = host.run(["python3", "-c", DUMP_PROC_NET], b"", QUICK)
    assert out.failure is None and out.exit_code == 0, out.stderr_tail
    files: dict[str, str] = json.loads(out.stdout)
    return files


@pytest.fixture
def entry_dir(tmp_path: Path) -> Path:
    d = tmp_path / "entry"
    d.mkdir()
    (d / "attack.py").write_text(ATTACKS)
    return d


@pytest.fixture
def pooled(bwrap_factory: HostFactory) -> Iterator[ReusingHostFactory]:
    assert isinstance(bwrap_factory, BwrapHostFactory)
    factory = ReusingHostFactory(bwrap_factory, SandboxPool(max_idle=2))
    yield factory
    factory.pool.close_all()


#: the attacks, each a function of attack.py run as one move of game 1 (prints what it did);
#: ``read-labels`` is the next game's side of the flow-label carry-over
ATTACKS = r'''
import os, socket, struct, sys

SECRET = b"SECRET42"

def flow_label(label, linger=60):
    """an in6_flowlabel_req asking for (creating) a label shared with our uid"""
    dst = socket.inet_pton(socket.AF_INET6, "::1")
    return dst + struct.pack("!I", label) + struct.pack("=BBHHHI", 0, 3, 1, 0, linger, 0)

def flow_labels():
    """SECRET42 as flow labels (8 bits of the secret and the place in it per label)
    that outlive their socket by the linger"""
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    for i, c in enumerate(SECRET):
        s.setsockopt(41, 32, flow_label(((i + 1) << 8) | c))  # IPV6_FLOWLABEL_MGR
    s.close()

def read_labels():
    """what the last game left in this namespace's flow-label table"""
    found = {}
    with open("/proc/net/ip6_flowlabel") as f:
        for line in f.read().splitlines()[1:]:
            label = int(line.split()[0], 16)
            found[label >> 8] = chr(label & 0xFF)
    print("".join(found[k] for k in sorted(found)))

def flowinfo_send():
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(41, 33, 1)  # IPV6_FLOWINFO_SEND
    s.close()

def route_copies():
    """a connected UDP socket per CPU: each leaves a per-CPU copy of ::1's route (counted in
    rt6_stats and ipv6_route), though no packet is sent"""
    for cpu in sorted(os.sched_getaffinity(0)):
        os.sched_setaffinity(0, {cpu})
        s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
        s.connect(("::1", 9))
        s.close()

def multicast6():
    s = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    s.setsockopt(41, 20, socket.inet_pton(socket.AF_INET6, "ff02::42") + struct.pack("=I", 1))
    s.close()

def multicast4():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(0, 35, socket.inet_aton("224.4.2.42") + socket.inet_aton("127.0.0.1"))
    s.close()

def tcp_time_wait():
    server = socket.create_server(("127.0.0.1", 0))
    client = socket.create_connection(server.getsockname())
    conn, _ = server.accept()
    client.close()
    conn.close()
    server.close()

def unread_udp():
    r = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    r.bind(("::1", 0))
    w = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
    w.sendto(b"x" * 1000, r.getsockname())

def bound_abstract_unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(b"\0tourney-secret42")
    s.listen()

def listening_tcp6():
    s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    s.bind(("::1", 4242))
    s.listen()

def netlink():
    s = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0)
    s.bind((0, 1))  # RTMGRP_LINK
    s.close()

what = sys.argv[1]
try:
    globals()[what.replace("-", "_")]()
    print(what, "ok")
except OSError as e:
    print(what, e.errno)
'''

ATTACK_NAMES = [
    "flow-labels",
    "flowinfo-send",
    "route-copies",
    "multicast6",
    "multicast4",
    "tcp-time-wait",
    "unread-udp",
    "bound-abstract-unix",
    "listening-tcp6",
    "netlink",
]


def test_flow_labels_of_one_game_never_reach_the_next(pooled: ReusingHostFactory, entry_dir: Path) -> None:
    """Game 1 writes SECRET42 as IPv6 flow labels, which outlive their socket by their
    linger and show in no file the reuse check used to read; game 2 of the same entry must
    not read them back. The flow-label manager is refused outright (EPERM: the label table
    is the machine's, so its fill is a channel between live games too)."""
    game1 = pooled.open(entry_dir, QUICK, "X")
    try:
        wrote = game1.run(["python3", "attack.py", "flow-labels"], b"", QUICK)
    finally:
        game1.close()
    game2 = pooled.open(entry_dir, QUICK, "X")
    try:
        read = game2.run(["python3", "attack.py", "read-labels"], b"", QUICK)
    finally:
        game2.close()
    assert pooled.pool.reused == 1  # the same sandbox: the reuse is what is under test
    assert read.exit_code == 0, read.stderr_tail
    assert b"SECRET42" not in read.stdout
    assert read.stdout == b"\nread-labels ok\n"
    assert wrote.stdout == b"flow-labels 1\n"  # EPERM


@pytest.mark.parametrize("attack", ATTACK_NAMES)
def test_after_an_attack_the_next_game_reads_proc_net_as_a_fresh_namespace(
    pooled: ReusingHostFactory, entry_dir: Path, attack: str
) -> None:
    game1 = pooled.open(entry_dir, QUICK, "X")
    try:
        fresh = read_proc_net(game1)  # game 1's namespace is a fresh one
        done = game1.run(["python3", "attack.py", attack], b"", QUICK)
    finally:
        game1.close()
    assert done.exit_code == 0 and done.stdout.startswith(attack.encode()), done.stderr_tail
    game2 = pooled.open(entry_dir, QUICK, "X")
    try:
        after = read_proc_net(game2)
    finally:
        game2.close()
    assert pooled.pool.reused == 1
    assert "ip6_flowlabel" in fresh and "rt6_stats" in fresh  # an IPv6 kernel: the test means something
    before, now = _normalised(fresh), _normalised(after)
    assert {k: v for k, v in now.items() if before.get(k) != v} == {}
    assert now == before


#: socket families: (name, number) refused ones fail with EAFNOSUPPORT, never a kill
REFUSED_FAMILIES = {
    "AF_UNSPEC": 0,
    "AF_AX25": 3,
    "AF_IPX": 4,
    "AF_APPLETALK": 5,
    "AF_NETROM": 6,
    "AF_BRIDGE": 7,
    "AF_X25": 9,
    "AF_ROSE": 11,
    "AF_DECnet": 12,
    "AF_NETBEUI": 13,
    "AF_SECURITY": 14,
    "AF_KEY": 15,
    "AF_NETLINK": 16,
    "AF_PACKET": 17,
    "AF_ECONET": 19,
    "AF_ATMSVC": 20,
    "AF_RDS": 21,
    "AF_IRDA": 23,
    "AF_PPPOX": 24,
    "AF_LLC": 26,
    "AF_IB": 27,
    "AF_MPLS": 28,
    "AF_CAN": 29,
    "AF_TIPC": 30,
    "AF_BLUETOOTH": 31,
    "AF_IUCV": 32,
    "AF_RXRPC": 33,
    "AF_ISDN": 34,
    "AF_PHONET": 35,
    "AF_IEEE802154": 36,
    "AF_CAIF": 37,
    "AF_ALG": 38,
    "AF_NFC": 39,
    "AF_VSOCK": 40,
    "AF_KCM": 41,
    "AF_QIPCRTR": 42,
    "AF_SMC": 43,
    "AF_XDP": 44,
    "AF_MCTP": 45,
    "AF_MAX": 46,
    "negative": -1,
}

#: each refused family through socket() and socketpair(), and the allowed ones working
FAMILY_PROBE = r"""
import ctypes, json, os, socket, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
SYS_SOCKET, SYS_SOCKETPAIR = 41, 53
pair = (ctypes.c_int * 2)()
answers = {}
for name, family in json.loads(sys.argv[1]).items():
    for call, nr, args in (("socket", SYS_SOCKET, ()), ("socketpair", SYS_SOCKETPAIR, (pair,))):
        for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_RAW):
            r = libc.syscall(
                ctypes.c_long(nr), ctypes.c_long(family), ctypes.c_long(kind), ctypes.c_long(0), *args
            )
            if r >= 0:
                answers[f"{name} {call} {kind}"] = "made"
                os.close(r if call == "socket" else pair[0])
                if call == "socketpair":
                    os.close(pair[1])
            else:
                answers[f"{name} {call} {kind}"] = os.strerror(ctypes.get_errno())
# the allowed families, used as a game uses them
a, b = socket.socketpair(socket.AF_UNIX)
a.send(b"u")
server = socket.create_server(("127.0.0.1", 0))
c = socket.create_connection(server.getsockname())
s, _ = server.accept()
c.send(b"4")
server6 = socket.create_server(("::1", 0), family=socket.AF_INET6)
c6 = socket.create_connection(server6.getsockname()[:2])
s6, _ = server6.accept()
c6.send(b"6")
answers["used"] = (b.recv(1) + s.recv(1) + s6.recv(1)).decode()
print(json.dumps(answers))
"""


def test_only_unix_inet_and_inet6_sockets_can_be_made(bwrap_factory: HostFactory, tmp_path: Path) -> None:
    """AF_NETLINK receive queues are charged to no cgroup, AF_VSOCK is not confined by the
    network namespace, and the rest are kernel code no game needs: every family but
    AF_UNIX, AF_INET and AF_INET6 gets EAFNOSUPPORT from socket() and socketpair(), and the
    entry goes on running."""
    with bwrap_factory.open(tmp_path, QUICK, "A") as host:
        out = host.run(["python3", "-c", FAMILY_PROBE, json.dumps(REFUSED_FAMILIES)], b"", QUICK)
    assert out.failure is None and out.exit_code == 0, out.stderr_tail
    answers = json.loads(out.stdout)
    assert answers.pop("used") == "u46"
    not_refused = {key: why for key, why in answers.items() if why != os.strerror(errno.EAFNOSUPPORT)}
    assert not_refused == {}
    assert len(answers) == len(REFUSED_FAMILIES) * 6


def test_the_allowed_families_work_in_every_kind(bwrap_factory: HostFactory, tmp_path: Path) -> None:
    script = (
        "import socket\n"
        "for family in (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6):\n"
        "    for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM):\n"
        "        socket.socket(family, kind).close()\n"
        "for kind in (socket.SOCK_STREAM, socket.SOCK_DGRAM, socket.SOCK_SEQPACKET):\n"
        "    a, b = socket.socketpair(socket.AF_UNIX, kind)\n"
        "    a.send(b'x'); assert b.recv(1) == b'x'\n"
        "print('ok')\n"
    )
    with bwrap_factory.open(tmp_path, QUICK, "A") as host:
        out = host.run(["python3", "-c", script], b"", QUICK)
    assert out.failure is None and out.exit_code == 0, out.stderr_tail
    assert out.stdout == b"ok\n"
