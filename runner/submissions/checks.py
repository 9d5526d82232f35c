"""A submission's check as a match, and what its result says (docs/submissions.md, "What each check means").

The check is the POTM master's "if I can get it to compile then you are in", made a match:
one game of the team's entry (moving first) against the config's house entry, on the
submissions board, with the contest's own limits and sandbox (``smoke_spec``). A worker plays
it like any match (fetch by digest, build once in the sandbox, play), so the server never runs
entry code. ``read_outcome`` turns the result into the steps ``built`` and ``smoke`` and the
submission's state; a ``system_error`` is the worker's failure, never the team's: the check is
sent again (``CheckOutcome.retry``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field

from runner.config import TournamentConfig
from runner.domain.entries import EntrySpec
from runner.domain.match_values import EntryRef, MatchPlan, MatchResult, MatchSpec, VerdictKind
from runner.domain.seeds import derive_seed
from runner.domain.wire import encode

#: the house entry's name in a check (``~`` is in no team's name: the two never collide)
HOUSE_SUFFIX = "~house"
#: most moves a smoke game plays: enough to see an entry read boards and answer in turn
SMOKE_MAX_MOVES = 200


def check_id(submission_id: int) -> str:
    return f"check-{submission_id}"


def submission_of(match_id: str) -> int | None:
    head, _, tail = match_id.partition("-")
    return int(tail) if head == "check" and tail.isdigit() else None


def smoke_board(config: TournamentConfig) -> str:
    rules = config.submissions
    if rules is not None and rules.board:
        return rules.board
    return config.stages[0].boards[0] if config.stages[0].boards else "default"


def smoke_spec(config: TournamentConfig, submission_id: int, team: EntryRef, house: EntrySpec) -> MatchSpec:
    """The one-game match that checks a submission (the team's entry first, then the house)."""
    house_name = f"{house.name}{HOUSE_SUFFIX}"
    board = smoke_board(config)
    plan = MatchPlan.ad_hoc(check_id(submission_id), board, [(team.name, house_name)], stage="check")
    bound = config.bound.to_bound()
    if bound.max_moves is None or bound.max_moves > SMOKE_MAX_MOVES:
        bound = type(bound)(SMOKE_MAX_MOVES, bound.wall_s)
    house_ref = house.ref()
    return MatchSpec.playing(
        plan,
        game=config.game,
        board_text=config.board_text(board),
        entries={team.name: team, house_name: dataclasses.replace(house_ref, name=house_name)},
        limits=config.limits_obj,
        seed=derive_seed(config.seed, "check", submission_id),
        sandbox=config.sandbox,
        game_params=dict(config.game_params),
        bound=bound,
        exclusive_cores=config.timing.exclusive_cores,
    )


@dataclass
class CheckOutcome:
    """What a check's result means for the submission."""

    ready: bool
    retry: bool = False  # the worker failed (system_error): send the check again
    failure: str = ""
    first_error: str = ""
    build_log: str = ""
    steps: list[tuple[str, str, str]] = field(default_factory=list)
    result_json: str = ""


def read_outcome(team: str, result: MatchResult, first_error: Callable[[str], str]) -> CheckOutcome:
    """The steps ``built``, ``smoke`` and ``ready`` from the check's result."""
    if not result.games:
        return CheckOutcome(False, retry=True, failure="the worker returned no game")
    game = result.games[0]
    verdict = game.verdict
    if verdict.kind is VerdictKind.SYSTEM_ERROR:
        return CheckOutcome(
            False, retry=True, failure=f"the worker could not play the check: {verdict.detail}"
        )
    as_json = encode(result).decode()
    if team in result.build_logs or (verdict.kind is VerdictKind.BUILD_FAILED and verdict.player == team):
        log = result.build_logs.get(team, verdict.detail)
        first = first_error(log) or verdict.detail.split(" (full log:")[0]
        return CheckOutcome(
            False,
            failure=f"the build failed: {first}",
            first_error=first,
            build_log=log,
            steps=[("built", "failed", first), ("smoke", "skipped", "not played: the build failed")],
            result_json=as_json,
        )
    built = ("built", "ok", "built in the sandbox")
    moves = len(game.moves)
    mine = sum(1 for m in game.moves if m.player == team)
    if verdict.kind is not VerdictKind.NORMAL and verdict.player == team:
        said = f"{verdict.kind.value} after {mine} move(s) of yours: {verdict.detail}".rstrip(": ")
        return CheckOutcome(
            False,
            failure=f"the smoke game: {said}",
            steps=[built, ("smoke", "failed", said)],
            result_json=as_json,
        )
    if verdict.kind is not VerdictKind.NORMAL:
        # the house entry failed: the submission played its part (a house that breaks is the organiser's)
        how = f"the house entry ended it ({verdict.label()})"
    elif game.winner == team:
        how = "you won"
    elif game.winner is None:
        how = "a draw"
    else:
        how = "the house entry won"
    if game.stopped_by:
        how += f", stopped at the {game.stopped_by} bound"
    said = f"{how}; {moves} move(s), {mine} of them yours" + (f" ({game.reason})" if game.reason else "")
    return CheckOutcome(
        True,
        steps=[built, ("smoke", "ok", said), ("ready", "ok", "this version can play")],
        result_json=as_json,
    )
