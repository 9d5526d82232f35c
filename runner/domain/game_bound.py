"""Stopping a game at its configured bound, and how such a game is scored (issue 14 item 10).

A config's ``bound`` (``MatchSpec.bound``) stops a game that the rules have not
ended after ``max_moves`` moves, or once it has run ``wall_s`` seconds (the
worker's clock, checked between moves, so the move in progress is never cut).
The game's own ``Game.adjudicate`` then scores the position (docs/config.md
lists each game's rule and the seed sentence it reads); the record says
which bound fired (``GameRecord.stopped_by``) and, in its reason, the
adjudication, so reports and ``tourney matches`` show it.

The worker's referee loop (``workers.match``) stops games here; the
coordinator's re-judging (``runner.domain.verify``) checks a stopped game
against the same functions, so both read one rule.
"""

from __future__ import annotations

from typing import Any

from runner.domain.games.base import Game, Outcome
from runner.domain.match_values import GameBound

MOVE_BOUND = "max_moves"
WALL_BOUND = "wall"
STOPPED_BY = (MOVE_BOUND, WALL_BOUND)


def bound_reached(bound: GameBound, moves: int, elapsed_s: float) -> str | None:
    """Which bound stops a game that has ``moves`` moves after ``elapsed_s`` seconds, if any."""
    if bound.max_moves is not None and moves >= bound.max_moves:
        return MOVE_BOUND
    if bound.wall_s is not None and elapsed_s >= bound.wall_s:
        return WALL_BOUND
    return None


def bound_text(stopped_by: str, bound: GameBound, moves: int) -> str:
    """The first half of a stopped game's reason: which bound, in numbers."""
    if stopped_by == MOVE_BOUND:
        return f"move bound reached ({bound.max_moves} moves)"
    return f"game wall budget reached ({bound.wall_s:g} s, after {moves} moves)"


def adjudicated(
    game: Game[Any, Any], state: Any, players: int, stopped_by: str, bound: GameBound, moves: int
) -> Outcome:
    """The outcome of a game stopped by ``stopped_by``: the game's adjudication, its reason
    prefixed with the bound ("move bound reached (10000 moves); adjudicated: a draw")."""
    ruling = game.adjudicate(state, players)
    reason = f"{bound_text(stopped_by, bound, moves)}; adjudicated: {ruling.reason}"
    return Outcome(ruling.winners, ruling.scores, reason)
