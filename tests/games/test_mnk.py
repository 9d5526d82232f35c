"""m,n,k games (seed 004) and gomoku."""

from __future__ import annotations

import pytest

from runner.domain.games import BadMoveText, BoardError, IllegalMove
from runner.domain.games.mnk import Gomoku, Mnk, MnkMove, MnkState

GAME = Mnk()


def replay(board: str, moves: str, game: Mnk = GAME) -> MnkState:
    state = game.new_game(board, 2)
    for text in moves.split(","):
        if text.strip():
            state = game.play(state, game.parse_move(text))
    return state


def test_row_wins_for_x() -> None:
    state = replay("3 3 3", "1 1, 1 2, 2 1, 2 2, 3 1")
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.winners == (0,) and outcome.scores == (1, 0)
    assert outcome.reason == "X made 3 in a row"
    assert GAME.legal_moves(state) == []


@pytest.mark.parametrize(
    ("moves", "winner"),
    [
        ("1 1, 2 1, 1 2, 2 2, 1 3", 0),  # column
        ("1 1, 2 1, 2 2, 3 1, 3 3", 0),  # diagonal
        ("1 1, 3 1, 1 2, 2 2, 3 3, 1 3", 1),  # anti-diagonal, for O
    ],
)
def test_every_direction(moves: str, winner: int) -> None:
    outcome = GAME.outcome(replay("3 3 3", moves))
    assert outcome is not None and outcome.winners == (winner,)


def test_k_or_more_wins() -> None:
    # X fills the gap of X X . X X: five in a row where K is 4.
    state = replay("7 2 4", "1 1, 1 2, 2 1, 2 2, 4 1, 7 2, 5 1, 6 2, 3 1")
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.reason == "X made 5 in a row"


def test_draw_on_a_full_board() -> None:
    # X O X / X O O / O X X: nobody has three.
    state = replay("3 3 3", "1 1, 2 1, 3 1, 2 2, 1 2, 3 2, 2 3, 1 3, 3 3")
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.winners == () and outcome.scores == (0, 0) and outcome.reason == "draw"


def test_win_on_the_last_cell_is_a_win_not_a_draw() -> None:
    state = replay("3 3 3", "1 1, 2 1, 3 1, 2 2, 1 2, 3 2, 2 3, 3 3, 1 3")
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (0,)


def test_non_square_boards_and_k_up_to_the_longer_side() -> None:
    state = replay("5 1 5", "1 1, 2 1, 3 1, 4 1, 5 1")
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.reason == "draw"
    outcome = GAME.outcome(replay("1 4 2", "1 1, 1 3, 1 2"))
    assert outcome is not None and outcome.winners == (0,)
    state = replay("2 2 1", "2 2")
    assert GAME.outcome(state) is not None


@pytest.mark.parametrize("text", ["3 3", "0 3 3", "21 3 3", "3 3 4", "3 3 0", "a b c", ""])
def test_invalid_boards(text: str) -> None:
    with pytest.raises(BoardError):
        GAME.validate_board(text)


def test_board_limits() -> None:
    GAME.validate_board("20 20 20")
    GAME.validate_board("1 20 20")
    Gomoku().validate_board("25 25 5")
    with pytest.raises(BoardError):
        Gomoku().validate_board("26 26 5")


def test_illegal_moves() -> None:
    state = replay("3 3 3", "2 2")
    with pytest.raises(IllegalMove, match="already taken by X"):
        GAME.play(state, MnkMove(2, 2))
    with pytest.raises(IllegalMove, match="off the 3x3 board"):
        GAME.play(state, MnkMove(4, 1))
    assert MnkMove(2, 2) not in GAME.legal_moves(state)
    assert len(GAME.legal_moves(state)) == 8


@pytest.mark.parametrize("text", ["1 1", "20 3", "15 15"])
def test_move_text_round_trip(text: str) -> None:
    assert GAME.format_move(GAME.parse_move(text)) == text
    assert GAME.parse_move(f"  {text}\n") == GAME.parse_move(text)


@pytest.mark.parametrize("text", ["", "1", "1 2 3", "x y", "0 1", "1,2", "H8"])
def test_bad_move_text(text: str) -> None:
    with pytest.raises(BadMoveText):
        GAME.parse_move(text)


def test_render_shows_marks_and_numbers() -> None:
    state = replay("4 3 3", "1 1, 4 3")
    lines = GAME.render(state).splitlines()
    assert lines[0].split() == ["1", "2", "3", "4"]
    assert lines[1].split() == ["1", "X", ".", ".", "."]
    assert lines[3].split() == ["3", ".", ".", ".", "O"]


def test_forfeit_and_seats() -> None:
    state = replay("3 3 3", "1 1")
    assert GAME.to_move(state) == 1
    assert [GAME.seat_mark(state, s) for s in (0, 1)] == ["X", "O"]
    over = GAME.forfeit(state, 1)
    outcome = GAME.outcome(over)
    assert outcome is not None and outcome.winners == (0,) and outcome.reason == "O forfeited"
    with pytest.raises(ValueError):
        GAME.new_game("3 3 3", 3)


def test_gomoku_five_in_a_row() -> None:
    game = Gomoku()
    moves = ", ".join(f"{x} 8, {x} 9" for x in range(4, 8)) + ", 8 8"
    state = replay(game.default_board(), moves, game)
    outcome = game.outcome(state)
    assert outcome is not None and outcome.reason == "X made 5 in a row"
