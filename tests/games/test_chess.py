"""game: chess (runner/domain/games/chess.py): python-chess's rules, ends named as PGN names them,
and the coordinator's re-judging of chess transcripts."""

from __future__ import annotations

import random

import chess
import pytest

from runner.domain.games import get_game
from runner.domain.games.base import BadMoveText, BoardError, IllegalMove
from runner.domain.games.chess import Chess, ChessState
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
from runner.domain.wire import decode, encode, to_builtins


def played(moves: str, board: str = "startpos", game: Chess | None = None) -> ChessState:
    game = game or Chess()
    state = game.new_game(board, 2)
    for text in moves.split():
        state = game.play(state, game.parse_move(text))
    return state


def test_fools_mate_is_checkmate_for_black() -> None:
    outcome = Chess().outcome(played("f2f3 e7e5 g2g4 d8h4"))
    assert outcome is not None
    assert (outcome.winners, outcome.scores, outcome.reason) == ((1,), (0, 1), "checkmate")


@pytest.mark.parametrize(
    ("board", "moves", "reason"),
    [
        ("startpos", "e2e4", None),
        ("7k/8/6K1/5Q2/8/8/8/8 w - - 0 1", "f5f7", "stalemate"),
        ("8/8/8/8/3pk3/8/2N1K3/8 w - - 0 1", "c2d4", "insufficient material"),
        ("startpos", "g1f3 g8f6 f3g1 f6g8 g1f3 g8f6 f3g1 f6g8", "3-fold repetition"),
        ("7k/8/8/8/8/8/8/R6K w - - 99 80", "a1a2", "50-move rule"),
    ],
)
def test_draws_end_without_a_claim(board: str, moves: str, reason: str | None) -> None:
    outcome = Chess().outcome(played(moves, board))
    assert (outcome.reason if outcome else None) == reason
    if outcome is not None:
        assert outcome.winners == () and outcome.scores == (0, 0)


def test_moves_are_uci_text_and_the_rules_check_them() -> None:
    game = Chess()
    with pytest.raises(BadMoveText, match="not a UCI move"):
        game.parse_move("Nf3")
    with pytest.raises(IllegalMove, match="e2e5 is not legal"):
        game.play(game.new_game("startpos", 2), game.parse_move("e2e5"))
    assert game.format_move(game.parse_move("e7e8q")) == "e7e8q"


def test_boards_are_startpos_or_a_legal_fen() -> None:
    game = Chess()
    assert game.start_fen("startpos") is None
    assert game.start_fen("rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1") is not None
    with pytest.raises(BoardError, match="not a FEN"):
        game.validate_board("not a position")
    with pytest.raises(BoardError, match="not a legal position"):
        game.validate_board("8/8/8/8/8/8/8/8 w - - 0 1")  # no kings


def test_chess960_starts_come_from_the_seeded_rng_and_castle_king_takes_rook() -> None:
    game = get_game("chess", variant="chess960")
    assert isinstance(game, Chess)
    boards = {game.generate_board(random.Random(seed)) for seed in range(5)}
    assert len(boards) > 1
    assert boards == {game.generate_board(random.Random(seed)) for seed in range(5)}
    # the standard start as a 960 position: O-O is the king taking its rook
    state = played("e2e4 e7e5 g1f3 b8c6 f1c4 g8f6", game=game)
    castled = game.play(state, game.parse_move("e1h1"))
    assert castled.board.piece_at(6) is not None and castled.board.piece_at(6).symbol() == "K"  # type: ignore[union-attr]


def chess_spec() -> MatchSpec:
    entries = {n: EntryRef(n, "0" * 64, "uci", ["engine"]) for n in ("a", "b")}
    return MatchSpec.of("m", "chess", "b", "startpos", [["a", "b"]], entries, Limits(), 1)


def record(moves: list[str], winner: str | None, scores: dict[str, int], reason: str) -> MatchResult:
    players = ["a", "b"]
    transcript = [
        MoveRecord(players[i % 2], m, 1.0, None, SearchInfo(cp=10, depth=5)) for i, m in enumerate(moves)
    ]
    game = GameRecord(
        ["a", "b"], winner, scores, Verdict(VerdictKind.NORMAL, None, reason), transcript, reason
    )
    return MatchResult("m", [game])


