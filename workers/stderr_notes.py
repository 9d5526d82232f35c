"""What each entry wrote on stderr during one game, kept for the organiser.

An entry that notices something about itself says so on stderr: the TRYST'98
look-ahead writes a line when its work budget (positions examined) cut its search
below the foresight it was asked to play. Without the runner that line
reaches nobody. So the referee loop passes every per-move run of an entry
through ``RecordingHost``, and ``StderrNotes`` keeps, per entry and game, the
distinct non-empty lines in the order first written, each with how often it
came (capped: ``MAX_LINES`` lines of ``MAX_CHARS``), which land in
``GameRecord.stderr``; ``tourney matches``, ``replay``, the end-of-run
summary and the HTML report show them as warnings.

Recording stderr rather than a new protocol message keeps every protocol and
entry as it is: whatever an entry writes there is its own account of the
game. Persistent processes (gomocup, json) are not recorded: their stderr is
not read line by line by the hosts.
"""

from __future__ import annotations

from dataclasses import replace

from runner.domain.match_values import GameRecord, Limits
from workers.sandbox.base import EntryHost, InteractiveProcess, RunOutcome, WatchedProcess, WrappedHost

#: distinct lines kept per entry per game (the first ones: a cause comes before its echoes)
MAX_LINES = 8
#: a kept line is cut to this many characters
MAX_CHARS = 200


class StderrNotes:
    """The distinct stderr lines of each entry of one game, with their counts."""

    def __init__(self) -> None:
        self._counts: dict[str, dict[str, int]] = {}
        self._dropped: dict[str, int] = {}

    def add(self, entry: str, stderr: bytes) -> None:
        if not stderr:
            return
        counts = self._counts.setdefault(entry, {})
        for raw in stderr.decode("utf-8", errors="replace").splitlines():
            line = raw.strip()[:MAX_CHARS]
            if not line:
                continue
            if line in counts:
                counts[line] += 1
            elif len(counts) < MAX_LINES:
                counts[line] = 1
            else:
                self._dropped[entry] = self._dropped.get(entry, 0) + 1

    def summary(self) -> dict[str, list[str]]:
        """Per entry that wrote anything: its lines, ``(xN)`` after a repeated one."""
        out: dict[str, list[str]] = {}
        for entry, counts in self._counts.items():
            lines = [line if n == 1 else f"{line} (x{n})" for line, n in counts.items()]
            if self._dropped.get(entry):
                lines.append(f"... and {self._dropped[entry]} more line(s)")
            if lines:
                out[entry] = lines
        return out

    def attach(self, record: GameRecord) -> GameRecord:
        """``record`` with what was written during its game."""
        notes = self.summary()
        return replace(record, stderr=notes) if notes else record

    def recording(self, entry: str, host: EntryHost) -> EntryHost:
        """``host``, with the stderr of every run it makes kept under ``entry``."""
        return RecordingHost(host, entry, self)


class RecordingHost(WrappedHost):
    """An ``EntryHost`` that hands each run's stderr to ``StderrNotes`` and otherwise delegates."""

    def __init__(self, inner: EntryHost, entry: str, notes: StderrNotes) -> None:
        super().__init__(inner)
        self.entry = entry
        self.notes = notes
        self._spawned: list[RecordingProcess] = []

    def report_to(self, notes: StderrNotes) -> None:
        """Keep what this host's programs write under ``notes`` from now on: a kept engine's
        host (workers/kept_engines.py) reports to the game it plays now."""
        self.notes = notes
        for proc in self._spawned:
            proc.notes = notes

    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        outcome = self.inner.run(argv, stdin, limits)
        self.notes.add(self.entry, outcome.stderr_tail)
        return outcome

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        proc = RecordingProcess(self.inner.spawn(argv, limits), self.entry, self.notes)
        self._spawned.append(proc)
        return proc


class RecordingProcess(WatchedProcess):
    """A persistent process whose stderr, reported when it ends (an engine's exit after
    ``quit``, a crash), is handed to ``StderrNotes``; otherwise it delegates."""

    def __init__(self, inner: InteractiveProcess, entry: str, notes: StderrNotes) -> None:
        super().__init__(inner)
        self.entry = entry
        self.notes = notes
        self._recorded = False

    def seen(self, line: str | RunOutcome, timeout_s: float) -> None:
        if isinstance(line, RunOutcome) and not self._recorded:
            self._recorded = True  # an ended process reports the same end on every later read
            self.notes.add(self.entry, line.stderr_tail)
