"""Referee replay of submitted results (runner.domain.verify), on results real matches produced."""

from __future__ import annotations

import dataclasses
from typing import Any

import pytest

from runner.domain.match_values import (
    GameRecord,
    Limits,
    MatchResult,
    MatchSpec,
    MoveRecord,
    Verdict,
    VerdictKind,
    system_error_result,
)
from runner.domain.verify import ResultMismatch, verify_result
from tests.workers.conftest import play
from workers.artifacts import ArtifactCache
from workers.sandbox import host_factory


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> ArtifactCache:
    return ArtifactCache(tmp_path_factory.mktemp("cache"), host_factory("none"))


def spec_of(result: MatchResult, game: str, board: str, **params: Any) -> MatchSpec:
    return MatchSpec.of(
        match_id=result.match_id,
        game=game,
        board_id="b",
        board_text=board,
        orders=[list(g.order) for g in result.games],
        entries={},
        limits=Limits(),
        seed=0,
        game_params=params,
    )


def with_game(result: MatchResult, index: int, **changes: Any) -> MatchResult:
    games = list(result.games)
    games[index] = dataclasses.replace(games[index], **changes)
    return dataclasses.replace(result, games=games)


@pytest.fixture(scope="module")
def mnk(cache: ArtifactCache) -> tuple[MatchSpec, MatchResult]:
    result = play(
        cache,
        "mnk",
        "3 3 3",
        ["mnk/first_empty", "gomocup/brain"],
        orders=[["first-empty", "brain"], ["brain", "first-empty"]],
    )
    return spec_of(result, "mnk", "3 3 3"), result


def test_real_results_pass(cache: ArtifactCache, mnk: tuple[MatchSpec, MatchResult]) -> None:
    verify_result(*mnk)
    boxing = play(cache, "boxing", "---\n---\n", ["boxing/exit3", "boxing/first_fit", "boxing/native"])
    verify_result(spec_of(boxing, "boxing", "---\n---\n"), boxing)  # N-player, a forfeit mid-game
    built = play(
        cache,
        "boxing",
        "---\n",
        ["boxing/broken_build", "boxing/first_fit"],
        orders=[["broken-build", "first-fit"], ["first-fit", "broken-build"]],
    )
    verify_result(spec_of(built, "boxing", "---\n"), built)
    crash = play(cache, "boxing", "----\n----\n", ["boxing/first_fit", "boxing/segv"])
    assert crash.games[0].verdict.kind is not VerdictKind.NORMAL
    verify_result(spec_of(crash, "boxing", "----\n----\n"), crash)


def test_a_swapped_winner_or_inflated_score_is_rejected(mnk: tuple[MatchSpec, MatchResult]) -> None:
    spec, result = mnk
    g = result.games[0]
    loser = next(n for n in g.order if n != g.winner)
    with pytest.raises(ResultMismatch, match="winner"):
        verify_result(spec, with_game(result, 0, winner=loser))
    with pytest.raises(ResultMismatch, match="scores"):
        verify_result(spec, with_game(result, 0, scores={n: 24 for n in g.order}))


def test_an_illegal_or_out_of_turn_move_is_rejected(mnk: tuple[MatchSpec, MatchResult]) -> None:
    spec, result = mnk
    moves = list(result.games[0].moves)
    dup = [*moves[:2], dataclasses.replace(moves[2], move=moves[0].move), *moves[3:]]
    with pytest.raises(ResultMismatch, match="not legal"):
        verify_result(spec, with_game(result, 0, moves=dup))
    swapped = [dataclasses.replace(moves[0], player=moves[1].player), *moves[1:]]
    with pytest.raises(ResultMismatch, match="to move"):
        verify_result(spec, with_game(result, 0, moves=swapped))


def test_a_verdict_only_where_the_transcript_ends(mnk: tuple[MatchSpec, MatchResult]) -> None:
    spec, result = mnk
    g = result.games[0]
    # charge a timeout mid-game: the game went on after it, so the record lies
    lie = Verdict(VerdictKind.TIMEOUT, g.order[0], "took 9 s")
    with pytest.raises(ResultMismatch):
        verify_result(spec, with_game(result, 0, verdict=lie))
    # cut the transcript short and claim a normal end
    with pytest.raises(ResultMismatch, match="not over"):
        verify_result(spec, with_game(result, 0, moves=g.moves[:2]))


def test_fabricated_results_without_moves_are_rejected(mnk: tuple[MatchSpec, MatchResult]) -> None:
    spec, result = mnk
    fake = [
        GameRecord(
            list(o),
            o[0],
            {o[0]: 1, o[1]: 0},
            Verdict(VerdictKind.NORMAL, None, "3 in a row"),
            [],
            "3 in a row",
        )
        for o in spec.orders
    ]
    with pytest.raises(ResultMismatch):
        verify_result(spec, dataclasses.replace(result, games=fake))
    with pytest.raises(ResultMismatch, match="games"):
        verify_result(spec, dataclasses.replace(result, games=result.games[:1]))
    with pytest.raises(ResultMismatch, match="for match"):
        verify_result(spec, dataclasses.replace(result, match_id="other"))
    with pytest.raises(ResultMismatch, match="seat order"):
        verify_result(spec, with_game(result, 0, order=list(reversed(result.games[0].order))))


def test_a_trailing_system_error_is_left_to_the_store(mnk: tuple[MatchSpec, MatchResult]) -> None:
    spec, result = mnk
    err = GameRecord(
        list(spec.orders[1]),
        None,
        {n: 0 for n in spec.orders[1]},
        Verdict(VerdictKind.SYSTEM_ERROR, None, "sandbox broke"),
        [MoveRecord(spec.orders[1][0], "1 1", 1.0)],
        "runner error",
    )
    verify_result(
        spec, with_game(result, 1, **{f.name: getattr(err, f.name) for f in dataclasses.fields(err)})
    )
    with pytest.raises(ResultMismatch, match="only system_error"):
        verify_result(
            spec,
            dataclasses.replace(result, games=[err, result.games[1]]),
        )


def test_a_whole_match_of_system_errors_passes_to_the_store(mnk: tuple[MatchSpec, MatchResult]) -> None:
    spec, _ = mnk
    verify_result(spec, system_error_result(spec, "sandbox broke", worker="w"))
