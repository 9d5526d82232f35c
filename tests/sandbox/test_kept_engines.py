"""Engines kept alive across the games of a match (``restart`` off, docs/engines.md): real
engines in the real sandbox, a colour-swapped game pair as one match."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from typing import Any

import pytest

from runner.domain.engine_clock import merged
from runner.domain.match_values import (
    GameBound,
    Limits,
    MatchPlan,
    MatchResult,
    MatchSpec,
    NamedBoard,
    VerdictKind,
    system_error_result,
)
from runner.domain.verify import ResultMismatch, verify_result
from runner.report.pgn import game_pgn
from workers.artifacts import ArtifactCache, local_fetch
from workers.match import play_match
from workers.sandbox.base import EntryHost, HostFactory, InteractiveProcess, RunOutcome, WrappedHost

from .conftest import ROOT, Recorder, entry_ref

pytestmark = pytest.mark.integration

ENGINES = ROOT / "entries" / "chess"
#: a book position (configs/openings.epd's style): the pair plays it once from each side
OPENING = "r1bqkbnr/pppp1ppp/2n5/4p3/4P3/5N2/PPPP1PPP/RNBQKB1R w KQkq - 2 3"


class SpawnCounter(HostFactory):
    """The real factory, counting the engine processes its hosts start."""

    name = "bwrap"

    def __init__(self, inner: HostFactory):
        self.inner = inner
        self.spawned: list[list[str]] = []

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        return _Counted(self.inner.open(entry_dir, limits, mark), self.spawned)

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        return self.inner.run_build(entry_dir, command, limits)


class _Counted(WrappedHost):
    def __init__(self, host: EntryHost, spawned: list[list[str]]):
        super().__init__(host)
        self.spawned = spawned

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        self.spawned.append(argv)
        return super().spawn(argv, limits)


def engine_or_skip(name: str) -> Path:
    if not os.access(f"/usr/games/{name}", os.X_OK):
        pytest.skip(f"/usr/games/{name} is not installed (apt-get install {name})")
    return ENGINES / name


def game_pair(
    hosts: HostFactory,
    cache: ArtifactCache,
    entry: Path,
    engine: dict[str, Any],
    max_moves: int | None = None,
) -> MatchResult:
    """One match of two games, ``a`` white then ``b`` white, both seats the same engine."""
    base = entry_ref(entry)
    refs = {n: dataclasses.replace(base, name=n, engine=merged(base.engine, engine)) for n in ("a", "b")}
    spec = MatchSpec.playing(
        MatchPlan.ad_hoc("kept-engines", "opening-001", [["a", "b"], ["b", "a"]]),
        game="chess",
        board_text=OPENING,
        entries=refs,
        limits=Limits(move_wall_s=10.0),
        seed=0,
        sandbox="bwrap",
    )
    dirs = cache.ensure_all(refs, local_fetch({base.digest: entry}))
    return play_match(spec, dirs, hosts, "kept-engines-test", max_moves=max_moves)


@pytest.mark.parametrize(("restart", "processes"), [(False, 2), (True, 4)])
def test_stockfish_plays_a_game_pair_in_one_process_per_side_unless_restart_is_on(
    recorder: Recorder, build_cache: ArtifactCache, restart: bool, processes: int
) -> None:
    stockfish = engine_or_skip("stockfish")
    counter = SpawnCounter(recorder)
    engine: dict[str, Any] = {"nodes": 2000, "restart": restart}
    result = game_pair(counter, build_cache, stockfish, engine)
    assert [g.verdict.kind for g in result.games] == [VerdictKind.NORMAL] * 2, result.games
    assert all(len(g.moves) > 10 for g in result.games)
    assert len(counter.spawned) == processes
    assert len(recorder.sandboxes) == processes  # one sandbox per engine process, never shared
    assert all(s.closed_at is not None for s in recorder.sandboxes)  # nothing outlives the match


def test_a_kept_stockfish_plays_the_same_games_as_fresh_ones(
    recorder: Recorder, build_cache: ArtifactCache
) -> None:
    """After ``ucinewgame`` stockfish (one thread, fixed nodes) remembers nothing of the last game:
    its second game is move for move the one a fresh process plays."""
    stockfish = engine_or_skip("stockfish")
    kept = game_pair(recorder, build_cache, stockfish, {"nodes": 2000})
    fresh = game_pair(recorder, build_cache, stockfish, {"nodes": 2000, "restart": True})
    for k, f in zip(kept.games, fresh.games, strict=True):
        assert [m.move for m in k.moves] == [m.move for m in f.moves]


def test_a_kept_xboard_engine_is_told_new_and_answers_the_next_ping(
    recorder: Recorder, build_cache: ArtifactCache
) -> None:
    phalanx = engine_or_skip("phalanx")
    counter = SpawnCounter(recorder)
    # 20 plies a game at 10+0.1 (phalanx ignores sd in the middle game): a pair in seconds
    result = game_pair(counter, build_cache, phalanx, {"tc": "10+0.1"}, max_moves=20)
    assert [g.verdict.kind for g in result.games] == [VerdictKind.NORMAL] * 2, result.games
    # every move is checked against the book position's game: an engine still in its last
    # game's position would answer an illegal move within a ply or two
    assert [len(g.moves) for g in result.games] == [20, 20]
    assert len(counter.spawned) == 2


def test_an_engine_whose_opponent_fails_its_handshake_finishes_its_own_and_is_kept(
    recorder: Recorder, build_cache: ArtifactCache
) -> None:
    """A game's engines are greeted all at once, each on its own deadline (docs/engines.md):
    when the first fails its handshake, the second still finishes its own (it is charged
    nothing) and is kept for the match's next game; the failed one is started afresh."""
    fake = ROOT / "tests" / "fixtures" / "chess" / "fake-uci"
    base = entry_ref(fake)
    refs = {
        "mute": dataclasses.replace(base, name="mute", args=["no-uciok"]),
        "mate": dataclasses.replace(base, name="mate", args=["fools-mate"], engine={"options": {"Hash": 8}}),
    }
    spec = MatchSpec.playing(
        MatchPlan.ad_hoc("launched-not-kept", "startpos", [["mute", "mate"], ["mate", "mute"]]),
        game="chess",
        board_text="startpos",
        entries=refs,
        limits=Limits(move_wall_s=10.0),
        seed=0,
        sandbox="bwrap",
    )
    counter = SpawnCounter(recorder)
    dirs = build_cache.ensure_all(refs, local_fetch({base.digest: fake}))
    result = play_match(spec, dirs, counter, "kept-engines-test")
    # the mute engine loses both games at its handshake, before any move
    assert [(g.verdict.kind, g.verdict.player) for g in result.games] == [(VerdictKind.TIMEOUT, "mute")] * 2
    # three processes: the scripted engine is kept, the mute one is started again
    spawned = sorted(argv[-1] for argv in counter.spawned)
    assert spawned == ["fools-mate", "no-uciok", "no-uciok"]
    assert all(s.closed_at is not None for s in recorder.sandboxes)


