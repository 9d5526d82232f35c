"""Fair timing: a timed match holds a CPU that no other match on this machine uses
(issue 14, item 5).

Seed 003 says "The program will have the entire machine to itself when it
runs", and POTM gives one second per move: an entry's thinking time must not
depend on what else the worker runs. A match whose spec asks for it
(``MatchSpec.exclusive_cores``, from the config's ``timing.exclusive_cores``)
therefore holds one core for as long as it is played, builds included:

* **Slots.** ``runner.domain.timing.core_slots`` (pure) splits the CPUs this process may use
  (``os.sched_getaffinity``: a worker started under ``taskset -c 2-15`` leaves
  cores 0 and 1 to the coordinator and Redis) into disjoint slots of one CPU.
  One CPU per *match*, not per entry: in every protocol the entries of a match
  move in turn (a persistent bwrap entry is frozen between its turns), so two
  of them never think at the same time and one core is all a match can use.
* **Leases across processes.** A slot is held with an exclusive ``flock`` on
  ``<lock dir>/cpu-<n>.lock``. Every worker process of this user on this
  machine shares the lock directory, so however many ``tourney worker``
  processes (or pool processes) run, at most one match per core plays at a
  time: a match that finds every core held waits for one (its heartbeat keeps
  running). The kernel drops a dead process's lock, so a killed worker leaks
  nothing.
* **Pinning.** The thread that plays the match pins itself to the slot's CPU
  (``sched_setaffinity``) before it builds or starts anything; every process
  it starts (bwrap, the launcher, the entry and all its descendants, or a
  ``sandbox: none`` process tree) inherits that affinity, and a sandbox that
  outlives a game to be reused is re-pinned each time a match opens it
  (``PinningHostFactory``). The referee loop runs on the same core, but it
  waits while an entry moves. The thread's former affinity is restored when
  the match ends.

Affinity is not a security boundary: an entry may call ``sched_setaffinity``
itself and leave its core (it then competes with the other matches, as every
entry does without fair timing). The limit that stops an entry from using
more than its share is still ``move_cpu_s``.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import stat
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from runner.domain.match_values import Limits, TimingConditions
from runner.domain.timing import WORKER_CPUS_ENV, core_slots, parse_cpu_list
from runner.errors import UsageError
from workers.sandbox.base import EntryHost, HostError, HostFactory, RunOutcome
from workers.sandbox.sampler import descendants

#: where the machine's core locks live (default: ``$TMPDIR/tourney-cores-<uid>``)
CORES_DIR_ENV = "TOURNEY_CORES_DIR"
#: how many matches the worker runs at once (``tourney worker`` exports it to its pool)
CONCURRENCY_ENV = "TOURNEY_WORKER_CONCURRENCY"
#: how long a match waits for a free core before its attempt is given back
CORE_WAIT_S = 3600.0
#: between two looks for a free core
CORE_POLL_S = 0.02


class NoFreeCore(HostError):
    """Every core of this machine stayed held by other matches for too long."""


def usable_cores() -> frozenset[int]:
    """The CPUs this process may run on (its affinity: taskset, cpuset cgroups)."""
    return frozenset(os.sched_getaffinity(0))


def worker_concurrency() -> int:
    """What ``tourney worker`` said its concurrency is (1 where nobody said: inline, play)."""
    try:
        return max(1, int(os.environ.get(CONCURRENCY_ENV, "1")))
    except ValueError:
        return 1


def cores_dir() -> Path:
    """The lock directory every worker of this user on this machine shares (0700, ours)."""
    configured = os.environ.get(CORES_DIR_ENV)
    path = Path(configured) if configured else Path(tempfile.gettempdir()) / f"tourney-cores-{os.getuid()}"
    with contextlib.suppress(FileExistsError):
        path.mkdir(mode=0o700, parents=True)
    st = os.lstat(path)
    # a directory someone else made (or a link) in a shared /tmp would let them hold our cores
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise HostError(f"core lock directory {path} is not a private directory of ours (${CORES_DIR_ENV})")
    return path


def _try_lock(path: Path) -> int | None:
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        return None
    return fd


@dataclass
class CoreLease:
    """One slot of this machine held by this thread, which is pinned to it."""

    cpus: tuple[int, ...]
    waited_s: float
    _fds: list[int]
    _previous: frozenset[int]

    def release(self) -> None:
        with contextlib.suppress(OSError):
            os.sched_setaffinity(0, self._previous)
        for fd in self._fds:
            os.close(fd)  # closing drops the flock
        self._fds = []


def _take_slot(directory: Path, slot: tuple[int, ...]) -> list[int] | None:
    fds: list[int] = []
    for cpu in slot:
        fd = _try_lock(directory / f"cpu-{cpu}.lock")
        if fd is None:
            for held in fds:
                os.close(held)
            return None
        fds.append(fd)
    return fds


def lease_core(
    *, wait_s: float = CORE_WAIT_S, directory: Path | None = None, usable: Iterable[int] | None = None
) -> CoreLease:
    """Hold a free slot (waiting up to ``wait_s`` for one) and pin this thread to it;
    ``NoFreeCore`` if none came free in time."""
    cpus = frozenset(usable) if usable is not None else usable_cores()
    slots = core_slots(cpus)
    if not slots:
        raise HostError("no usable CPU to hold")
    directory = directory if directory is not None else cores_dir()
    previous = usable_cores()
    start = time.monotonic()
    deadline = start + wait_s
    while True:
        for slot in slots:
            fds = _take_slot(directory, slot)
            if fds is not None:
                try:
                    os.sched_setaffinity(0, set(slot))
                except OSError as e:
                    for fd in fds:
                        os.close(fd)
                    raise HostError(f"cannot pin to CPU {slot}: {e}") from e
                return CoreLease(slot, time.monotonic() - start, fds, previous)
        if time.monotonic() >= deadline:
            raise NoFreeCore(f"no free core among {len(slots)} after {wait_s:.0f}s (other matches hold them)")
        time.sleep(CORE_POLL_S)


def pin_tree(pid: int, cpus: Iterable[int]) -> None:
    """Pin every thread of ``pid`` and of its descendants alive now to ``cpus`` (those
    started later inherit it). Gone processes are skipped: they run nowhere."""
    wanted = set(cpus)
    try:
        root = psutil.Process(pid)
    except psutil.Error:
        return
    below = descendants(root)  # the tree's own /proc entries, not every process on the machine
    if below is None:
        return
    procs = [root, *below]
    for proc in procs:
        with contextlib.suppress(psutil.Error, OSError):
            for thread in proc.threads():
                os.sched_setaffinity(thread.id, wanted)


def runs_on(pid: int, cpus: frozenset[int]) -> bool:
    """Whether ``pid`` is pinned to exactly ``cpus`` (False when it cannot be read).

    Checked before ``pin_tree`` on a host's launcher: a sandbox opened by the same
    match, or kept from a match on the same CPUs (every match without fair timing),
    already runs there, and between games it holds no other process (a reset kills
    them all); so only a sandbox kept from a match on other CPUs, or one whose
    launcher an entry re-pinned, pays for the walk over ``/proc`` (several ms, once
    per seat and game)."""
    try:
        return os.sched_getaffinity(pid) == cpus
    except OSError:
        return False


class PinningHostFactory(HostFactory):
    """Opens hosts through ``inner`` and pins each one's long-lived processes to the CPUs
    of the match: a sandbox kept from an earlier game (a reused bwrap sandbox, whose
    launcher forks every move's entry) was started under another match's affinity, and
    would otherwise run this match's entry on that match's core. Processes a host starts
    from now on inherit the playing thread's affinity anyway."""

    def __init__(self, inner: HostFactory, cpus: Iterable[int]):
        self.inner = inner
        self.cpus = frozenset(cpus)
        self.name = inner.name

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        host = self.inner.open(entry_dir, limits, mark)
        launcher = getattr(host, "launcher_pid", None)
        if isinstance(launcher, int) and not runs_on(launcher, self.cpus):
            pin_tree(launcher, self.cpus)
        return host

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        return self.inner.run_build(entry_dir, command, limits)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)  # what else the inner factory offers (memory_mode, ...)


