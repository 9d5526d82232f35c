"""Pousse rules (seed 003)."""

from __future__ import annotations

import pytest

from runner.domain.games import BadMoveText, BoardError, IllegalMove
from runner.domain.games.pousse import Pousse, PousseMove, PousseState

from .conftest import SEEDS

GAME = Pousse()

SEED_PICTURE = """\
     1 2 3 4
    +-+-+-+-+
  1 | |O| | |
    +-+-+-+-+
  2 |X|X| |X|
    +-+-+-+-+
  3 | | | | |
    +-+-+-+-+
  4 | |O| | |
    +-+-+-+-+
"""


def replay(size: int, moves: str) -> PousseState:
    state = GAME.new_game(str(size), 2)
    for text in moves.split():
        state = GAME.play(state, GAME.parse_move(text))
    return state


def position(*rows: str) -> PousseState:
    """A mid-game state with the given rows ('.' empty) and X to move."""
    cells = "".join(rows)
    n = len(rows)
    return PousseState(n, cells, 0, sum(c != "." for c in cells), frozenset({cells + "X"}))


def test_seed_sample_position() -> None:
    state = replay(4, "L2 T2 L2 B2 R2")
    assert GAME.render(state) == SEED_PICTURE
    assert GAME.outcome(state) is None
    assert GAME.to_move(state) == 1  # O answers, e.g. with T2


def test_seed_picture_is_the_seed_documents_own() -> None:
    seed = next(SEEDS.glob("003_*.txt"), None) if SEEDS.is_dir() else None
    if seed is None:
        pytest.skip("seed documents not present")
    text = seed.read_text()
    assert SEED_PICTURE in text


def test_empty_board_render_and_moves() -> None:
    state = GAME.new_game("4", 2)
    assert GAME.render(state).count("| | | | |") == 4
    moves = GAME.legal_moves(state)
    assert len(moves) == 16
    assert {GAME.format_move(m) for m in moves} >= {"L1", "R4", "T2", "B3"}


def test_render_of_a_two_digit_board() -> None:
    lines = GAME.render(GAME.new_game("12", 2)).splitlines()
    assert lines[0].split() == ["1", "1", "1"]
    assert lines[1].split() == [str(c % 10) for c in range(1, 13)]
    assert lines[3].startswith("  1 |") and lines[-2].startswith(" 12 |")


@pytest.mark.parametrize("text", ["L1", "R20", "T7", "B12", " T2\n"])
def test_move_text_round_trip(text: str) -> None:
    move = GAME.parse_move(text)
    assert GAME.format_move(move) == text.strip()
    assert GAME.parse_move(GAME.format_move(move)) == move


@pytest.mark.parametrize("text", ["", "X1", "L", "l2", "L0", "L-1", "L 2", "T2 B3", "L1x"])
def test_bad_move_text(text: str) -> None:
    with pytest.raises(BadMoveText):
        GAME.parse_move(text)


def test_move_off_the_board_is_illegal() -> None:
    with pytest.raises(IllegalMove, match="L5 is off a 4x4 board"):
        GAME.play(GAME.new_game("4", 2), PousseMove("L", 5))


@pytest.mark.parametrize("text", ["3", "21", "", "six", "6 6", "-5"])
def test_board_sizes(text: str) -> None:
    with pytest.raises(BoardError):
        GAME.validate_board(text)


def test_board_range_limits() -> None:
    GAME.validate_board("4")
    GAME.validate_board("20\n")


def test_push_moves_markers_up_to_the_first_gap() -> None:
    state = position("XO.O", "....", "....", "....")
    after = GAME.play(state, PousseMove("L", 1))  # X pushes X,O into the gap; the last O stays
    assert after.cells[:4] == "XXOO"
    assert after.markers == state.markers + 1


def test_push_off_removes_the_last_marker() -> None:
    state = position("XOXO", "....", "....", "....")
    after = GAME.play(state, PousseMove("L", 1))
    assert after.cells[:4] == "XXOX"  # the O at the far end fell off
    assert after.markers == state.markers

    after = GAME.play(state, PousseMove("R", 1))
    assert after.cells[:4] == "OXOX"  # from the right: the X at column 1 falls off


def test_column_pushes_from_top_and_bottom() -> None:
    state = position("O...", "X...", "....", "O...")
    after = GAME.play(state, PousseMove("T", 1))
    assert after.cells[0::4] == "XOXO"
    after = GAME.play(state, PousseMove("B", 1))
    assert after.cells[0::4] == "OXOX"


def test_straight_wins() -> None:
    state = position("XXX.", "O...", "O...", "O...")
    after = GAME.play(state, PousseMove("R", 1))
    outcome = GAME.outcome(after)
    assert outcome is not None
    assert outcome.winners == (0,) and outcome.scores == (1, 0)
    assert outcome.reason == "X has more straights (1 to 0)"
    assert GAME.legal_moves(after) == []
    with pytest.raises(IllegalMove, match="over"):
        GAME.play(after, PousseMove("L", 1))


