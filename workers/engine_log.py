"""Engine traffic, when asked (``log: engine``; docs/engines.md, "Engine traffic").

A developer chasing a time loss needs every line the worker sent the engine and every line
it read back, each with the moment the worker sent or read it: the clock the worker keeps is
measured between exactly those moments. ``LoggingHost`` wraps a seat's host (as
``workers.stderr_notes.RecordingHost`` does for stderr) and ``LoggingProcess`` its engine's
pipes, so that no protocol changes: each line goes to the game's ``EngineTraffic`` under the
entry's name, ``HH:MM:SS.ffffff > text`` for a line sent, ``<`` for one read, ``!`` for what
the worker saw instead of a line (no line before its deadline, the process's end). A kept
engine (``restart`` off) logs to the game it plays now (``log_to``).

Bounded: per engine per game, the first ``HEAD_BYTES`` (the handshake and options) and the
last ``MAX_BYTES - HEAD_BYTES`` (where a game is lost on time) are kept, with a line saying
how much was left out between them. The text travels back inside the result
(``GameRecord.engine_logs``), so it works the same from a remote worker; the coordinator
writes it to ``logs/engines/`` in the run directory.
"""

from __future__ import annotations

import collections
import dataclasses
import datetime

from runner.domain.match_values import GameRecord, Limits, VerdictKind
from workers.sandbox.base import EntryHost, InteractiveProcess, RunOutcome, WatchedProcess, WrappedHost

#: the most kept per engine per game (a game at 10+0.1 of stockfish is about 100 KiB)
MAX_BYTES = 128 * 1024
#: of which the start of the game (greeting, options, first moves)
HEAD_BYTES = 16 * 1024
#: one line is cut to this many characters
LINE_CHARS = 2000


class _Log:
    """One engine's lines in one game: a head, then a bounded tail."""

    def __init__(self) -> None:
        self.head: list[str] = []
        self.head_bytes = 0
        self.tail: collections.deque[str] = collections.deque()
        self.tail_bytes = 0
        self.dropped_lines = 0
        self.dropped_bytes = 0

    def add(self, line: str) -> None:
        size = len(line) + 1
        if self.head_bytes + size <= HEAD_BYTES and not self.tail:
            self.head.append(line)
            self.head_bytes += size
            return
        self.tail.append(line)
        self.tail_bytes += size
        while self.tail_bytes > MAX_BYTES - HEAD_BYTES and self.tail:
            gone = self.tail.popleft()
            self.tail_bytes -= len(gone) + 1
            self.dropped_lines += 1
            self.dropped_bytes += len(gone) + 1

    def text(self) -> str:
        middle = []
        if self.dropped_lines:
            middle = [f"... {self.dropped_lines} line(s), {self.dropped_bytes} bytes left out (log cap) ..."]
        return "\n".join([*self.head, *middle, *self.tail]) + "\n"


class EngineTraffic:
    """Every logged engine's lines in one game, by entry name."""

    def __init__(self) -> None:
        self._logs: dict[str, _Log] = {}

    def add(self, entry: str, direction: str, text: str) -> None:
        now = datetime.datetime.now(datetime.UTC).strftime("%H:%M:%S.%f")
        self._logs.setdefault(entry, _Log()).add(f"{now} {direction} {text[:LINE_CHARS]}")

    def attach(self, record: GameRecord) -> GameRecord:
        """``record`` with the traffic of its game."""
        if not self._logs:
            return record
        return dataclasses.replace(record, engine_logs={n: log.text() for n, log in self._logs.items()})


def logged(entry: str, host: EntryHost, traffic: EngineTraffic) -> EntryHost:
    """``host`` with every line to and from the processes it spawns kept under ``entry``."""
    return LoggingHost(host, entry, traffic)


def log_to(host: EntryHost, traffic: EngineTraffic) -> None:
    """A kept engine's host (or the host wrapping it) logs to ``traffic`` from now on."""
    while host is not None:
        if isinstance(host, LoggingHost):
            host.log_to(traffic)
            return
        host = getattr(host, "inner", None)  # type: ignore[assignment]


class LoggingHost(WrappedHost):
    """An ``EntryHost`` whose spawned processes log their traffic; otherwise it delegates."""

    def __init__(self, inner: EntryHost, entry: str, traffic: EngineTraffic) -> None:
        super().__init__(inner)
        self.entry = entry
        self.traffic = traffic
        self._spawned: list[LoggingProcess] = []

    def log_to(self, traffic: EngineTraffic) -> None:
        self.traffic = traffic
        for proc in self._spawned:
            proc.traffic = traffic

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        self.traffic.add(self.entry, "!", f"start {' '.join(argv)}")
        proc = LoggingProcess(self.inner.spawn(argv, limits), self.entry, self.traffic)
        self._spawned.append(proc)
        return proc


class LoggingProcess(WatchedProcess):
    """A persistent process whose every line in and out is logged; otherwise it delegates."""

    def __init__(self, inner: InteractiveProcess, entry: str, traffic: EngineTraffic) -> None:
        super().__init__(inner)
        self.entry = entry
        self.traffic = traffic
        self._ended = False

    def send(self, text: str) -> None:
        for line in text.splitlines():
            self.traffic.add(self.entry, ">", line)
        self.inner.send(text)

    def seen(self, line: str | RunOutcome, timeout_s: float) -> None:
        if isinstance(line, str):
            self.traffic.add(self.entry, "<", line)
        elif not self._ended:
            failure = line.failure.value if line.failure is not None else "exit"
            if line.failure is VerdictKind.TIMEOUT:
                self.traffic.add(self.entry, "!", f"no line within {timeout_s:.3f} s")
            else:
                self._ended = True  # an ended process reports the same end on every later read
                self.traffic.add(self.entry, "!", f"ended ({failure}, exit status {line.exit_code})")
