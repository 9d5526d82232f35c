"""Adjudication from reported scores (runner/domain/adjudication.py): the rules, the match loop
ending a game by them, and the coordinator accepting one only where the scores justify it."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from runner.domain.adjudication import Adjudication, DrawRule, ResignRule, ruling
from runner.domain.entries import load_entry
from runner.domain.match_values import (
    EntryRef,
    GameRecord,
    Limits,
    MatchResult,
    MatchSpec,
    MoveRecord,
    SearchInfo,
    Verdict,
    VerdictKind,
)
from runner.domain.verify import ResultMismatch, verify_result
from workers.match import play_match
from workers.sandbox import PlainHostFactory

FAKE = Path(__file__).resolve().parents[1] / "fixtures" / "chess" / "fake-uci"


def cp(*scores: int | None) -> list[tuple[int, SearchInfo | None]]:
    """Moves alternating white, black, each with its own reported score (None: no report)."""
    return [(i % 2, SearchInfo(cp=s, depth=9) if s is not None else None) for i, s in enumerate(scores)]


def test_resign_needs_movecount_own_scores_at_or_below_minus_score() -> None:
    rules = Adjudication(resign=ResignRule(movecount=2, score=500))
    assert ruling(rules, cp(-600, 600)) is None  # white only once so far
    out = ruling(rules, cp(-600, 600, -500))
    assert out is not None and out.winners == (1,) and out.reason.startswith("adjudication: resign (white's")
    assert ruling(rules, cp(-600, 600, None, 600, -600)) is None  # a move without a score breaks it
    mate = [(0, SearchInfo(mate=-3)), (1, SearchInfo(cp=0)), (0, SearchInfo(mate=-2))]
    assert ruling(rules, mate) is not None  # a mate against it counts


def test_twosided_resign_needs_the_winner_to_agree() -> None:
    rules = Adjudication(resign=ResignRule(movecount=1, score=300, twosided=True))
    assert ruling(rules, cp(-400, 100)) is None
    out = ruling(rules, cp(-400, 350))
    assert out is not None and out.winners == (1,)


def test_draw_after_movenumber_with_both_sides_near_zero_and_maxmoves() -> None:
    rules = Adjudication(draw=DrawRule(movenumber=2, movecount=2, score=10))
    assert ruling(rules, cp(5, -5, 0)) is None  # before move 2 is complete
    out = ruling(rules, cp(5, -5, 0, 10))
    assert out is not None and out.winners == () and "draw" in out.reason
    assert ruling(rules, cp(5, -5, 0, 11)) is None
    assert ruling(Adjudication(maxmoves=2), cp(None, None, None)) is None
    out = ruling(Adjudication(maxmoves=2), cp(None, None, None, None))
    assert out is not None and out.reason == "adjudication: draw at 2 moves (maxmoves)"


def fake_spec(adjudication: Adjudication) -> MatchSpec:
    (spec,) = [s for s in load_entry(FAKE) if s.name == "fools-mate"]
    entries = {
        n: EntryRef(n, spec.digest, "uci", spec.run, None, spec.args, engine={"tc": "5+0.1"})
        for n in ("w", "b")
    }
    plain = MatchSpec.of("m", "chess", "default", "startpos", [["w", "b"]], entries, Limits(), 1, "none")
    return dataclasses.replace(plain, adjudication=adjudication.to_dict())


def test_the_match_loop_adjudicates_and_the_coordinator_accepts_it() -> None:
    # the fake engine reports -25 cp on every move: with resign at 20 cp after 1 move, white
    # (f2f3, -25) is adjudicated lost after its first move
    spec = fake_spec(Adjudication(resign=ResignRule(movecount=1, score=20)))
    result = play_match(spec, {"w": FAKE, "b": FAKE}, PlainHostFactory())
    (game,) = result.games
    assert [m.move for m in game.moves] == ["f2f3"]
    assert (game.winner, game.verdict.kind) == ("b", VerdictKind.NORMAL)
    assert game.reason.startswith("adjudication: resign")
    verify_result(spec, result)


def recorded(scores: list[int], reason: str, winner: str | None) -> MatchResult:
    moves = [
        MoveRecord("w" if i % 2 == 0 else "b", m, 1.0, None, SearchInfo(cp=s))
        for i, (m, s) in enumerate(zip(["e2e4", "e7e5", "g1f3", "b8c6"], scores, strict=False))
    ]
    scores_by = {"w": int(winner == "w"), "b": int(winner == "b")}
    game = GameRecord(["w", "b"], winner, scores_by, Verdict(VerdictKind.NORMAL, None, reason), moves, reason)
    return MatchResult("m", [game])


def test_the_coordinator_rejects_an_adjudication_the_scores_do_not_justify() -> None:
    spec = fake_spec(Adjudication(resign=ResignRule(movecount=2, score=300)))
    reason = "adjudication: resign (white's score at -300 cp or worse for 2 moves)"
    verify_result(spec, recorded([-400, 400, -400], reason, "b"))
    with pytest.raises(ResultMismatch, match="do not justify"):
        verify_result(spec, recorded([-400, 400, -200], reason, "b"))
    with pytest.raises(ResultMismatch, match="after move 3, not at its end"):
        verify_result(spec, recorded([-400, 400, -400, 400], reason, "b"))
    with pytest.raises(ResultMismatch, match="no adjudication rules"):
        verify_result(fake_spec(Adjudication()), recorded([-400, 400, -400], reason, "b"))
