"""Reusing a bubblewrap sandbox for the same entry's next game (issue 13).

Starting a sandbox (bwrap's namespaces and mounts, the launcher, a cgroup,
the entry's working copy) costs many native moves; a worker plays the same
few entries game after game. So when a game ends, its sandbox is not torn
down but *reset* and kept, keyed by what made it: the entry directory and its
contents, the limits (which size its tmpfs and cgroup), and the thread
(``--die-with-parent`` ties a sandbox to the thread that opened it). The next
game of that entry with those limits takes it back.

What a reset guarantees (launcher.c ``do_reset``, ``manage_games``; a test
proves each): no process of the previous game is alive (its PID namespace is
emptied with SIGKILL and reaped), and nothing it could observe is left: the
next game runs in fresh PID, network and IPC namespaces (its PID counter,
loopback's counters, sockets, SysV objects and POSIX message queues start
afresh), /entry, /tmp and /dev/shm are fresh tmpfs (inode numbers too) and
the working copy is put there afresh (no entry can make a kernel key: its seccomp
filter refuses keyctl, add_key, request_key), the cgroup is thawed and its
peak memory and OOM-kill count start again. Whatever fails in a reset closes
that sandbox for good, and the next game gets a new one: a reset never
weakens isolation, it can only save time.

The reset is asynchronous: ``close`` sends it and returns; ``open`` waits
for its answer (by then long done). At most ``MAX_IDLE`` sandboxes are kept;
the least recently used one is closed first (also while their working copies
hold more than ``MAX_IDLE_BYTES``). Idle sandboxes die with their
process (``--die-with-parent``) and are closed at a normal exit.
"""

from __future__ import annotations

import collections
import contextlib
import logging
import threading
from pathlib import Path

from runner.domain.match_values import Limits
from workers.sandbox import plain_reuse
from workers.sandbox.base import EntryHost, HostError, HostFactory, InteractiveProcess, RunOutcome
from workers.sandbox.bwrap import BwrapHostFactory, EntryOverMemory, OverMemoryHost
from workers.sandbox.bwrap_sandbox import Sandbox
from workers.sandbox.launcher import put_messages
from workers.sandbox.per_process import PerProcess
from workers.sandbox.tree import tree_signature
from workers.warm import switches

log = logging.getLogger(__name__)

#: idle sandboxes kept per process (each holds a few processes, its entry's copy and a cgroup)
MAX_IDLE = 16
#: and at most this many bytes of working copies in them (each copy lives in memory, in a tmpfs)
MAX_IDLE_BYTES = 256 << 20
#: an entry whose working copy is larger than this is read from disk at each reset, not kept in memory
PAYLOAD_CACHE_BYTES = 8 << 20

#: (entry dir, its contents' signature, limits, thread)
PoolKey = tuple[str, tuple[tuple[str, int, int, int], ...], Limits, int]


def reuse_enabled() -> bool:
    """``TOURNEY_SANDBOX_REUSE=0`` turns reuse off: every game a new sandbox (``workers.warm``)."""
    return switches().sandbox_reuse


