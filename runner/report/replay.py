"""Re-deriving every position of a recorded game with the referee.

A ``GameRecord`` keeps only the moves; the positions come from replaying
them with the game's own rules (``new_game`` then ``play(parse_move(...))``),
so what a replay shows is what the referee decided, never a second opinion.

Two things in a record are not moves:

* a forfeit in an N-player game: the charged seat left the rotation and play
  went on. It shows up as a move by someone other than the seat to move;
  the replay forfeits seats until the recorded mover is to move.
* a rejected last move (an illegal or unparseable move that ended the game
  with a verdict): it cannot be played, so the replay stops before it and
  says why.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from runner.domain.games.base import Game, RulesError
from runner.domain.match_values import GameRecord, MoveRecord


@dataclass(frozen=True)
class ReplayStep:
    """One applied move: the position after it is ``Replay.states[number]``."""

    number: int  # 1-based
    record: MoveRecord
    seat: int
    mark: str
    forfeits: tuple[str, ...] = ()  # entries that left the rotation just before this move


@dataclass
class Replay:
    game: Game[Any, Any]
    record: GameRecord
    states: list[Any]  # states[0] is the start, states[k] the position after move k
    steps: list[ReplayStep] = field(default_factory=list)
    stopped: str = ""  # why the replay stopped before the record's last move ("" if it did not)

    @property
    def players(self) -> int:
        return len(self.record.order)

    def marks(self) -> list[str]:
        return [self.game.seat_mark(self.states[0], s) for s in range(self.players)]

    def ending(self) -> str:
        """One line: who won and why, or the verdict against whom."""
        rec = self.record
        v = rec.verdict
        winner = f"winner {rec.winner}" if rec.winner else "no winner"
        scores = ", ".join(f"{n} {rec.scores.get(n, 0)}" for n in rec.order)
        if v.kind.value == "normal":
            why = rec.reason or "by the rules"
            return f"{winner} ({why}); scores: {scores}{self._scaled()}"
        against = f" against {v.player}" if v.player else ""
        detail = f": {v.detail}" if v.detail else ""
        return f"{winner}; verdict {v.kind.value}{against}{detail}; scores: {scores}{self._scaled()}"

    def _scaled(self) -> str:
        """``; clocks scaled: sf x0.73 (273000 nps measured, for 200000)`` (``scale_nps``)."""
        scales = self.record.clock_scale
        if not scales:
            return ""
        shown = ", ".join(
            f"{name} x{s.factor:g} ({s.measured_nps} nps measured, for {s.scale_nps})"
            for name, s in sorted(scales.items())
        )
        return f"; clocks scaled: {shown}"


def replay_game(game: Game[Any, Any], board_text: str, record: GameRecord) -> Replay:
    """Every position of ``record`` played on ``board_text``; never raises for
    a bad record (the reason lands in ``Replay.stopped``)."""
    order: Sequence[str] = record.order
    try:
        state = game.new_game(board_text, len(order))
    except (RulesError, ValueError) as e:
        return Replay(game, record, [], stopped=f"the board could not be set up: {e}")
    replay = Replay(game, record, [state])
    seat_of = {name: seat for seat, name in enumerate(order)}
    for number, move in enumerate(record.moves, start=1):
        forfeits: list[str] = []
        # A mover other than the seat to move means that seat forfeited (N players).
        for _ in range(len(order)):
            if game.outcome(state) is not None:
                break
            seat = game.to_move(state)
            if order[seat] == move.player or move.player not in seat_of:
                break
            forfeits.append(order[seat])
            state = game.forfeit(state, seat)
        seat = game.to_move(state)
        try:
            if game.outcome(state) is not None:
                raise RulesError("the game was already over")
            if order[seat] != move.player:
                raise RulesError(f"{move.player} moved but {order[seat]} was to move")
            state = game.play(state, game.parse_move(move.move))
        except RulesError as e:
            last = number == len(record.moves)
            what = "rejected" if last and record.verdict.player == move.player else "could not be replayed"
            replay.stopped = f"move {number} ({move.player}: {move.move.strip()[:40]!r}) {what}: {e}"
            break
        replay.states.append(state)
        replay.steps.append(ReplayStep(number, move, seat, game.seat_mark(state, seat), tuple(forfeits)))
    return replay