def test_a_move_can_win_for_the_opponent() -> None:
    # X slides into row 2 and pushes an O into the gap of O's column 4.
    state = position("...O", "OOO.", "...O", "...O")
    after = GAME.play(state, PousseMove("L", 2))
    assert after.cells[4:8] == "XOOO"
    outcome = GAME.outcome(after)
    assert outcome is not None and outcome.winners == (1,)
    assert outcome.reason == "O has more straights (1 to 0)"


def test_equal_straights_do_not_end_the_game() -> None:
    # Row 1 becomes all X, and row 4 is already all O: one each, play goes on.
    state = position("XXX.", "....", "....", "OOOO")
    before = GAME.outcome(state)
    assert before is None
    after = GAME.play(state, PousseMove("R", 1))
    assert after.cells[:4] == "XXXX"
    assert GAME.outcome(after) is None


def test_straights_for_both_colours_at_once() -> None:
    # X's push down column 4 completes X's row 1 and O's row 4 together.
    state = position("XXXO", "...X", "...O", "OOO.")
    after = GAME.play(state, PousseMove("T", 4))
    assert after.cells == "XXXX" + "...O" + "...X" + "OOOO"
    assert GAME.outcome(after) is None  # one straight each: play goes on

    # The same push completing two O rows and one X row: O wins, on X's own move.
    state = position("XXXO", "OOOX", "...O", "OOO.")
    after = GAME.play(state, PousseMove("T", 4))
    assert after.cells == "XXXX" + "OOOO" + "...X" + "OOOO"
    outcome = GAME.outcome(after)
    assert outcome is not None and outcome.winners == (1,)
    assert outcome.reason == "O has more straights (2 to 1)"


def test_repetition_loses_for_the_mover() -> None:
    # Two push-offs restore the start position, X to move again.
    state = position("XOXO", "....", "....", "....")
    s1 = GAME.play(state, PousseMove("L", 1))  # X inserts left; the O at the end falls off
    assert s1.cells[:4] == "XXOX" and GAME.outcome(s1) is None
    s2 = GAME.play(s1, PousseMove("R", 1))  # O inserts right; the X at column 1 falls off
    assert s2.cells == state.cells and GAME.to_move(s2) == 0
    outcome = GAME.outcome(s2)
    assert outcome is not None
    assert outcome.winners == (0,) and outcome.scores == (1, 0)
    assert outcome.reason == "O repeated a position"


def _mid_game(cells: str, seen_with: str) -> PousseState:
    """X to move on ``cells``; earlier the board OXOX... was seen with ``seen_with`` to move."""
    earlier = "OXOX" + "." * 12 + seen_with
    return PousseState(4, cells, 0, 4, frozenset({cells + "X", earlier}))


def test_repetition_counts_the_side_to_move() -> None:
    after = GAME.play(_mid_game("XOXO" + "." * 12, seen_with="O"), PousseMove("R", 1))
    assert after.cells[:4] == "OXOX" and GAME.to_move(after) == 1
    outcome = GAME.outcome(after)
    assert outcome is not None and outcome.reason == "X repeated a position"

    # The same board was seen before, but with X to move: a new configuration.
    after = GAME.play(_mid_game("XOXO" + "." * 12, seen_with="X"), PousseMove("R", 1))
    assert after.cells[:4] == "OXOX"
    assert GAME.outcome(after) is None


def test_repetition_is_checked_before_straights() -> None:
    # The push-off recreates a configuration AND gives X a straight: the repeat decides.
    cells = "XXXO" + "O..." + "O..." + "...."
    target = "XXXX" + "O..." + "O..." + "...."
    state = PousseState(4, cells, 0, 6, frozenset({cells + "X", target + "O"}))
    after = GAME.play(state, PousseMove("L", 1))
    assert after.cells == target
    outcome = GAME.outcome(after)
    assert outcome is not None and outcome.winners == (1,)
    assert outcome.reason == "X repeated a position"


def test_history_restarts_when_the_marker_count_grows() -> None:
    state = GAME.new_game("5", 2)
    state = GAME.play(state, PousseMove("L", 1))
    state = GAME.play(state, PousseMove("L", 2))
    # No push-off so far: each state remembers only itself.
    assert state.markers == 2 and state.seen == frozenset({state.key})


def test_forfeit() -> None:
    state = replay(6, "L3 T3")
    over = GAME.forfeit(state, 0)
    outcome = GAME.outcome(over)
    assert outcome is not None and outcome.winners == (1,) and outcome.reason == "X forfeited"
    assert GAME.forfeit(over, 1) == over


def test_two_players_only() -> None:
    with pytest.raises(ValueError):
        GAME.new_game("6", 3)


def test_seat_marks() -> None:
    state = GAME.new_game("6", 2)
    assert [GAME.seat_mark(state, s) for s in (0, 1)] == ["X", "O"]
