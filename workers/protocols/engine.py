"""The engine protocol base: a persistent game engine on a clock (docs/engines.md).

What every engine protocol shares, whatever it speaks (UCI and xboard now; GTP for Go
would fit the same way): one process per game in the entry's sandbox, or, with ``restart``
off (the default), one per match kept across its games and told of each new one
(``next_game``: UCI ``ucinewgame``, xboard ``new``; docs/engines.md), spoken to over its
raw pipes (``InteractiveProcess``), never through python-chess's asyncio engine layer
(about 30% slower per ply); a handshake with its own deadline; both sides' clocks kept
from the wall time the worker measures around each answer; the engine's last reported
search (score, depth) kept with its move; and a clean ``quit`` at the end.

A subclass says how to greet the engine (``handshake``), how to start a game with an engine
already greeted (``new_game``), how to ask for a move (``ask_move``) and how to read one line
of its answer (``read_answer_line``).

Verdicts, all the engine's: a crash or exit (``crash``/``no_output``), silence past the
handshake deadline or past its clock (``timeout``, with the clock in the detail), output
past ``limits.output_kb`` while thinking on one move (``bad_output``: a flood), text that
is no move (``bad_output``); an illegal move is the match loop's ``illegal_move``.
"""

from __future__ import annotations

import contextlib
import time
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from runner.domain.engine_clock import Clock, EngineSettings
from runner.domain.games.base import Game
from runner.domain.match_values import Limits, SearchInfo, Verdict, VerdictKind
from runner.errors import EntryFault
from workers.protocols.base import MoveReply, Seat
from workers.protocols.common import TextBoardProtocol
from workers.sandbox.base import EntryHost, InteractiveProcess, RunOutcome
from workers.sandbox.classify import one_line, verdict_of

#: how long an engine may take to start and answer its handshake (uciok, readyok, features)
HANDSHAKE_S = 5.0
#: how long an engine may take to leave after ``quit`` before it is killed
QUIT_GRACE_S = 0.5
#: how much CPU an engine may spend getting ready for a game (UCI ``readyok``, xboard ``pong``)
#: off its clock: the rest is charged to its first move, as thinking time (an engine could
#: otherwise search unfrozen while the worker waits; docs/engines.md, "Clocks")
READY_GRACE_MS = 100.0


class Answer:
    """What ``read_answer_line`` makes of one line: nothing yet, a move's text, or a verdict."""


@dataclass(frozen=True)
class MoveText(Answer):
    text: str


@dataclass(frozen=True)
class Refusal(Answer):
    """The engine ended its part of the game itself (resigned, or said something fatal)."""

    kind: VerdictKind
    detail: str


class Failed(EntryFault):
    """A verdict found while speaking to the engine (raised inside, returned at the boundary)."""

    def __init__(self, verdict: Verdict):
        super().__init__(verdict.detail)
        self.verdict = verdict