#: a second book position for a match of two openings (``openings.per_match: 2``)
SECOND_OPENING = "rnbqkb1r/pp2pppp/3p1n2/8/3NP3/8/PPP2PPP/RNBQKB1R w KQkq - 1 5"


def two_openings(refs: dict[str, Any]) -> MatchSpec:
    """One match of two openings, each a colour-swapped pair: four games, ``a`` white first."""
    return MatchSpec.playing(
        MatchPlan.ad_hoc("two-openings", "opening-001+opening-002", [["a", "b"], ["b", "a"]]),
        game="chess",
        board_text=OPENING,
        entries=refs,
        limits=Limits(move_wall_s=10.0),
        seed=0,
        sandbox="bwrap",
        boards=(NamedBoard("opening-001", OPENING), NamedBoard("opening-002", SECOND_OPENING)),
        bound=GameBound(max_moves=12),  # 12 plies a game: four games in seconds
    )


def test_a_match_of_two_openings_plays_both_pairs_with_one_stockfish_per_side_and_is_rejudged_per_game(
    recorder: Recorder, build_cache: ArtifactCache
) -> None:
    """``openings.per_match: 2``: four games from each game's own opening, two engine processes
    for the whole match; the coordinator's re-judging replays each game on its own opening
    and rejects the transcript once its openings are swapped; the PGN names each game's FEN."""
    stockfish = engine_or_skip("stockfish")
    base = entry_ref(stockfish)
    refs = {n: dataclasses.replace(base, name=n, engine=merged(base.engine, {"nodes": 2000})) for n in "ab"}
    spec = two_openings(refs)
    counter = SpawnCounter(recorder)
    dirs = build_cache.ensure_all(refs, local_fetch({base.digest: stockfish}))
    result = play_match(spec, dirs, counter, "kept-engines-test")
    assert [g.verdict.kind for g in result.games] == [VerdictKind.NORMAL] * 4, result.games
    assert [g.board_id for g in result.games] == ["opening-001"] * 2 + ["opening-002"] * 2
    assert [g.order for g in result.games] == [["a", "b"], ["b", "a"]] * 2
    assert len(counter.spawned) == 2  # one engine a side for both pairs
    assert len(recorder.sandboxes) == 2 and all(s.closed_at is not None for s in recorder.sandboxes)
    verify_result(spec, result)  # every game replays on its own opening
    swapped = dataclasses.replace(result, games=[*result.games[2:], *result.games[:2]])
    with pytest.raises(
        ResultMismatch, match="game 1: played on board 'opening-002', not the planned 'opening-001'"
    ):
        verify_result(spec, swapped)
    # the same transcripts claiming the planned openings: the moves do not replay there
    relabelled = [
        dataclasses.replace(g, board_id=p.board_id)
        for g, p in zip(swapped.games, spec.planned_games(), strict=True)
    ]
    with pytest.raises(ResultMismatch, match="game 1"):
        verify_result(spec, dataclasses.replace(result, games=relabelled))
    fens = [game_pgn("t", spec, n, g).headers["FEN"] for n, g in enumerate(result.games, start=1)]
    assert fens == [OPENING] * 2 + [SECOND_OPENING] * 2
    openings = [game_pgn("t", spec, n, g).headers["Opening"] for n, g in enumerate(result.games, start=1)]
    assert openings == ["opening-001"] * 2 + ["opening-002"] * 2


def test_a_match_of_two_openings_that_fails_early_names_each_planned_game_board() -> None:
    """A match given up (the attempt cap) has one ``system_error`` game per planned game,
    each on its planned opening: what re-judging and the report expect of the match."""
    spec = two_openings({})
    games = system_error_result(spec, "gave up", worker="w").games
    assert [(g.order, g.board_id) for g in games] == [
        (["a", "b"], "opening-001"),
        (["b", "a"], "opening-001"),
        (["a", "b"], "opening-002"),
        (["b", "a"], "opening-002"),
    ]
