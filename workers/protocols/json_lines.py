"""The generic ``json`` protocol (docs/games.md): any game, one process per game.

The runner writes one JSON object per line on the entry's stdin:

    {"type": "start", "seat": 0, "mark": "X", "players": 2, "board": "<board text>"}
    {"type": "turn", "position": "<position_text>", "history": ["<move>", ...]}
    {"type": "end"}

``start`` once before anything else (no answer expected), ``turn`` on each
of the entry's turns (``history`` is every move so far, as ``format_move``
writes it), ``end`` when the game is over (the process is then closed). The
entry answers each turn with one line ``{"move": "<move text>"}``. Blank
lines are skipped; anything else that is not such an object is
``bad_output``.

Time: each answer gets ``move_wall_s``; with ``game_wall_s`` set, the
entry's total thinking time in the game is also bounded by it. ``start``
has no answer, so the first turn's time also covers the process starting
(a gomocup brain gets a separate allowance to answer START; here there is
nothing to wait for until the first turn). The process lives in one sandbox
for the whole game, exactly like a gomocup brain.
"""

from __future__ import annotations

import contextlib
import json
import time
from typing import Any, ClassVar

from runner.domain.games.base import Game
from runner.domain.match_values import Limits, Verdict, VerdictKind
from workers.protocols.base import MoveReply, Seat
from workers.protocols.common import TextBoardProtocol
from workers.sandbox.base import EntryHost, InteractiveProcess, RunOutcome
from workers.sandbox.classify import one_line, verdict_of


class JsonProtocol(TextBoardProtocol):
    name: ClassVar[str] = "json"

    def __init__(
        self,
        game: Game[Any, Any],
        host: EntryHost,
        argv: list[str],
        seat: Seat,
        limits: Limits,
        *,
        board_text: str,
    ):
        super().__init__(game, host, argv, seat, limits, board_text=board_text)
        self.proc: InteractiveProcess | None = None
        self._thinking_s = 0.0  # total answer time, against game_wall_s

    def begin(self, state: Any) -> Verdict | None:
        self.proc = self.host.spawn(self.argv, self.limits)
        start = {
            "type": "start",
            "seat": self.seat.index,
            "mark": self.seat.mark,
            "players": self.seat.players,
            "board": self.board_text,
        }
        try:
            self.proc.send(_line(start))
        except OSError:
            return self.verdict(VerdictKind.NO_OUTPUT, "exited before the start message")
        return None

    def request_move(self, state: Any, history: list[Any]) -> MoveReply:
        proc = self.proc
        if proc is None:
            raise RuntimeError("json: request_move before begin")
        turn = {
            "type": "turn",
            "position": self.game.position_text(state, self.seat.index),
            "history": [self.game.format_move(m) for m in history],
        }
        timeout = self.limits.move_wall_s
        if self.limits.game_wall_s is not None:
            timeout = min(timeout, max(0.0, self.limits.game_wall_s - self._thinking_s))
        cpu_before = proc.cpu_ms
        started = time.monotonic()
        with contextlib.suppress(OSError):  # if it has gone, reading says how (exit, signal, limit)
            proc.send(_line(turn))
        answer = self._answer(proc, timeout)
        wall_s = time.monotonic() - started
        self._thinking_s += wall_s
        wall_ms, cpu_ms = wall_s * 1000.0, max(0.0, proc.cpu_ms - cpu_before)
        if isinstance(answer, RunOutcome):
            verdict = verdict_of(answer, self.seat.player) or self.verdict(
                VerdictKind.NO_OUTPUT, "stopped without answering its turn"
            )
            if answer.failure is VerdictKind.TIMEOUT and timeout < self.limits.move_wall_s:
                verdict = self.verdict(
                    VerdictKind.TIMEOUT, f"used up its {self.limits.game_wall_s:g} s for the game"
                )
            return MoveReply(None, verdict, wall_ms, cpu_ms)
        outcome = RunOutcome(answer.encode(), b"", 0, None, wall_ms, cpu_ms, 0)
        try:
            message = json.loads(answer)
        except ValueError:
            return self.fail(VerdictKind.BAD_OUTPUT, f"not JSON: {one_line(answer)!r}", outcome)
        move = message.get("move") if isinstance(message, dict) else None
        if not isinstance(move, str):
            return self.fail(
                VerdictKind.BAD_OUTPUT, f'not {{"move": "<text>"}}: {one_line(answer)!r}', outcome
            )
        return self.reply_from_line(move, outcome)

    def end(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(OSError):
                self.proc.send(_line({"type": "end"}))
            self.proc.close()

    def _answer(self, proc: InteractiveProcess, timeout_s: float) -> str | RunOutcome:
        """The next non-blank line, or how the process ended (a limit, an exit) before one."""
        deadline = time.monotonic() + timeout_s
        while True:
            line = proc.read_line(max(0.0, deadline - time.monotonic()))
            if isinstance(line, RunOutcome) or line.strip():
                return line


def _line(message: dict[str, Any]) -> str:
    return json.dumps(message, separators=(",", ":")) + "\n"
