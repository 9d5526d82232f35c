"""The Gomocup brain protocol (persistent; docs/games.md), for m,n,k games.

One brain process per game, spoken to line by line:

    START 15            (RECTSTART 15,10 for a board that is not square)
    OK
    INFO timeout_turn 1000 / timeout_match 0 / max_memory 536870912 / win_length 5
    ABOUT               -> name="...", version="..."  (logged, optional)
    BEGIN               when the brain moves first
    TURN 7,7            the opponent's last move, when it is the only new one
    BOARD / x,y,1|2 / DONE   the whole position otherwise (1 = own stone)
    7,8                 the brain's move: 0-based column,row
    END                 at the end of the game

``win_length`` is our extension (Gomocup assumes five in a row; brains
ignore INFO keys they do not know). Lines starting with MESSAGE, DEBUG,
UNKNOWN or ERROR are logged and skipped while waiting for an answer, except
that ERROR answering START is a refusal of the board (``bad_output``).
Moves are 0-based here and 1-based ``x y`` in the game: converted both ways.

Time: each answer gets ``move_wall_s``; with ``game_wall_s`` set, the
brain's total thinking time in the game is also bounded by it.
"""

from __future__ import annotations

import contextlib
import logging
import re
import time
from typing import Any, ClassVar

from runner.domain.games.base import Game
from runner.domain.match_values import Limits, Verdict, VerdictKind
from workers.protocols.base import MoveReply, Seat
from workers.protocols.common import TextBoardProtocol, mnk_dimensions
from workers.sandbox.base import EntryHost, InteractiveProcess, RunOutcome
from workers.sandbox.classify import one_line, verdict_of

log = logging.getLogger(__name__)

#: lines a brain may print at any time that are not answers
CHATTER = ("MESSAGE", "DEBUG", "UNKNOWN", "ERROR")
#: START may take longer than a move: brains load tables, JIT-compile, ...
START_TIMEOUT_S = 5.0
#: how long ABOUT may take at least (brains answer it at once)
ABOUT_TIMEOUT_S = 1.0

_MOVE_RE = re.compile(r"\s*(-?\d+)\s*,\s*(-?\d+)\s*")


