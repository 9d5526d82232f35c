"""What an entry process host offers the protocols.

A host is created per entry per game (``HostFactory.open``) and closed at the
end of that game; closing it must leave no process of the entry behind and
delete everything the entry wrote (its private ``/tmp``, its working copy).
Two implementations sit behind this interface:

* ``PlainHost`` (``sandbox: none``): plain subprocesses in their own process
  group with a wall-clock deadline; for trusted entries only.
* ``BwrapHost`` (docs/architecture.md, row 14): one bubblewrap sandbox per entry per game with
  each move exec'd inside it.

Entry misbehaviour is data (``RunOutcome.failure``), never an exception.
``HostError`` means the runner itself failed (charged as ``system_error``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from pathlib import Path

from runner.domain.match_values import Limits, VerdictKind
from runner.errors import RetryElsewhere


class HostError(RetryElsewhere, RuntimeError):
    """The host could not do its job (not the entry's fault)."""


@dataclass(frozen=True)
class RunOutcome:
    """What one run of an entry program did.

    ``failure`` is set when a limit or rule of the host was broken
    (``timeout``, ``cpu_limit``, ``memory_limit``, ``left_processes``,
    ``bad_output`` for an output over the cap, ``crash``); the protocol decides
    about everything else (empty output, unparsable output, ...).
    """

    stdout: bytes
    stderr_tail: bytes
    exit_code: int | None  # None when killed by a signal
    signal: int | None
    wall_ms: float
    cpu_ms: float
    peak_rss_kb: int
    failure: VerdictKind | None = None
    detail: str = ""


def take_line(buf: bytearray) -> str | None:
    """Remove and return the first complete line of ``buf`` (decoded, no EOL), if any.

    Shared by the hosts' interactive processes, which buffer a brain's stdout."""
    i = buf.find(b"\n")
    if i < 0:
        return None
    raw = bytes(buf[:i])
    del buf[: i + 1]
    return raw.decode("utf-8", errors="replace").rstrip("\r")


class InteractiveProcess(ABC):
    """A long-lived entry process spoken to line by line (gomocup)."""

    @abstractmethod
    def send(self, text: str) -> None:
        """Write ``text`` (newline-terminated lines) to the process's stdin."""

    @abstractmethod
    def read_line(self, timeout_s: float, *, pause: bool = True) -> str | RunOutcome:
        """The next stdout line without its newline, or a ``RunOutcome``
        with ``failure`` set when the process died, timed out or broke a limit.

        ``pause``: a host that can stop the process between its turns (bwrap's cgroup
        freezer) does so once a line is read; ``False`` leaves it running, for a process
        whose line is not its whole answer (a chess engine's search info: ``pause()`` once
        its move is read), where a freeze per line would cost time on its clock.

        A line already in the pipe is read before the deadline is enforced: a process whose
        answer is waiting is never stopped for being read late (docs/engines.md)."""

    def wait_line(self, timeout_s: float) -> str | RunOutcome | None:
        """As ``read_line`` (never pausing), but None when no line came within ``timeout_s``,
        the process left running: for a wait that is no deadline (an xboard engine's features,
        which a protocol-1 engine never sends)."""
        raise NotImplementedError(f"{type(self).__name__} cannot wait without a deadline")

    def pause(self) -> None:
        """Stop the process until it is spoken to again, where the host can (see ``read_line``)."""
        return None

    @property
    @abstractmethod
    def cpu_ms(self) -> float:
        """CPU time the process tree has used so far."""

    @abstractmethod
    def close(self) -> None:
        """Kill the process tree (idempotent)."""


class WatchedProcess(InteractiveProcess):
    """A persistent process that delegates everything to ``inner`` and shows each line it
    reads, and each ``RunOutcome`` that ends a read, to ``seen`` (``read_line`` and
    ``wait_line`` alike): what a wrapper that records the process's traffic or its end
    overrides, and nothing else, so a method added to ``InteractiveProcess`` is forwarded once."""

    def __init__(self, inner: InteractiveProcess) -> None:
        self.inner = inner

    def seen(self, line: str | RunOutcome, timeout_s: float) -> None:
        """What a read returned (``timeout_s``: the read's own); nothing by default."""

    def send(self, text: str) -> None:
        self.inner.send(text)

    def read_line(self, timeout_s: float, *, pause: bool = True) -> str | RunOutcome:
        line = self.inner.read_line(timeout_s, pause=pause)
        self.seen(line, timeout_s)
        return line

    def wait_line(self, timeout_s: float) -> str | RunOutcome | None:
        line = self.inner.wait_line(timeout_s)
        if line is not None:
            self.seen(line, timeout_s)
        return line

    def pause(self) -> None:
        self.inner.pause()

    @property
    def cpu_ms(self) -> float:
        return self.inner.cpu_ms

    def close(self) -> None:
        self.inner.close()


class EntryHost(ABC):
    """Runs one entry's programs for the length of one game."""

    #: the entry's private working copy, as the host sees it; the program's cwd
    workdir: Path
    #: whether a literal ``/tmp`` path the entry writes is the machine's own ``/tmp``, seen by
    #: every other game on the machine (``sandbox: none``); a protocol that keeps state at such
    #: a path guards it there (``workers.protocols.arena_lock``)
    shares_machine_tmp: bool = False

    @abstractmethod
    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        """Run ``argv`` to completion with ``stdin``, under ``limits`` (one move)."""

    @abstractmethod
    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        """Start a persistent process (one per game for gomocup)."""

    @abstractmethod
    def close(self) -> None:
        """Kill everything left and delete the game's private files (idempotent)."""

    def __enter__(self) -> EntryHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class WrappedHost(EntryHost):
    """A host that delegates everything to ``inner`` (its working copy, whether it shares the
    machine's /tmp, its runs, spawns and close): what a wrapper that watches a game's programs
    overrides, and nothing else. ``inner`` is also how a caller finds a wrapper under another."""

    def __init__(self, inner: EntryHost) -> None:
        self.inner = inner
        self.workdir = inner.workdir  # fixed for the host's life (one game, or a kept engine's match)
        self.shares_machine_tmp = inner.shares_machine_tmp

    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        return self.inner.run(argv, stdin, limits)

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        return self.inner.spawn(argv, limits)

    def close(self) -> None:
        self.inner.close()


class HostFactory(ABC):
    """Makes hosts. ``entry_dir`` is the built entry (read-only, shared by games)."""

    name: str

    @abstractmethod
    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        """A fresh host with a private copy of ``entry_dir`` for one game."""

    @abstractmethod
    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        """Run an entry's build command (``sh -c``) with ``entry_dir`` itself writable.

        Used once per entry digest by the build cache; same isolation as a move
        otherwise (no network, limits), so a build cannot do what an entry cannot.
        """
