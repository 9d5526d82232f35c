"""Games stopped at their bound, played by real entries and re-judged by the coordinator's
referee replay (``runner.domain.verify``): the bound and the adjudication are checked like any
other end; a wall-budget stop is taken as a fact of the worker's clock, but only where the match
has such a budget."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from runner.domain.match_values import GameBound, Limits, MatchResult, MatchSpec
from runner.domain.verify import ResultMismatch, verify_result
from tests.workers.conftest import play
from workers.artifacts import ArtifactCache
from workers.sandbox import host_factory


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> ArtifactCache:
    return ArtifactCache(tmp_path_factory.mktemp("cache"), host_factory("none"))


def spec_for(result: MatchResult, game: str, board: str, bound: GameBound) -> MatchSpec:
    return MatchSpec.of(
        match_id=result.match_id,
        game=game,
        board_id="b",
        board_text=board,
        orders=[list(g.order) for g in result.games],
        entries={},
        limits=Limits(),
        seed=0,
        bound=bound,
    )


def with_game(result: MatchResult, **changes: Any) -> MatchResult:
    return dataclasses.replace(result, games=[dataclasses.replace(result.games[0], **changes)])


@pytest.fixture(scope="module")
def stopped(cache: ArtifactCache) -> tuple[MatchSpec, MatchResult]:
    bound = GameBound(max_moves=5)
    result = play(cache, "pousse", "4", ["pousse/t1", "pousse/support_state"], bound=bound)
    return spec_for(result, "pousse", "4", bound), result


def test_a_game_stopped_at_the_move_bound_is_accepted(stopped: tuple[MatchSpec, MatchResult]) -> None:
    spec, result = stopped
    (g,) = result.games
    assert g.stopped_by == "max_moves" and len(g.moves) == 5 and g.winner is not None
    verify_result(spec, result)


def test_a_bound_other_than_the_spec_is_rejected(stopped: tuple[MatchSpec, MatchResult]) -> None:
    spec, result = stopped
    other = dataclasses.replace(spec, bound=GameBound(max_moves=6))
    with pytest.raises(ResultMismatch, match="the bound is 6"):
        verify_result(other, result)


def test_a_forged_adjudication_is_rejected(stopped: tuple[MatchSpec, MatchResult]) -> None:
    spec, result = stopped
    (g,) = result.games
    loser = next(p for p in g.order if p != g.winner)
    forged = with_game(result, winner=loser, scores={p: int(p == loser) for p in g.order})
    with pytest.raises(ResultMismatch, match="winner"):
        verify_result(spec, forged)


def test_a_wall_stop_needs_a_wall_budget(stopped: tuple[MatchSpec, MatchResult]) -> None:
    spec, result = stopped
    as_wall = with_game(result, stopped_by="wall")
    with pytest.raises(ResultMismatch, match="wall budget the match does not have"):
        verify_result(spec, as_wall)


def test_an_unbounded_transcript_that_stops_early_is_still_rejected(
    stopped: tuple[MatchSpec, MatchResult],
) -> None:
    spec, result = stopped
    with pytest.raises(ResultMismatch, match="game not over"):
        verify_result(spec, with_game(result, stopped_by=""))


def test_the_wall_budget_stops_a_real_game_between_moves(cache: ArtifactCache) -> None:
    # a 20x20 board needing 20 in a row: first-empty players fill rows for 400 moves, a process per move
    bound = GameBound(max_moves=None, wall_s=0.5)
    result = play(cache, "mnk", "20 20 20", ["mnk/first_empty", "mnk/first_empty"], bound=bound)
    (g,) = result.games
    assert g.stopped_by == "wall" and 0 < len(g.moves) < 400
    assert g.winner is None and g.reason.startswith("game wall budget reached (0.5 s, after ")
    assert g.reason.endswith("; adjudicated: a draw")
    verify_result(spec_for(result, "mnk", "20 20 20", bound), result)
