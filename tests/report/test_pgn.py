"""PGN of chess games (runner/report/pgn.py): tags, per-move comments and clocks, from records."""

from __future__ import annotations

import dataclasses
import io

import chess.pgn

from runner.domain.match_values import (
    EntryRef,
    GameRecord,
    Limits,
    MatchSpec,
    MoveRecord,
    SearchInfo,
    Verdict,
    VerdictKind,
)
from runner.report.pgn import game_pgn, score_text

BOOK = "rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2"


def spec(board_text: str = "startpos", board_id: str = "default", variant: str = "standard") -> MatchSpec:
    entries = {
        "sf": EntryRef("sf", "0" * 64, "uci", ["sf"], engine={"tc": "10+0.1"}),
        "gc": EntryRef("gc", "1" * 64, "uci", ["gc"], engine={"tc": "10+0.1"}),
    }
    return MatchSpec.of(
        "m",
        "chess",
        board_id,
        board_text,
        [["sf", "gc"]],
        entries,
        Limits(),
        1,
        game_params={"variant": variant},
    )


def parsed(text: str) -> chess.pgn.Game:
    game = chess.pgn.read_game(io.StringIO(text))
    assert game is not None
    return game


def test_a_flag_fall_from_a_book_start_has_its_tags_comments_and_clocks() -> None:
    moves = [
        MoveRecord("sf", "g1f3", 120.0, 100.0, SearchInfo(cp=31, depth=14)),
        MoveRecord("gc", "b8c6", 2500.0, 2400.0, SearchInfo(mate=-3, depth=9)),
    ]
    verdict = Verdict(VerdictKind.TIMEOUT, "sf", "flag fell: no move with 0.000 s left of 10+0.1")
    record = GameRecord(["sf", "gc"], "gc", {"sf": 0, "gc": 1}, verdict, moves, "opponent forfeited")
    text = str(game_pgn("engines", spec(BOOK, "book-03"), 2, record, when=86400.0 * 365))
    game = parsed(text)
    h = game.headers
    assert (h["Event"], h["Site"], h["Date"], h["Round"]) == ("engines", "tourney", "1971.01.01", "2")
    assert (h["White"], h["Black"], h["Result"]) == ("sf", "gc", "0-1")
    assert (h["TimeControl"], h["Termination"], h["Opening"]) == ("10+0.1", "time forfeit", "book-03")
    assert (h["SetUp"], h["FEN"]) == ("1", BOOK)
    first, second = game.mainline()
    assert first.move.uci() == "g1f3" and first.comment.startswith("+0.31/14 0.120s")
    assert first.clock() == 10.0 - 0.12 + 0.1
    assert second.comment.startswith("-M3/9 2.500s")
    assert "timeout (sf): flag fell" in second.comment
    assert second.clock() == 10.0 - 2.5 + 0.1


def test_a_checkmate_from_the_standard_start_needs_no_fen_and_ends_normal() -> None:
    moves = [
        MoveRecord("sf" if i % 2 == 0 else "gc", m, 10.0)
        for i, m in enumerate(["f2f3", "e7e5", "g2g4", "d8h4"])
    ]
    verdict = Verdict(VerdictKind.NORMAL, None, "checkmate")
    record = GameRecord(["sf", "gc"], "gc", {"sf": 0, "gc": 1}, verdict, moves, "checkmate")
    game = parsed(str(game_pgn("e", spec(), 1, record)))
    assert "FEN" not in game.headers and "Opening" not in game.headers
    assert (game.headers["Termination"], game.headers["Result"]) == ("normal", "0-1")
    assert game.end().board().is_checkmate()
    assert game.end().comment.endswith("checkmate")


def test_chess960_games_say_their_variant_and_start() -> None:
    record = GameRecord(
        ["sf", "gc"], None, {"sf": 0, "gc": 0}, Verdict(VerdictKind.SYSTEM_ERROR, None, "x"), []
    )
    game = parsed(str(game_pgn("e", spec(variant="chess960"), 1, record)))
    assert game.headers["Variant"] == "Chess960" and "FEN" in game.headers
    assert (game.headers["Result"], game.headers["Termination"]) == ("*", "unterminated")


def test_scores_read_as_cutechess_writes_them() -> None:
    assert score_text(SearchInfo(cp=-5, depth=1)) == "-0.05/1"
    assert score_text(SearchInfo(mate=2)) == "+M2"
    assert score_text(None) == ""


def test_an_adjudicated_game_says_so_in_termination() -> None:
    moves = [MoveRecord("sf", "e2e4", 10.0, None, SearchInfo(cp=900)), MoveRecord("gc", "e7e5", 10.0)]
    reason = "adjudication: draw at 1 moves (maxmoves)"
    record = GameRecord(
        ["sf", "gc"], None, {"sf": 0, "gc": 0}, Verdict(VerdictKind.NORMAL, None, reason), moves, reason
    )
    game = parsed(str(game_pgn("e", spec(), 1, record)))
    assert (game.headers["Termination"], game.headers["Result"]) == ("adjudication", "1/2-1/2")
    assert game.end().comment.endswith(reason)


def test_plycount_and_the_standard_time_control_forms_with_limits_in_their_own_tags() -> None:
    """Issue 35, item 6: PlyCount; TimeControl as the PGN standard writes it; node and depth
    limits in a tag of their own; each side's tags when they differ (odds)."""
    moves = [
        MoveRecord("sf" if i % 2 == 0 else "gc", m, 10.0) for i, m in enumerate(["e2e4", "e7e5", "g1f3"])
    ]
    record = GameRecord(["sf", "gc"], None, {"sf": 0, "gc": 0}, Verdict(VerdictKind.NORMAL), moves, "draw")

    def tags(white: dict[str, object], black: dict[str, object]) -> dict[str, str]:
        s = spec()
        entries = {
            "sf": dataclasses.replace(s.entries["sf"], engine=white),
            "gc": dataclasses.replace(s.entries["gc"], engine=black),
        }
        h = parsed(str(game_pgn("e", dataclasses.replace(s, entries=entries), 1, record))).headers
        keys = ["TimeControl", "SearchLimit", "WhiteTimeControl", "BlackTimeControl", "PlyCount"]
        keys += ["WhiteSearchLimit", "BlackSearchLimit"]
        return {k: h[k] for k in keys if k in h}

    assert tags({"tc": "40/60"}, {"tc": "40/60"}) == {"TimeControl": "40/60", "PlyCount": "3"}
    assert tags({"st_s": 0.1}, {"st_s": 0.1}) == {"TimeControl": "1/0.1", "PlyCount": "3"}
    assert tags({"nodes": 2000}, {"nodes": 2000}) == {
        "TimeControl": "-",
        "SearchLimit": "nodes=2000",
        "PlyCount": "3",
    }
    assert tags({"tc": "10+0.1"}, {"tc": "5+0.1", "depth": 8}) == {
        "WhiteTimeControl": "10+0.1",
        "BlackTimeControl": "5+0.1",
        "WhiteSearchLimit": "-",
        "BlackSearchLimit": "depth=8",
        "PlyCount": "3",
    }


def test_a_files_writer_numbers_its_games_round_by_round() -> None:
    moves = [MoveRecord("sf", "e2e4", 10.0)]
    record = GameRecord(["sf", "gc"], None, {"sf": 0, "gc": 0}, Verdict(VerdictKind.SYSTEM_ERROR), moves, "x")
    rounds = [game_pgn("e", spec(), 1, record, round_text=str(n)).headers["Round"] for n in (1, 2, 3)]
    assert rounds == ["1", "2", "3"]