class GomocupProtocol(TextBoardProtocol):
    name: ClassVar[str] = "gomocup"

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
        self.about = ""  # the brain's answer to ABOUT
        self.chatter: list[str] = []  # MESSAGE/DEBUG/... lines, kept for diagnosis
        self._seen = 0  # moves of the history the brain knows about
        self._thinking_s = 0.0  # total answer time, against game_wall_s

    def begin(self, state: Any) -> Verdict | None:
        w, h, k = mnk_dimensions(self.board_text)
        self.proc = self.host.spawn(self.argv, self.limits)
        self.proc.send(f"START {w}\n" if w == h else f"RECTSTART {w},{h}\n")
        answer = self._answer(max(START_TIMEOUT_S, self.limits.move_wall_s), accept_error=True)
        if isinstance(answer, RunOutcome):
            return self._outcome_verdict(answer, "START")
        if answer.upper().startswith("ERROR"):
            return self.verdict(VerdictKind.BAD_OUTPUT, f"refused START: {one_line(answer)}")
        if answer.strip().upper() != "OK":
            return self.verdict(VerdictKind.BAD_OUTPUT, f"answered START with {one_line(answer)!r}, not OK")
        match_ms = int((self.limits.game_wall_s or 0) * 1000)
        self.proc.send(
            f"INFO timeout_turn {int(self.limits.move_wall_s * 1000)}\n"
            f"INFO timeout_match {match_ms}\n"
            f"INFO max_memory {self.limits.memory_mb * 1024 * 1024}\n"
            f"INFO win_length {k}\n"
            "ABOUT\n"
        )
        about_s = max(ABOUT_TIMEOUT_S, self.limits.move_wall_s)
        about = self._answer(about_s, accept_error=True, accept_unknown=True)
        if isinstance(about, RunOutcome):
            if about.failure is VerdictKind.TIMEOUT:
                # ABOUT is a required command; a brain that stays silent would
                # answer it later in place of its first move
                return self.verdict(VerdictKind.TIMEOUT, f"no answer to ABOUT within {about_s:g} s")
            return self._outcome_verdict(about, "ABOUT")
        self.about = one_line(about, 200)
        return None

    def request_move(self, state: Any, history: list[Any]) -> MoveReply:
        proc = self.proc
        if proc is None:
            raise RuntimeError("gomocup: request_move before begin")
        proc.send(self._command(history))
        # once it answers, the brain knows its own move too: next time, one new move is a TURN
        self._seen = len(history) + 1
        timeout = self.limits.move_wall_s
        if self.limits.game_wall_s is not None:
            timeout = min(timeout, max(0.0, self.limits.game_wall_s - self._thinking_s))
        cpu_before = proc.cpu_ms
        started = time.monotonic()
        answer = self._answer(timeout)
        wall_s = time.monotonic() - started
        self._thinking_s += wall_s
        wall_ms, cpu_ms = wall_s * 1000.0, max(0.0, proc.cpu_ms - cpu_before)
        if isinstance(answer, RunOutcome):
            verdict = self._outcome_verdict(answer, "its move")
            if answer.failure is VerdictKind.TIMEOUT and timeout < self.limits.move_wall_s:
                budget = f"used up its {self.limits.game_wall_s:g} s for the game"
                verdict = self.verdict(VerdictKind.TIMEOUT, budget)
            return MoveReply(None, verdict, wall_ms, cpu_ms)
        m = _MOVE_RE.fullmatch(answer)
        if m is None:
            return MoveReply(
                None,
                self.verdict(VerdictKind.BAD_OUTPUT, f"not a move 'x,y': {one_line(answer)!r}"),
                wall_ms,
                cpu_ms,
            )
        x, y = int(m.group(1)), int(m.group(2))
        outcome = RunOutcome(answer.encode(), b"", 0, None, wall_ms, cpu_ms, 0)
        return self.reply_from_line(f"{x + 1} {y + 1}", outcome)

    def end(self) -> None:
        if self.proc is not None:
            with contextlib.suppress(OSError):
                self.proc.send("END\n")
            self.proc.close()

    # -- helpers ---------------------------------------------------------
    def _command(self, history: list[Any]) -> str:
        """BEGIN, TURN for the single new move, or BOARD with every stone."""
        if not history:
            return "BEGIN\n"
        if len(history) - self._seen == 1:
            return f"TURN {self._gomocup_cell(history[-1])}\n"
        lines = ["BOARD"]
        for i, move in enumerate(history):
            own = i % 2 == self.seat.index  # m,n,k is two-player: seats alternate
            lines.append(f"{self._gomocup_cell(move)},{1 if own else 2}")
        lines.append("DONE")
        return "\n".join(lines) + "\n"

    def _gomocup_cell(self, move: Any) -> str:
        x, y = (int(v) for v in self.game.format_move(move).split())
        return f"{x - 1},{y - 1}"

    def _answer(
        self, timeout_s: float, *, accept_error: bool = False, accept_unknown: bool = False
    ) -> str | RunOutcome:
        """The next line that is an answer, skipping (and logging) chatter."""
        proc = self.proc
        assert proc is not None
        deadline = time.monotonic() + timeout_s
        while True:
            line = proc.read_line(max(0.0, deadline - time.monotonic()))
            if isinstance(line, RunOutcome):
                return line
            word = line.lstrip().split(" ", 1)[0].upper()
            if word in CHATTER and not (
                (accept_error and word == "ERROR") or (accept_unknown and word == "UNKNOWN")
            ):
                self.chatter.append(line)
                log.debug("%s says: %s", self.seat.player, line)
                continue
            if not line.strip():
                continue
            return line

    def _outcome_verdict(self, outcome: RunOutcome, waiting_for: str) -> Verdict:
        verdict = verdict_of(outcome, self.seat.player)
        if verdict is None:
            # it exited cleanly, or closed its output, without answering
            return self.verdict(VerdictKind.NO_OUTPUT, f"stopped without answering {waiting_for}")
        return verdict
