"""``tourney judge``: referee finished (or unfinished) games written as transcripts.

A transcript is what an entry of the game reads on its standard input:

- pousse: ``N`` on the first line, then one move per line (``L3``, ``T1``...);
- mnk / gomoku: ``W H K`` on the first line, then one ``x y`` move per line;
- boxing: one ``x y size`` move per line; the arena comes from ``--board FILE``
  (default: the seed's sample arena) and the players alternate A, B.

Blank lines and surrounding whitespace are ignored. The verdict is one JSON
line per transcript: ``{"over", "winner", "reason", "moves"}``, where
``moves`` counts the moves applied, up to and including the one that ended
the game. Decisions where the contest texts are silent:

- Moves listed after the game ended are not applied; ``moves`` then stops
  short of the number of lines, which is how a caller notices them.
- A move that does not parse, or that the rules forbid, ends the game the way
  the ICFP'98 judge did: the other side wins, the reason reads
  ``"X made an invalid move: <line>: <why>"`` and ``moves`` counts only the
  legal moves before it.
- A transcript that cannot be read, or whose board line is no board, gets no
  JSON line: a message on stderr, the other files are still judged, and the
  command exits 2.
- ``-`` as a transcript name reads standard input.
"""

from __future__ import annotations

from typing import Any

from runner.domain.games import get_game
from runner.domain.games.base import BoardError, Game, RulesError


def judge_transcript(game: str | Game[Any, Any], text: str, board: str | None = None) -> dict[str, Any]:
    """The verdict on one transcript (see the module docstring for its format).

    ``board`` is the boxing arena (the default arena when None); the other
    games read their board from the transcript's first line. Raises
    ``BoardError`` when there is no valid board.
    """
    rules = get_game(game) if isinstance(game, str) else game
    lines = [line.strip() for line in text.splitlines()]
    lines = [line for line in lines if line]
    if rules.name == "boxing":
        board_text = board if board is not None else rules.default_board()
        move_lines = lines
    else:
        if board is not None:
            raise BoardError(f"{rules.name} transcripts carry their own board on the first line")
        if not lines:
            raise BoardError(f"empty {rules.name} transcript: the first line must be the board")
        board_text, move_lines = lines[0], lines[1:]
    rules.validate_board(board_text)
    state = rules.new_game(board_text, 2)

    applied = 0
    for line in move_lines:
        if rules.outcome(state) is not None:
            break
        mover = rules.to_move(state)
        try:
            state = rules.play(state, rules.parse_move(line))
        except RulesError as e:
            forfeited = rules.forfeit(state, mover)
            outcome = rules.outcome(forfeited)
            winner = _mark(rules, forfeited, outcome.winners) if outcome else None
            reason = f"{rules.seat_mark(state, mover)} made an invalid move: {line[:40]}: {e}"
            return _verdict(True, winner, reason, applied)
        applied += 1

    outcome = rules.outcome(state)
    if outcome is None:
        next_mark = rules.seat_mark(state, rules.to_move(state))
        return _verdict(False, None, f"not over; {next_mark} to move", applied)
    return _verdict(True, _mark(rules, state, outcome.winners), outcome.reason, applied)


def _mark(rules: Game[Any, Any], state: Any, winners: tuple[int, ...]) -> str | None:
    return rules.seat_mark(state, winners[0]) if winners else None


def _verdict(over: bool, winner: str | None, reason: str, moves: int) -> dict[str, Any]:
    return {"over": over, "winner": winner, "reason": reason, "moves": moves}
