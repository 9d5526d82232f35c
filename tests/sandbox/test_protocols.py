"""Every protocol, per-move and persistent, played through the sandbox."""

from __future__ import annotations

from runner.domain.match_values import VerdictKind
from workers.artifacts import ArtifactCache

from .conftest import EASY, FIXTURES, STEADY, Recorder, play


def test_potm_arena_state_file_persists_within_a_game_and_not_beyond(
    recorder: Recorder, build_cache: ArtifactCache
) -> None:
    """steady exits 5 if its /tmp/arena.<MARK> vanished between its moves, 6 if one
    was there before its first move; two games in a row, marks swapped."""
    result = play(
        recorder,
        build_cache,
        [("steady-a", STEADY), ("steady-b", STEADY)],
        limits=EASY,
        orders=[["steady-a", "steady-b"], ["steady-b", "steady-a"]],
    )
    for g in result.games:
        assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
        assert len(g.moves) == 32


def test_potm_arena_native_entry(recorder: Recorder, build_cache: ArtifactCache) -> None:
    result = play(
        recorder, build_cache, [("native", FIXTURES / "boxing" / "native"), ("steady", STEADY)], limits=EASY
    )
    (g,) = result.games
    assert g.verdict.kind is VerdictKind.NORMAL, g.verdict


def test_icfp98_support_state_stays_in_its_game(recorder: Recorder, build_cache: ArtifactCache) -> None:
    # support_state exits 5 if support/count is not its own move count in this game
    seats = [("support-state", FIXTURES / "pousse" / "support_state"), ("t1", FIXTURES / "pousse" / "t1")]
    result = play(
        recorder,
        build_cache,
        seats,
        limits=EASY,
        game="pousse",
        board="4",
        orders=[["support-state", "t1"], ["t1", "support-state"]],
    )
    for g in result.games:
        assert g.verdict.kind is VerdictKind.NORMAL, g.verdict


def test_icfp98_did_not_kill_all_its_processes(recorder: Recorder, build_cache: ArtifactCache) -> None:
    seats = [("left-child", FIXTURES / "pousse" / "left_child"), ("t1", FIXTURES / "pousse" / "t1")]
    result = play(recorder, build_cache, seats, limits=EASY, game="pousse", board="4")
    (g,) = result.games
    assert (g.verdict.kind, g.verdict.player) == (VerdictKind.LEFT_PROCESSES, "left-child")
    assert g.winner == "t1"


def test_mnk_per_move(recorder: Recorder, build_cache: ArtifactCache) -> None:
    entry = FIXTURES / "mnk" / "first_empty"
    result = play(recorder, build_cache, [("x", entry), ("o", entry)], limits=EASY, game="mnk", board="3 3 3")
    (g,) = result.games
    assert g.verdict.kind is VerdictKind.NORMAL and g.winner == "x"


def test_gomocup_persistent_brains(recorder: Recorder, build_cache: ArtifactCache) -> None:
    brain = FIXTURES / "gomocup" / "brain"
    result = play(
        recorder,
        build_cache,
        [("brain-1", brain), ("first-empty", FIXTURES / "mnk" / "first_empty")],
        limits=EASY,
        game="mnk",
        board="5 3 3",
        orders=[["brain-1", "first-empty"], ["first-empty", "brain-1"]],
    )
    for g in result.games:
        assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
        assert len(g.moves) >= 5


def test_gomocup_refusal_is_charged(recorder: Recorder, build_cache: ArtifactCache) -> None:
    seats = [("refuser", FIXTURES / "gomocup" / "refuser"), ("brain", FIXTURES / "gomocup" / "brain")]
    result = play(recorder, build_cache, seats, limits=EASY, game="mnk", board="3 3 3")
    (g,) = result.games
    assert (g.verdict.kind, g.verdict.player) == (VerdictKind.BAD_OUTPUT, "refuser")
