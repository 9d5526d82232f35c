"""The referee loop: results, forfeits in N-player games, build failures, runner errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.domain.games.base import Game
from runner.domain.match_values import (
    EntryRef,
    GameRecord,
    Limits,
    MatchPlan,
    MatchResult,
    MatchSpec,
    MoveRecord,
    VerdictKind,
)
from runner.domain.wire import decode, encode
from workers.artifacts import ArtifactCache, BuildFailed, local_fetch
from workers.match import MatchObserver, argv_for, play_match
from workers.sandbox.base import EntryHost, HostError, HostFactory, RunOutcome
from workers.sandbox.plain import PlainHostFactory

from .conftest import EASY, fixture, play, ref


def test_argv_fills_in_the_mark_and_appends_variant_args() -> None:
    r = EntryRef("v", "0" * 64, "potm-arena", ["./a.out", "{mark}", "--as={mark}"], None, ["--depth", "2"])
    assert argv_for(r, "B") == ["./a.out", "B", "--as=B", "--depth", "2"]


def test_result_round_trips_through_json(cache: ArtifactCache) -> None:
    result = play(
        cache,
        "mnk",
        "3 3 3",
        ["mnk/first_empty", "gomocup/brain"],
        orders=[["first-empty", "brain"], ["brain", "first-empty"]],
    )
    again = decode(encode(result), MatchResult)
    assert again == result
    assert result.worker == "test-worker"
    assert result.digests == {
        "first-empty": ref("mnk/first_empty").digest,
        "brain": ref("gomocup/brain").digest,
    }
    assert [g.order for g in result.games] == [["first-empty", "brain"], ["brain", "first-empty"]]
    for g in result.games:
        assert all(m.wall_ms > 0 for m in g.moves)


def test_n_player_boxing_goes_on_after_a_forfeit(cache: ArtifactCache) -> None:
    # A crashes at once; B and C play on; the record keeps the first verdict
    result = play(cache, "boxing", "---\n---\n", ["boxing/exit3", "boxing/first_fit", "boxing/native"])
    (g,) = result.games
    assert (g.verdict.kind, g.verdict.player) == (VerdictKind.CRASH, "exit3")
    assert [m.player for m in g.moves] == ["first-fit", "native"] * 3
    assert g.winner == "native" and g.scores == {"exit3": 0, "first-fit": 0, "native": 3}
    assert "filled the last vacant cell" in g.reason


def test_a_failed_build_forfeits_every_game_without_running(cache: ArtifactCache) -> None:
    result = play(
        cache,
        "boxing",
        "---\n",
        ["boxing/broken_build", "boxing/first_fit"],
        orders=[["broken-build", "first-fit"], ["first-fit", "broken-build"]],
    )
    for g in result.games:
        assert (g.verdict.kind, g.verdict.player) == (VerdictKind.BUILD_FAILED, "broken-build")
        assert "expected a program" in g.verdict.detail  # the compiler's complaint, in one line
        assert g.winner == "first-fit" and g.moves == []


def test_nobody_wins_when_no_entry_could_be_built() -> None:
    r = EntryRef("x", "0" * 64, "potm-arena", ["./a.out"])
    spec = _spec("boxing", "---\n", {"x": r, "y": EntryRef("y", "1" * 64, "potm-arena", ["./a.out"])})
    failed = BuildFailed("0" * 64, "exit code 1")
    result = play_match(spec, {"x": failed, "y": failed}, PlainHostFactory())
    (g,) = result.games
    assert g.winner is None and g.verdict.kind is VerdictKind.BUILD_FAILED and g.verdict.player == "x"


class _BrokenHosts(HostFactory):
    """A host factory whose sandbox breaks after ``good`` hosts (a runner fault)."""

    name = "broken"

    def __init__(self, good: int):
        self.inner = PlainHostFactory()
        self.good = good

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        if self.good <= 0:
            raise HostError("sandbox setup failed: no user namespaces")
        self.good -= 1
        return self.inner.open(entry_dir, limits, mark)

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        return self.inner.run_build(entry_dir, command, limits)


def test_a_runner_error_becomes_a_system_error_result_not_an_exception(cache: ArtifactCache) -> None:
    a, b = ref("mnk/first_empty", name="a"), ref("mnk/first_empty", name="b")
    dirs = cache.ensure_all({"a": a, "b": b}, local_fetch({a.digest: fixture("mnk/first_empty")}))
    spec = _spec("mnk", "3 3 3", {"a": a, "b": b}, orders=[["a", "b"], ["b", "a"], ["a", "b"]])
    result = play_match(spec, dirs, _BrokenHosts(good=2))
    assert [g.verdict.kind for g in result.games] == [VerdictKind.NORMAL, VerdictKind.SYSTEM_ERROR]
    err = result.system_error
    assert err is not None and err.player is None and "no user namespaces" in err.detail
    assert result.games[1].winner is None


def test_an_unknown_game_is_a_system_error_too() -> None:
    spec = _spec("checkers", "8", {"a": EntryRef("a", "0" * 64, "mnk", ["x"])})
    result = play_match(spec, {}, PlainHostFactory())
    assert result.system_error is not None and "checkers" in result.system_error.detail


def test_the_move_bound_stops_a_game_and_pousse_adjudicates_a_winner(cache: ArtifactCache) -> None:
    result = play(cache, "pousse", "4", ["pousse/t1", "pousse/support_state"], max_moves=3)
    (g,) = result.games
    assert len(g.moves) == 3 and g.stopped_by == "max_moves"
    assert g.winner is not None  # seed 003: "Draws are impossible."
    assert g.verdict.kind is VerdictKind.NORMAL and g.verdict.detail == g.reason
    assert g.reason.startswith("move bound reached (3 moves); adjudicated: ")


def test_the_observer_sees_every_move_and_result(cache: ArtifactCache) -> None:
    seen: list[str] = []

    class Watch(MatchObserver):
        def game_started(self, number: int, order: list[str], game: Game[Any, Any], state: Any) -> None:
            seen.append(f"start {number} {order}")

        def move_played(self, number: int, move: MoveRecord, game: Game[Any, Any], state: Any) -> None:
            seen.append(f"{move.player} {move.move}")

        def game_finished(self, number: int, record: GameRecord, game: Game[Any, Any], state: Any) -> None:
            seen.append(f"end {record.winner}")

    play(cache, "boxing", "--\n", ["boxing/first_fit", "boxing/native"], observer=Watch())
    assert seen == ["start 1 ['first-fit', 'native']", "first-fit 1 1 1", "native 2 1 1", "end native"]


def _spec(
    game: str, board: str, entries: dict[str, EntryRef], orders: list[list[str]] | None = None
) -> MatchSpec:
    plan = MatchPlan.ad_hoc("m", "b", orders or [list(entries)])
    return MatchSpec.playing(
        plan, game=game, board_text=board, entries=entries, limits=EASY, seed=0, sandbox="none"
    )