def test_the_coordinator_replays_a_chess_game_and_accepts_only_what_the_rules_give() -> None:
    mate = ["f2f3", "e7e5", "g2g4", "d8h4"]
    verify_result(chess_spec(), record(mate, "b", {"a": 0, "b": 1}, "checkmate"))
    with pytest.raises(ResultMismatch, match="winner 'a'"):
        verify_result(chess_spec(), record(mate, "a", {"a": 1, "b": 0}, "checkmate"))
    with pytest.raises(ResultMismatch, match="not legal"):
        verify_result(chess_spec(), record(["e2e5"], None, {"a": 0, "b": 0}, "x"))


def test_search_info_travels_with_the_move() -> None:
    move = MoveRecord("a", "e2e4", 12.5, 3.0, SearchInfo(cp=31, depth=14))
    assert to_builtins(move)["search"] == {"cp": 31, "mate": None, "depth": 14}
    assert decode(encode(move), MoveRecord) == move
    plain = MoveRecord("a", "e2e4", 12.5, 3.0)
    assert to_builtins(plain)["search"] is None and decode(encode(plain), MoveRecord) == plain


def test_the_ends_agree_with_python_chess_on_its_full_move_stack() -> None:
    # random games (seeded, shuffling pieces about so that positions repeat): the state keeps no
    # move stack, so its repetition rule is checked against python-chess's own on a board with one
    game = Chess()
    rng = random.Random(29)
    reasons = set()
    for _ in range(20):
        state = game.new_game("startpos", 2)
        reference = chess.Board()
        while game.outcome(state) is None:
            moves = sorted(reference.legal_moves, key=lambda m: (m.uci() not in _SHUFFLES, m.uci()))
            move = moves[0] if rng.random() < 0.6 and moves[0].uci() in _SHUFFLES else rng.choice(moves)
            state = game.play(state, move)
            reference.push(move)
            expected = reference.outcome(claim_draw=False)
            repeated = reference.is_repetition(3)
            fifty = reference.is_fifty_moves()
            assert (game.outcome(state) is not None) == (expected is not None or repeated or fifty)
        outcome = game.outcome(state)
        assert outcome is not None
        reasons.add(outcome.reason)
    assert "3-fold repetition" in reasons


_SHUFFLES = {"g1f3", "f3g1", "g8f6", "f6g8", "b1c3", "c3b1", "b8c6", "c6b8"}


_REASONS = {
    chess.Termination.CHECKMATE: "checkmate",
    chess.Termination.STALEMATE: "stalemate",
    chess.Termination.INSUFFICIENT_MATERIAL: "insufficient material",
    chess.Termination.SEVENTYFIVE_MOVES: "50-move rule",
}


def _reference_reason(board: chess.Board) -> str | None:
    """The end python-chess's own ``outcome`` names on a board with its whole move stack, then
    the claim-free repetition and 50-move draws, in the order the module doc gives."""
    over = board.outcome(claim_draw=False)
    if over is not None:
        return _REASONS[over.termination]
    if board.is_repetition(3):
        return "3-fold repetition"
    return "50-move rule" if board.is_fifty_moves() else None


@pytest.mark.parametrize(
    ("board", "moves"),
    [
        ("k7/2Q5/1K6/8/8/8/8/8 w - - 0 1", "c7c8"),  # mate, as its own check looks for no legal move
        ("7k/8/6K1/5N2/8/8/8/8 w - - 0 1", "f5h6"),  # no legal move, no check, and no mating material
        ("7k/8/8/8/8/8/8/R6K w - - 149 90", "a1a2"),  # the 75-move clock (a FEN can start near it)
        ("7k/8/8/8/8/8/1p6/R6K b - - 99 80", "b2a1q"),  # a pawn move resets the clock: no draw
    ],
)
def test_every_end_is_python_chess_outcome_in_its_order(board: str, moves: str) -> None:
    state = played(moves, board)
    reference = chess.Board(board)
    for text in moves.split():
        reference.push_uci(text)
    outcome = Chess().outcome(state)
    assert (outcome.reason if outcome else None) == _reference_reason(reference)


def test_random_games_end_as_python_chess_says_on_every_move() -> None:
    # uniformly random moves reach every end: mates, stalemates, bare kings, the 50-move rule
    game = Chess()
    rng = random.Random(9)
    reasons = set()
    for _ in range(40):
        state = game.new_game("startpos", 2)
        reference = chess.Board()
        while game.outcome(state) is None:
            move = rng.choice(list(reference.legal_moves))
            state = game.play(state, move)
            reference.push(move)
            outcome = game.outcome(state)
            assert (outcome.reason if outcome else None) == _reference_reason(reference)
        reasons.add(game.outcome(state).reason)  # type: ignore[union-attr]
    assert {"checkmate", "insufficient material", "50-move rule"} <= reasons
