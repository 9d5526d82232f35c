"""What every protocol shares: reading the board header out of the board text, and the
text-board protocol bases (a host's ``RunOutcome`` becomes a verdict in
``workers.sandbox.classify.verdict_of``)."""

from __future__ import annotations

import functools
import re
from typing import Any, ClassVar

from runner.domain.games.base import BadMoveText, Game, IllegalMove
from runner.domain.match_values import Limits, Verdict, VerdictKind
from workers.protocols.base import EntryProtocol, MoveReply, Seat
from workers.sandbox.base import EntryHost, RunOutcome
from workers.sandbox.classify import DETAIL_CHARS, one_line, verdict_of


def board_numbers(board_text: str) -> list[int]:
    """The numbers of a header-style board text: ``"6"``, ``"7 7 4"``, ``"7x7x4"``."""
    parts = [p for p in re.split(r"[\s,x]+", board_text.strip()) if p]
    try:
        return [int(p) for p in parts]
    except ValueError:
        raise ValueError(f"board {board_text.strip()!r} is not a list of numbers") from None


@functools.lru_cache(maxsize=64)  # asked on every move of a match, for the same few boards
def mnk_dimensions(board_text: str) -> tuple[int, int, int]:
    """``(W, H, K)`` of an m,n,k board text."""
    nums = board_numbers(board_text)
    if len(nums) != 3:
        raise ValueError(f"m,n,k board must be 'W H K', got {board_text.strip()!r}")
    return nums[0], nums[1], nums[2]


class TextBoardProtocol(EntryProtocol):
    """A protocol that also needs the board text (the header it sends the entry).

    The match loop passes ``board_text`` by keyword; ``EntryProtocol``'s own
    signature stays as it is for hosts and games that do not care.
    """

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
        super().__init__(game, host, argv, seat, limits)
        self.board_text = board_text

    def verdict(self, kind: VerdictKind, detail: str) -> Verdict:
        return Verdict(kind, self.seat.player, one_line(detail, DETAIL_CHARS))

    def reply_from_line(self, line: str, outcome: RunOutcome) -> MoveReply:
        """A move from one line of text, or ``bad_output`` naming what was wrong."""
        try:
            move = self.game.parse_move(line)
        except (BadMoveText, IllegalMove) as e:
            return self.fail(VerdictKind.BAD_OUTPUT, str(e), outcome)
        return MoveReply(move, None, outcome.wall_ms, outcome.cpu_ms)

    def fail(self, kind: VerdictKind, detail: str, outcome: RunOutcome) -> MoveReply:
        return MoveReply(None, self.verdict(kind, detail), outcome.wall_ms, outcome.cpu_ms)


class PerMoveProtocol(TextBoardProtocol):
    """Protocols that start the program once per move and read one answer line.

    Blank lines are never an answer. After the answer line, further non-blank lines are ignored,
    unless ``single_line``: then they are ``bad_output`` (a seed that makes the move line the
    program's sole output, docs/config.md, "Readings of the seeds").
    """

    single_line: ClassVar[str] = ""  # the seed's sentence when a second line is refused

    def stdin_for(self, state: Any, history: list[Any]) -> bytes:
        raise NotImplementedError

    def request_move(self, state: Any, history: list[Any]) -> MoveReply:
        outcome = self.host.run(self.argv, self.stdin_for(state, history), self.limits)
        verdict = verdict_of(outcome, self.seat.player)
        if verdict is not None:
            return MoveReply(None, verdict, outcome.wall_ms, outcome.cpu_ms)
        try:
            text = outcome.stdout.decode("utf-8")
        except UnicodeDecodeError:
            return self.fail(VerdictKind.BAD_OUTPUT, "output is not text", outcome)
        lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
        if not lines:
            return self.fail(VerdictKind.NO_OUTPUT, "printed no move", outcome)
        if self.single_line and len(lines) > 1:
            return self.fail(
                VerdictKind.BAD_OUTPUT,
                f"printed {len(lines)} lines, line 2: {one_line(lines[1])!r}; {self.single_line}",
                outcome,
            )
        # the first non-blank line is the answer
        return self.reply_from_line(lines[0], outcome)
