"""Re-judge a submitted ``MatchResult`` with the pure referee before it counts (docs/scale-out.md).

A worker reports what happened; the coordinator believes only what the rules
confirm. For each game of the result, in the spec's seat orders:

* every move is replayed with ``parse_move`` + ``play``: legal, by the seat
  whose turn it is;
* a verdict against a player (timeout, crash, ...) may stand only where the
  transcript ends for that player: in a two-player game at the end of the
  transcript, charged to the seat to move (or to any seat before the first
  move: a player that failed to start or build); its forfeit is applied
  with ``Game.forfeit`` as the worker's referee did;
* the outcome, winner, scores and reason must be those the rules give for
  the replayed position.

What cannot be replayed is taken as reported: move timings, the one-line
detail of a verdict, and *which* entry faults happened (a timeout is a fact
of the worker's clock). A ``GameRecord`` keeps only the first verdict, so in
an N-player game (boxing permutations) a later seat that drops out silently
is accepted only when the record carries some verdict.
"""

from __future__ import annotations

from typing import Any

from runner.domain.adjudication import ADJUDICATION, Adjudication, ruling
from runner.domain.game_bound import MOVE_BOUND, STOPPED_BY, WALL_BOUND, adjudicated
from runner.domain.games import get_game
from runner.domain.games.base import Game, Outcome, RulesError
from runner.domain.match_values import GameBound, GameRecord, MatchResult, MatchSpec, VerdictKind
from runner.errors import MessageRejected


class ResultMismatch(MessageRejected, ValueError):
    """The result does not follow from its transcript under the game's rules."""


def verify_result(spec: MatchSpec, result: MatchResult) -> None:
    """Raise ``ResultMismatch`` (one line, naming the game and move) unless ``result`` is what
    the rules give for its transcripts. Trailing ``system_error`` games are left to the store
    (the match is retried, they are never counted)."""
    if result.match_id != spec.match_id:
        raise ResultMismatch(f"result is for match {result.match_id}, not {spec.match_id}")
    games = result.games
    planned = spec.planned_games()
    if not games:
        raise ResultMismatch("result has no games")
    if len(games) > len(planned):
        raise ResultMismatch(f"result has {len(games)} games; the match has {len(planned)}")
    failed_at = next((i for i, g in enumerate(games) if g.verdict.kind is VerdictKind.SYSTEM_ERROR), None)
    if failed_at is None and len(games) != len(planned):
        raise ResultMismatch(f"result has {len(games)} games; the match has {len(planned)}")
    if failed_at is not None and any(
        g.verdict.kind is not VerdictKind.SYSTEM_ERROR for g in games[failed_at:]
    ):
        raise ResultMismatch(f"game {failed_at + 1}: only system_error games may follow a system_error game")
    try:
        rules = get_game(spec.game, **spec.game_params)
    except (ValueError, TypeError) as e:
        raise ResultMismatch(f"cannot set up game {spec.game!r}: {e}") from None
    for record, plan in zip(games, planned, strict=False):
        number = plan.number
        if list(record.order) != list(plan.order):
            raise ResultMismatch(f"game {number}: seat order {record.order} is not the planned {plan.order}")
        if record.verdict.kind is VerdictKind.SYSTEM_ERROR:
            continue
        if record.board_id != plan.recorded_board:
            # each game starts where the spec says: a transcript of another board (an opening
            # swapped) is replayed on none, whatever it says of itself
            raise ResultMismatch(
                f"game {number}: played on board {record.board_id or spec.board_id!r}, "
                f"not the planned {plan.board_id!r}"
            )
        try:
            _verify_game(rules, plan.board_text, record, spec.bound, spec.adjudication)
        except ResultMismatch as e:
            raise ResultMismatch(f"game {number}: {e}") from None


def _check_bound(record: GameRecord, bound: GameBound) -> None:
    """A game stopped at a bound must be stopped where the spec's bound allows: the move
    bound exactly at ``max_moves``; the wall bound (a fact of the worker's clock) only when
    the spec has one, before the move bound (which is checked first)."""
    moves = len(record.moves)
    if record.stopped_by not in STOPPED_BY:
        raise ResultMismatch(f"stopped by {record.stopped_by!r}, which is no bound")
    if record.stopped_by == MOVE_BOUND and moves != bound.max_moves:
        raise ResultMismatch(f"stopped at the move bound after {moves} moves; the bound is {bound.max_moves}")
    if record.stopped_by == WALL_BOUND and (
        bound.wall_s is None or (bound.max_moves is not None and moves >= bound.max_moves)
    ):
        raise ResultMismatch("stopped by a game wall budget the match does not have")


def _adjudication(
    record: GameRecord, rules_dict: dict[str, Any], seats: dict[str, int], boards: list[Any] | None = None
) -> Outcome:
    """The adjudication the transcript's reported scores give at its last move, and at no move
    before it (docs/engines.md); ``ResultMismatch`` when they do not justify the recorded one."""
    rules = Adjudication.from_dict(rules_dict)
    if not rules.active:
        raise ResultMismatch("adjudicated, but the match has no adjudication rules")
    if record.verdict.kind is not VerdictKind.NORMAL:
        raise ResultMismatch(f"adjudicated with a {record.verdict.kind.value} verdict")
    transcript = [(seats[m.player], m.search) for m in record.moves]
    # chess: the position after each move, for the tablebase rule (None for other games)
    after = boards if boards is not None and len(boards) == len(transcript) else [None] * len(transcript)
    for n in range(1, len(transcript)):
        if ruling(rules, transcript[:n], after[n - 1]) is not None:
            raise ResultMismatch(f"the rules adjudicate the game after move {n}, not at its end")
    outcome = ruling(rules, transcript, after[-1] if after else None)
    if outcome is None:
        raise ResultMismatch("the reported scores and the tables do not justify an adjudication")
    return outcome