class EngineProtocol(TextBoardProtocol):
    """A persistent engine on a clock; ``engines`` are every seat's settings, in seat order."""

    def __init__(
        self,
        game: Game[Any, Any],
        host: EntryHost,
        argv: list[str],
        seat: Seat,
        limits: Limits,
        *,
        board_text: str,
        engines: Sequence[dict[str, Any]] = (),
    ):
        super().__init__(game, host, argv, seat, limits, board_text=board_text)
        self.proc: InteractiveProcess | None = None
        self._launched = 0.0  # when ``launch`` started it (monotonic)
        self._ready = False  # its handshake is done: it may play the match's next game
        self._quit_said = False  # told to leave (``say_quit``)
        self._take_seat(seat, board_text, engines)

    def _take_seat(self, seat: Seat, board_text: str, engines: Sequence[dict[str, Any]]) -> None:
        """Everything that belongs to one game: the seat, the start, both clocks."""
        settings = [EngineSettings.from_dict(e) for e in engines] or [EngineSettings()] * seat.players
        self.seat, self.board_text = seat, board_text
        self.settings = settings[seat.index]
        self.clocks = [Clock.start(s) for s in settings]
        self.search: SearchInfo | None = None  # this move's last reported search
        #: ms it held the worker waiting for its game to start past READY_GRACE_MS: charged
        #: to its first move of the game (``held_ready``)
        self.held_ms = 0.0
        self.chatter: list[str] = []  # what it said that was no answer, kept for diagnosis (capped)

    # -- the match loop's side ------------------------------------------------------------
    def launch(self) -> None:
        """Start the engine's process and greet it, without waiting for an answer: the match
        loop launches every seat's engine before it waits for any, so that their starts
        overlap. ``begin`` launches it if this was not called; the handshake's time counts
        from here."""
        if self.proc is not None:
            return
        self.proc = self.host.spawn(self.argv, self.limits)
        self._launched = time.monotonic()
        self.send(self.greeting())

    def begin(self, state: Any) -> Verdict | None:
        self.launch()
        try:
            self.handshake(self._launched + HANDSHAKE_S)
        except Failed as e:
            return e.verdict
        self._ready = True
        self._proc().pause()  # ready: nothing of it runs until its first turn
        return None

    @property
    def reusable(self) -> bool:
        """Whether this engine may play its match's next game in the same process: ``restart``
        off, greeted and still there (a verdict against it closes it first; an engine launched
        for a game decided before its turn to begin was never greeted to the end)."""
        return not self.settings.restart and self.proc is not None and self._ready

    def next_game(self, seat: Seat, board_text: str, engines: Sequence[dict[str, Any]]) -> Verdict | None:
        """Start the match's next game in the engine ``begin`` started (``restart`` off): the new
        seat (colours swap within a pair), start and clocks, then ``new_game`` within the
        handshake's deadline. Only the engine's own state of its own match crosses."""
        self._take_seat(seat, board_text, engines)
        try:
            self.new_game(time.monotonic() + HANDSHAKE_S)
        except Failed as e:
            return e.verdict
        self._proc().pause()
        return None

    def request_move(self, state: Any, history: list[Any]) -> MoveReply:
        proc = self._proc()
        clock = self.clocks[self.seat.index]
        if self.settings.timed:
            allowance_s = clock.allowance_ms() / 1000.0
        else:
            allowance_s = self.settings.untimed_wall_s(self.limits.move_wall_s)
        self.search = None
        cpu_before = proc.cpu_ms
        # the time it held the worker before the game counts as this move's (a timed engine's)
        held_s = self.held_ms / 1000.0 if self.settings.timed else 0.0
        self.held_ms = 0.0
        started = time.monotonic() - held_s
        try:
            with contextlib.suppress(OSError):  # if it has gone, reading says how
                self.ask_move(state, history)
            text = self._read_move(started + allowance_s)
            wall_ms = (time.monotonic() - started) * 1000.0  # its clock stops as its move is read
            proc.pause()  # it answered: nothing of it runs on the opponent's time
        except Failed as e:
            wall_ms = (time.monotonic() - started) * 1000.0
            verdict = e.verdict
            if held_s and verdict.kind is VerdictKind.TIMEOUT:
                verdict = self.verdict(verdict.kind, verdict.detail + _held_note(held_s))
            return MoveReply(None, verdict, wall_ms, max(0.0, proc.cpu_ms - cpu_before))
        cpu_ms = max(0.0, proc.cpu_ms - cpu_before)
        if self.settings.timed and clock.spend(wall_ms)[1]:
            detail = f"flag fell: the move took {wall_ms / 1000.0:.3f} s with {clock.describe()}"
            detail += _held_note(held_s)
            return MoveReply(None, self.verdict(VerdictKind.TIMEOUT, detail), wall_ms, cpu_ms)
        outcome = RunOutcome(text.encode(), b"", 0, None, wall_ms, cpu_ms, 0)
        reply = self.reply_from_line(text, outcome)
        return MoveReply(reply.move, reply.verdict, wall_ms, cpu_ms, self.search)

    def moved(self, seat: int, wall_ms: float) -> None:
        self.clocks[seat] = self.clocks[seat].spend(wall_ms)[0]

    def say_quit(self) -> None:
        """Tell the engine to leave, once; ``end`` waits for it. The match loop tells every
        engine of a game before it waits for any, so that they leave side by side."""
        if self.proc is not None and not self._quit_said:
            self._quit_said = True
            with contextlib.suppress(OSError):
                self.proc.send(self.quit_command())

    def end(self) -> None:
        if self.proc is None:
            return
        self.say_quit()
        deadline = time.monotonic() + QUIT_GRACE_S
        with contextlib.suppress(Exception):  # the game is decided: a slow quit only costs the grace
            while time.monotonic() < deadline:
                if isinstance(self.proc.read_line(deadline - time.monotonic(), pause=False), RunOutcome):
                    break  # it left by itself
        self.proc.close()

    # -- what a protocol defines --------------------------------------------------------------
    @abstractmethod
    def greeting(self) -> str:
        """The first words to a started engine (UCI ``uci``), sent by ``launch``."""

    @abstractmethod
    def handshake(self, deadline: float) -> None:
        """Read the engine's answer to its greeting, set its options and game; raise ``Failed``
        for a verdict."""

    @abstractmethod
    def new_game(self, deadline: float) -> None:
        """Tell a greeted engine a game starts from ``self.board_text`` and wait until it is
        ready (the end of ``handshake``, and all of a kept engine's start); ``Failed`` for a verdict."""

    @abstractmethod
    def ask_move(self, state: Any, history: list[Any]) -> None:
        """Send what makes the engine think on ``state`` (position, clocks, go)."""

    @abstractmethod
    def read_answer_line(self, line: str) -> Answer | None:
        """One line of the engine's output while it thinks: a move, a refusal, or None (search
        info, kept in ``self.search``, or chatter)."""

    def quit_command(self) -> str:
        return "quit\n"

    # -- helpers for subclasses --------------------------------------------------------------
    def _proc(self) -> InteractiveProcess:
        if self.proc is None:
            raise RuntimeError(f"{self.name}: request_move before begin")
        return self.proc

    def read_until(self, deadline: float, waiting_for: str, accept: Any) -> str:
        """Lines until ``accept(line)`` is true (that line is returned); ``Failed`` with a
        ``timeout`` verdict at ``deadline``, or with how the engine ended before it."""
        proc = self._proc()
        while True:
            line = proc.read_line(max(0.0, deadline - time.monotonic()), pause=False)
            if isinstance(line, RunOutcome):
                raise Failed(self._ended(line, waiting_for))
            if accept(line):
                return line
            self.note(line)

    def wait_ready(self, deadline: float, waiting_for: str, accept: Any) -> None:
        """``read_until`` the engine says it is ready for the game (``readyok``, ``pong``), the
        CPU it spent meanwhile past READY_GRACE_MS charged to its first move (``held_ms``):
        asked to be ready, an engine runs unfrozen, and a search then would be thinking off
        its clock. What it computed is charged, not the wall time: on a loaded or throttled
        machine a clear of its hash waits for a core as long as the load says, and a charge
        in wall time made the same engine lose on time there and not on a quiet machine. The
        charge is at most the wall time (threads add CPU faster than the clock runs); an idle
        wait holds only the worker, and ``deadline`` bounds it."""
        proc = self._proc()
        asked, cpu_before = time.monotonic(), proc.cpu_ms
        self.read_until(deadline, waiting_for, accept)
        computed_ms = min(proc.cpu_ms - cpu_before, (time.monotonic() - asked) * 1000.0)
        self.held_ms += max(0.0, computed_ms - READY_GRACE_MS)

    def note(self, line: str) -> None:
        if line.strip() and len(self.chatter) < 50:
            self.chatter.append(one_line(line, 200))

    def _read_move(self, deadline: float) -> str:
        proc = self._proc()
        cap, taken = self.limits.output_kb * 1024, 0
        while True:
            line = proc.read_line(max(0.0, deadline - time.monotonic()), pause=False)
            if isinstance(line, RunOutcome):
                if line.failure is VerdictKind.TIMEOUT:
                    raise Failed(self._timed_out())
                raise Failed(self._ended(line, "its move"))
            taken += len(line) + 1
            if taken > cap:
                detail = f"printed over {self.limits.output_kb} KiB while thinking on one move (output_kb)"
                raise Failed(self.verdict(VerdictKind.BAD_OUTPUT, detail))
            answer = self.read_answer_line(line)
            if isinstance(answer, MoveText):
                return answer.text
            if isinstance(answer, Refusal):
                raise Failed(self.verdict(answer.kind, answer.detail))

    def _timed_out(self) -> Verdict:
        if self.settings.timed:
            clock = self.clocks[self.seat.index]
            return self.verdict(VerdictKind.TIMEOUT, f"flag fell: no move with {clock.describe()}")
        bound = self.settings.untimed_wall_s(self.limits.move_wall_s)
        detail = f"no move within {bound:g} s ({self.settings.describe()}; limits.move_wall_s raises it)"
        return self.verdict(VerdictKind.TIMEOUT, detail)

    def _ended(self, outcome: RunOutcome, waiting_for: str) -> Verdict:
        if outcome.failure is VerdictKind.TIMEOUT:
            return self.verdict(VerdictKind.TIMEOUT, f"no answer while waiting for {waiting_for}")
        verdict = verdict_of(outcome, self.seat.player)
        if verdict is None:
            return self.verdict(VerdictKind.NO_OUTPUT, f"stopped without answering {waiting_for}")
        return verdict

    def send(self, text: str) -> None:
        with contextlib.suppress(OSError):  # if it has gone, the next read says how
            self._proc().send(text)


def _held_note(held_s: float) -> str:
    """What a flag fall's detail adds when the move's time began before the game (``held_ms``)."""
    return f" ({held_s:.3f} s of it before the game, waiting for the engine to be ready)" if held_s else ""


def search_info(cp: int | None, mate: int | None, depth: int | None) -> SearchInfo | None:
    if cp is None and mate is None and depth is None:
        return None
    return SearchInfo(cp, mate, depth)