def on_this_threads_cpus(hosts: HostFactory) -> HostFactory:
    """``hosts`` whose every host runs on the CPUs this thread may use now."""
    return PinningHostFactory(hosts, os.sched_getaffinity(0))


@contextlib.contextmanager
def timed_conditions(exclusive: bool) -> Iterator[TimingConditions]:
    """The conditions a match is played under, held for as long as it is played: with
    ``exclusive`` a core of its own (this thread pinned to it), else the machine shared."""
    cores = len(usable_cores())
    if not exclusive:
        yield TimingConditions(False, [], cores, worker_concurrency())
        return
    lease = lease_core()
    try:
        yield TimingConditions(True, list(lease.cpus), cores, worker_concurrency(), round(lease.waited_s, 3))
    finally:
        lease.release()


def timing_note(concurrency: int) -> str:
    """One line for a worker's start: its cores and what fair timing makes of them."""
    cores = usable_cores()
    slots = len(core_slots(cores))
    note = f"{len(cores)} usable core(s), {concurrency} match(es) at once"
    if concurrency > slots:
        return note + f"; a match asking for an exclusive core waits for one of the {slots}"
    return note + "; a match asking for an exclusive core holds one (waiting if other workers here hold all)"


def pin_to_worker_cpus() -> None:
    """Pin this process to ``$TOURNEY_WORKER_CPUS`` if set (``tourney run`` sets it for its
    local workers with ``timing.reserved_cores``), before any thread or pool process starts."""
    text = os.environ.get(WORKER_CPUS_ENV)
    if not text:
        return
    try:
        os.sched_setaffinity(0, parse_cpu_list(text))
    except (ValueError, OSError) as e:
        raise UsageError(f"cannot pin this worker to CPUs {text!r} (${WORKER_CPUS_ENV}): {e}") from e