def _verify_game(
    rules: Game[Any, Any],
    board_text: str,
    record: GameRecord,
    bound: GameBound | None = None,
    adjudication: dict[str, Any] | None = None,
) -> None:
    order = list(record.order)
    seats = {name: seat for seat, name in enumerate(order)}
    if len(seats) != len(order):
        raise ResultMismatch("an entry sits twice in one game")
    if set(record.scores) != set(order):
        raise ResultMismatch(f"scores name {sorted(record.scores)}, the game seats {sorted(order)}")
    verdict = record.verdict
    charged: int | None = None
    if verdict.kind is VerdictKind.NORMAL:
        if verdict.player is not None:
            raise ResultMismatch("a normal end charged to a player")
    else:
        if verdict.player not in seats:
            raise ResultMismatch(f"verdict {verdict.kind.value} charged to {verdict.player!r}, not a player")
        charged = seats[verdict.player]
    if (
        verdict.kind is VerdictKind.BUILD_FAILED
        and not record.moves
        and record.winner is None
        and not any(record.scores.values())
        and record.reason == "no entry could be built"
    ):
        return  # nobody could play: nothing to replay
    many = len(order) > 2
    state = rules.new_game(board_text, len(order))
    forfeited: set[int] = set()

    def forfeit(seat: int) -> None:
        nonlocal state
        state = rules.forfeit(state, seat)
        forfeited.add(seat)

    if verdict.kind is VerdictKind.BUILD_FAILED and charged is not None:
        forfeit(charged)  # build failures forfeit before the first move
    boards: list[Any] = []  # chess: the position after each move (the tablebase rule)
    for n, move in enumerate(record.moves, start=1):
        while True:
            if rules.outcome(state) is not None:
                raise ResultMismatch(f"move {n} ({move.player} {move.move!r}) comes after the game ended")
            seat = rules.to_move(state)
            if move.player == order[seat]:
                break
            if seat == charged and seat not in forfeited:
                forfeit(seat)  # the recorded verdict: this seat was removed here
            elif many and charged is not None and seat not in forfeited:
                forfeit(seat)  # a later verdict, which the record does not keep (module doc)
            else:
                raise ResultMismatch(f"move {n} is by {move.player}, but {order[seat]} is to move")
        try:
            state = rules.play(state, rules.parse_move(move.move))
        except RulesError as e:
            raise ResultMismatch(f"move {n} ({move.player} {move.move!r}) is not legal: {e}") from None
        boards.append(getattr(state, "board", None))
    ruling: Outcome | None = None
    if record.reason.startswith(ADJUDICATION) and not record.stopped_by:
        if rules.outcome(state) is not None:
            raise ResultMismatch("adjudicated, but the game ended by the rules")
        ruling = _adjudication(record, adjudication or {}, seats, boards)
    elif record.stopped_by:
        if rules.outcome(state) is not None:
            raise ResultMismatch(f"stopped by its {record.stopped_by} bound, but the game ended by the rules")
        if charged is not None and charged not in forfeited:
            forfeit(charged)  # an N-player game: the charged seat left the rotation earlier
        bound = bound or GameBound()
        _check_bound(record, bound)
        ruling = adjudicated(rules, state, len(order), record.stopped_by, bound, len(record.moves))
    elif rules.outcome(state) is None:
        if charged is None:
            raise ResultMismatch(
                f"the transcript ends after {len(record.moves)} moves with the game not over"
            )
        if charged not in forfeited:
            if not many and record.moves and rules.to_move(state) != charged:
                raise ResultMismatch(
                    f"verdict {verdict.kind.value} against {verdict.player}, "
                    f"but {order[rules.to_move(state)]} was to move where the transcript ends"
                )
            forfeit(charged)
        while many and rules.outcome(state) is None:
            seat = rules.to_move(state)
            if seat in forfeited:
                raise ResultMismatch("the transcript ends with the game not over")
            forfeit(seat)
    elif charged is not None and charged not in forfeited:
        raise ResultMismatch(
            f"verdict {verdict.kind.value} against {verdict.player}, but the game ended by the rules"
        )
    outcome = ruling or rules.outcome(state)
    if outcome is None:
        raise ResultMismatch("the transcript ends with the game not over")
    winner = order[outcome.winners[0]] if len(outcome.winners) == 1 else None
    if record.winner != winner:
        raise ResultMismatch(f"winner {record.winner!r}; the rules give {winner!r} ({outcome.reason})")
    scores = {name: 0 for name in order}
    for seat, score in enumerate(outcome.scores):
        scores[order[seat]] += score
    if dict(record.scores) != scores:
        raise ResultMismatch(f"scores {dict(record.scores)}; the rules give {scores}")
    if record.reason != outcome.reason:
        raise ResultMismatch(f"reason {record.reason!r}; the rules give {outcome.reason!r}")
