"""Tablebase adjudication (runner/domain/tablebase.py): python-chess's Syzygy probe on 3-piece
WDL tables, asked by the worker after each move and again by the coordinator's re-judging.

tourney ships no tables: these come from python-chess's own source distribution
(``python -m tests.fetch_syzygy``); without them the tests skip saying so."""

from __future__ import annotations

import dataclasses

import chess
import pytest

from runner.domain.adjudication import Adjudication, ruling
from runner.domain.match_values import (
    EntryRef,
    GameRecord,
    Limits,
    MatchResult,
    MatchSpec,
    MoveRecord,
    Verdict,
    VerdictKind,
)
from runner.domain.tablebase import TbRule, tablebase_outcome
from runner.domain.verify import ResultMismatch, verify_result
from tests.fetch_syzygy import syzygy_dir

TABLES = syzygy_dir()
pytestmark = pytest.mark.skipif(
    TABLES is None, reason="no 3-piece Syzygy tables: python -m tests.fetch_syzygy"
)
#: white king takes the black knight next to it: KQvK, black to move, white wins
KNIGHT_TAKEN = "4k3/8/8/8/8/8/3n4/3QK3 w - - 0 1"


def rule(**kw: object) -> TbRule:
    return TbRule(path=str(TABLES), **kw)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("fen", "winners", "words"),
    [
        ("4k3/8/8/8/8/8/8/3QK3 w - - 0 1", (0,), "tablebase win for white (3 pieces)"),
        ("4k3/8/8/8/8/8/8/3QK3 b - - 0 1", (0,), "tablebase win for white (3 pieces)"),
        ("4k3/8/8/8/8/8/8/r3K3 w - - 0 1", (1,), "tablebase win for black (3 pieces)"),
        ("4k3/8/8/8/8/8/8/3NK3 w - - 0 1", (), "tablebase draw (3 pieces)"),
        ("8/8/8/8/8/2k5/p7/K7 w - - 0 1", (), "tablebase draw (3 pieces)"),  # KPvK, the pawn stopped
    ],
)
def test_the_tables_decide_three_piece_positions(fen: str, winners: tuple[int, ...], words: str) -> None:
    out = tablebase_outcome(rule(), chess.Board(fen))
    assert out is not None and out.winners == winners and out.reason == f"adjudication: {words}"


def test_more_pieces_than_the_rule_or_the_tables_is_no_adjudication() -> None:
    assert tablebase_outcome(rule(), chess.Board(KNIGHT_TAKEN)) is None  # 4 pieces, 3-piece tables
    assert tablebase_outcome(rule(pieces=3), chess.Board("4k3/8/8/8/8/8/8/3QK3 w - - 0 1")) is not None
    assert tablebase_outcome(rule(), chess.Board()) is None


def spec_from(fen: str) -> MatchSpec:
    entries = {
        n: EntryRef(n, "0" * 64, "uci", ["/usr/games/stockfish"], engine={"nodes": 100}) for n in ("w", "b")
    }
    plain = MatchSpec.of("m", "chess", "default", fen, [["w", "b"]], entries, Limits(), 1, "none")
    return dataclasses.replace(plain, adjudication=Adjudication(tb=rule()).to_dict())


def record(moves: list[str], winner: str | None, reason: str) -> MatchResult:
    players = ["w", "b"]
    game = GameRecord(
        order=players,
        winner=winner,
        scores={"w": int(winner == "w"), "b": int(winner == "b")},
        verdict=Verdict(VerdictKind.NORMAL),
        moves=[MoveRecord(players[i % 2], m, 5.0) for i, m in enumerate(moves)],
        reason=reason,
    )
    return MatchResult("m", [game])


def test_the_coordinator_accepts_the_tables_ruling_and_rejects_a_false_one() -> None:
    spec = spec_from(KNIGHT_TAKEN)
    assert (
        ruling(Adjudication(tb=rule()), [(0, None)], chess.Board("4k3/8/8/8/8/8/3K4/3Q4 b - - 0 1"))
        is not None
    )
    verify_result(spec, record(["e1d2"], "w", "adjudication: tablebase win for white (3 pieces)"))
    with pytest.raises(ResultMismatch):  # the tables say white wins, not a draw
        verify_result(spec, record(["e1d2"], None, "adjudication: tablebase draw (3 pieces)"))
    with pytest.raises(ResultMismatch, match="after move 1, not at its end"):  # played on past the ruling
        verify_result(spec, record(["e1d2", "e8f7"], "w", "adjudication: tablebase win for white (3 pieces)"))
    with pytest.raises(ResultMismatch, match="justify"):  # 4 pieces: the tables say nothing
        verify_result(spec, record(["d1c2"], "w", "adjudication: tablebase win for white (3 pieces)"))