class SandboxPool:
    """Idle, reset sandboxes by key, least recently used first out."""

    def __init__(self, max_idle: int = MAX_IDLE, max_idle_bytes: int = MAX_IDLE_BYTES) -> None:
        self.max_idle = max_idle
        self.max_idle_bytes = max_idle_bytes
        #: by id(sandbox): its key, the sandbox, the bytes of its working copy
        self._idle: collections.OrderedDict[int, tuple[PoolKey, Sandbox, int]] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._payloads: dict[PoolKey, list[bytes]] = {}
        #: games that got a reused sandbox, and ones that needed a new one (for benchmarks and tests)
        self.reused = 0
        self.created = 0

    def payloads(self, key: PoolKey, entry_dir: Path) -> list[bytes]:
        """The PUT messages of the entry's working copy (kept in memory when small)."""
        with self._lock:
            cached = self._payloads.get(key)
        if cached is not None:
            return cached
        messages = list(put_messages(entry_dir))
        if sum(len(m) for m in messages) <= PAYLOAD_CACHE_BYTES:
            with self._lock:
                self._payloads[key] = messages
        return messages

    def take(self, key: PoolKey) -> Sandbox | None:
        """A reset sandbox for ``key``, or None; a sandbox whose reset failed is closed."""
        while True:
            with self._lock:
                ident = next((i for i, (k, _, _) in self._idle.items() if k == key), None)
                if ident is None:
                    return None
                _, sandbox, _ = self._idle.pop(ident)
            try:
                sandbox.end_reset()
                if not sandbox.launcher_alive():
                    raise HostError("its launcher died after answering")
                self.reused += 1
                return sandbox
            except HostError as e:
                log.warning("a reused sandbox failed its reset (%s); starting a new one", e)
                sandbox.close()

    def give(self, key: PoolKey, sandbox: Sandbox, payloads: list[bytes]) -> None:
        """Reset ``sandbox`` (asynchronously) and keep it for ``key``; close it if it cannot be."""
        size = sum(len(p) for p in payloads)
        if sandbox.closed or size > self.max_idle_bytes:
            sandbox.close()  # a working copy this large is not worth keeping in memory
            return
        try:
            sandbox.begin_reset(payloads)
        except HostError:
            sandbox.close()
            return
        evicted: list[Sandbox] = []
        with self._lock:
            self._idle[id(sandbox)] = (key, sandbox, size)
            while (
                len(self._idle) > self.max_idle
                or sum(n for _, _, n in self._idle.values()) > self.max_idle_bytes
            ):
                _, (old_key, old, _) = self._idle.popitem(last=False)
                evicted.append(old)
                if not any(k == old_key for k, _, _ in self._idle.values()):
                    self._payloads.pop(old_key, None)
        for old in evicted:
            old.close()

    def close_all(self) -> None:
        """Close every idle sandbox (from the thread that opened them, or at exit)."""
        with self._lock:
            idle = [s for _, s, _ in self._idle.values()]
            self._idle.clear()
            self._payloads.clear()
        for sandbox in idle:
            with contextlib.suppress(Exception):
                sandbox.close()

    def idle_sandboxes(self) -> list[Sandbox]:
        with self._lock:
            return [s for _, s, _ in self._idle.values()]

    def __len__(self) -> int:
        return len(self._idle)


class PooledHost(EntryHost):
    """One entry for one game in a sandbox that goes back to the pool when the game ends."""

    def __init__(self, sandbox: Sandbox, pool: SandboxPool, key: PoolKey, payloads: list[bytes]):
        self._sandbox: Sandbox | None = sandbox
        self._pool = pool
        self._key = key
        self._payloads = payloads
        self.launcher_pid = sandbox.pid

    @property
    def workdir(self) -> Path:  # type: ignore[override]  # read-only here: never assigned
        """Looked up when asked (the current game's init): not on every game's way in."""
        return self._live().workdir

    def _live(self) -> Sandbox:
        if self._sandbox is None:
            raise HostError("sandbox already closed")
        return self._sandbox

    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        return self._live().run(argv, stdin, limits)

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        return self._live().spawn(argv, limits)

    def close(self) -> None:
        sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            self._pool.give(self._key, sandbox, self._payloads)


class ReusingHostFactory(HostFactory):
    """Bubblewrap hosts whose sandboxes are reset and reused across games (module doc)."""

    name = "bwrap"

    def __init__(self, inner: BwrapHostFactory, pool: SandboxPool | None = None) -> None:
        self.inner = inner
        self.pool = pool if pool is not None else SandboxPool()

    @property
    def memory_mode(self) -> str:
        return self.inner.memory_mode

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        key: PoolKey = (str(entry_dir), tree_signature(entry_dir), limits, threading.get_ident())
        sandbox = self.pool.take(key)
        if sandbox is None:
            try:
                sandbox = self.inner.game_sandbox(entry_dir, limits)
            except EntryOverMemory as why:
                return OverMemoryHost(why, entry_dir)
            self.pool.created += 1
        try:
            payloads = self.pool.payloads(key, entry_dir)
        except BaseException:
            sandbox.close()
            raise
        return PooledHost(sandbox, self.pool, key, payloads)

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        return self.inner.run_build(entry_dir, command, limits)


_shared = PerProcess(lambda: ReusingHostFactory(BwrapHostFactory()), lambda factory: factory.pool.close_all())


def shared_reusing_factory() -> ReusingHostFactory:
    """This process's one reusing bwrap factory (its pool outlives each match; a forked
    child gets its own: its parent's sandboxes are not its to use)."""
    return _shared.get()


def close_idle_sandboxes() -> None:
    """Close this process's kept sandboxes, and remove the game directories kept by
    ``sandbox: none`` (``workers.sandbox.plain_reuse``): a worker's pool process on its way out."""
    _shared.close_mine()
    plain_reuse.shared.close_mine()
