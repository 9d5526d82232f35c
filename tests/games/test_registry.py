"""The game registry: names, parameters, errors."""

from __future__ import annotations

import pytest

from runner.domain.games import GAME_NAMES, BadMoveText, BoardError, IllegalMove, RulesError, get_game


def test_every_seed_game_is_registered() -> None:
    assert set(GAME_NAMES) == {"boxing", "chess", "pousse", "mnk", "gomoku"}
    for name in GAME_NAMES:
        game = get_game(name)
        assert game.name == name
        game.validate_board(game.default_board())


def test_unknown_game_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known games: boxing, chess, gomoku, mnk, pousse"):
        get_game("checkers")


def test_boxing_max_box_parameter() -> None:
    game = get_game("boxing", max_box=4)
    state = game.new_game(game.default_board(), 2)
    assert max(m.size for m in game.legal_moves(state)) == 4
    with pytest.raises(IllegalMove, match="larger than the maximum 4"):
        game.play(state, game.parse_move("1 1 5"))


def test_unknown_parameters_are_named() -> None:
    with pytest.raises(ValueError, match="max_bx"):
        get_game("boxing", max_bx=3)
    with pytest.raises(ValueError, match=r"unknown parameter.*size"):
        get_game("pousse", size=6)
    with pytest.raises(ValueError, match="positive integer"):
        get_game("boxing", max_box=0)


def test_errors_share_one_base() -> None:
    for error in (BoardError, BadMoveText, IllegalMove):
        assert issubclass(error, RulesError)
        assert issubclass(error, ValueError)


def test_gomoku_is_mnk_with_five_on_fifteen() -> None:
    gomoku = get_game("gomoku")
    assert gomoku.default_board() == "15 15 5"
    gomoku.validate_board("25 25 5")
    with pytest.raises(BoardError):
        get_game("mnk").validate_board("25 25 5")
