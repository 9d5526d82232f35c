"""The Boxing Match rules and arena protocol (seed 002)."""

from __future__ import annotations

import random

import pytest

from runner.domain.games import BadMoveText, BoardError, IllegalMove
from runner.domain.games.boxing import SAMPLE_ARENA, Boxing, BoxingState, BoxMove

from .conftest import SEEDS

GAME = Boxing()

# The seed's SAMPLE PARTIAL GAME after five moves.
SAMPLE_AFTER_FIVE = """\
oAAAAA-----BBBBBBBBBBB--BBBBBBBB
-AAAAA-----BBBBBBBBBBB--BBBBBBBB
-AAAAA-----BBBBBBBBBBB-oBBBBBBBB
-AAAAA-----BBBBBBBBBBB--BBBBBBBB
-AAAAAooo--BBBBBBBBBBB--BBBBBBBB
--AAAAAAAAABBBBBBBBBBB--BBBBBBBB
--AAAAAAAAABBBBBBBBBBBo-BBBBBBBB
--AAAAAAAAABBBBBBBBBBB--BBBBBBBB
--AAAAAAAAABBBBBBBBBBB----AAAAAA
ooAAAAAAAAABBBBBBBBBBB----AAAAAA
-oAAAAAAAAABBBBBBBBBBB----AAAAAA
--AAAAAAAAA---------------AAAAAA
--AAAAAAAAA------------o--AAAAAA
--AAAAAAAAA---------------AAAAAA
oooo-------------------------ooo
-----------------------------ooo
"""
# 1. A 9x9 lower left, 2. B 8x8 top right, 3. A 5x5 top left, 4. B 11x11, 5. A 6x6 bottom right
SAMPLE_MOVES = ["3 6 9", "25 1 8", "2 1 5", "12 1 11", "27 9 6"]


def arena(*rows: str) -> str:
    return "".join(r + "\n" for r in rows)


def start(text: str, players: int = 2, game: Boxing = GAME) -> BoxingState:
    return game.new_game(text, players)


def test_seed_sample_partial_game() -> None:
    start_arena = SAMPLE_AFTER_FIVE.replace("A", "-").replace("B", "-")
    assert start_arena.count("o") == 20  # "We start off with 20 unusable spots"
    state = start(start_arena)
    for text in SAMPLE_MOVES:
        move = GAME.parse_move(text)
        assert move in GAME.legal_moves(state)
        before, state = state, GAME.play(state, move)
        # the arena an entry would print for this move reads back as the move
        assert GAME.move_from_output(before, GAME.arena_text(state)) == move
    assert GAME.arena_text(state) == SAMPLE_AFTER_FIVE
    assert GAME.outcome(state) is None and GAME.to_move(state) == 1


def test_sample_pictures_are_the_seed_documents_own() -> None:
    seed = next(SEEDS.glob("002_*.txt"), None) if SEEDS.is_dir() else None
    if seed is None:
        pytest.skip("seed documents not present")
    lines = seed.read_text().splitlines()
    picture = [line[:32] for line in lines if len(line) >= 32 and set(line[:32]) <= set("-oAB")]
    assert "".join(p + "\n" for p in picture[:16]) == SAMPLE_ARENA
    assert "".join(p + "\n" for p in picture[16:32]) == SAMPLE_AFTER_FIVE


def test_board_text_is_the_arena() -> None:
    state = start(SAMPLE_ARENA)
    assert (state.width, state.height) == (32, 16)
    assert len(GAME.arena_text(state)) == 528
    assert GAME.arena_text(state) == SAMPLE_ARENA == GAME.render(state)


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("", "empty"),
        ("---\n--\n", "line 2 has 2 characters"),
        ("---\n---", "newline"),
        ("---\r\n---\r\n", "CRLF"),
        ("ooo\nooo\n", "no vacant"),
        ("-- -\n----\n", "printable"),
        ("-" * 201 + "\n", "201 characters wide"),
        ("-\n" * 201, "201 lines"),
    ],
)
def test_invalid_boards(text: str, why: str) -> None:
    with pytest.raises(BoardError, match=why):
        GAME.validate_board(text)


def test_any_rectangle_and_foreign_marks_are_boards() -> None:
    GAME.validate_board("-\n")
    GAME.validate_board(arena("-o#Z", "9--x"))
    GAME.validate_board("-" * 200 + "\n")


def test_generate_board_is_seeded() -> None:
    a = GAME.generate_board(random.Random(7), width=10, height=5, blocked=6)
    assert a == GAME.generate_board(random.Random(7), width=10, height=5, blocked=6)
    assert a.count("o") == 6 and a.count("-") == 44 and a.count("\n") == 5
    GAME.validate_board(a)
    default = GAME.generate_board(random.Random(1))
    assert len(default) == 528 and default.count("o") == 20
    with pytest.raises(BoardError, match="blocked"):
        GAME.generate_board(random.Random(1), width=2, height=2, blocked=4)
    with pytest.raises(BoardError, match="colour"):
        GAME.generate_board(random.Random(1), colour="red")


def test_filling_the_last_cell_wins_with_own_marks() -> None:
    state = start(arena("---", "---", "--o"))
    state = GAME.play(state, BoxMove(1, 1, 2))  # A: 4 cells
    state = GAME.play(state, BoxMove(3, 1, 1))  # B
    assert GAME.outcome(state) is None
    state = GAME.play(state, BoxMove(3, 2, 1))  # A
    state = GAME.play(state, BoxMove(1, 3, 1))  # B
    assert GAME.outcome(state) is None
    state = GAME.play(state, BoxMove(2, 3, 1))  # A fills the last vacant cell
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.winners == (0,)
    assert outcome.scores == (6, 0)
    assert outcome.reason == "A filled the last vacant cell"
    assert GAME.legal_moves(state) == []
    with pytest.raises(IllegalMove, match="over"):
        GAME.play(state, BoxMove(1, 1, 1))


def test_score_counts_marks_already_on_the_board() -> None:
    state = start(arena("BA-"))
    state = GAME.play(state, BoxMove(3, 1, 1))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.scores == (2, 0)


def test_play_rejects_with_the_cell_named() -> None:
    state = start(SAMPLE_ARENA)
    with pytest.raises(IllegalMove, match=r"cell \(x=6, y=3\) holds 'o'"):
        GAME.play(state, BoxMove(4, 2, 3))
    with pytest.raises(IllegalMove, match="does not fit"):
        GAME.play(state, BoxMove(30, 1, 4))
    with pytest.raises(IllegalMove, match="larger than the maximum 16"):
        GAME.play(state, BoxMove(1, 1, 17))
    with pytest.raises(IllegalMove, match="not positive"):
        GAME.play(state, BoxMove(1, 1, 0))


def test_max_box_size() -> None:
    state = start("-" * 32 + "\n" + ("-" * 32 + "\n") * 19)
    sizes = {m.size for m in GAME.legal_moves(state)}
    assert max(sizes) == 16
    GAME.play(state, BoxMove(1, 1, 16))
    small = Boxing(max_box=3)
    assert max(m.size for m in small.legal_moves(start(SAMPLE_ARENA, game=small))) == 3


def test_legal_moves_match_brute_force() -> None:
    rng = random.Random(3)
    board = GAME.generate_board(rng, width=9, height=7, blocked=12)
    state = start(board)
    state = GAME.play(state, GAME.legal_moves(state)[len(GAME.legal_moves(state)) // 2])
    brute = []
    for y in range(1, 8):
        for x in range(1, 10):
            for size in range(1, 17):
                try:
                    GAME.check_move(state, BoxMove(x, y, size))
                except IllegalMove:
                    continue
                brute.append(BoxMove(x, y, size))
    assert GAME.legal_moves(state) == brute


def test_legal_moves_on_an_empty_seed_arena_are_quick() -> None:
    state = start(("-" * 32 + "\n") * 16)
    moves = GAME.legal_moves(state)
    # squares of side s in a 32x16 arena: (33-s)(17-s), s = 1..16
    assert len(moves) == sum((33 - s) * (17 - s) for s in range(1, 17))


# -- the arena protocol ---------------------------------------------------


def test_move_from_output_reads_the_box() -> None:
    state = start(SAMPLE_ARENA)
    after = GAME.play(state, BoxMove(5, 4, 3))
    out = GAME.arena_text(after)
    assert GAME.move_from_output(state, out) == BoxMove(5, 4, 3)
    assert GAME.move_from_output(state, out.encode()) == BoxMove(5, 4, 3)


def test_wrong_size_is_bad_text() -> None:
    state = start(SAMPLE_ARENA)
    with pytest.raises(BadMoveText, match=r"expected 528 bytes \(16 lines of 32 \+ newline\), got 530"):
        GAME.move_from_output(state, SAMPLE_ARENA + "\n\n")
    with pytest.raises(BadMoveText, match="got 0"):
        GAME.move_from_output(state, "")


def test_misplaced_newlines_are_bad_text() -> None:
    state = start(SAMPLE_ARENA)
    shifted = "-" + SAMPLE_ARENA[:-1]  # right length, but every line off by one
    with pytest.raises(BadMoveText, match="line 1 has 33 characters"):
        GAME.move_from_output(state, shifted)
    no_last_newline = SAMPLE_ARENA[:-1] + "-"
    with pytest.raises(BadMoveText, match="line 16 has 33"):
        GAME.move_from_output(state, no_last_newline)


def test_unchanged_arena_is_no_box() -> None:
    state = start(SAMPLE_ARENA)
    with pytest.raises(IllegalMove, match="no box marked"):
        GAME.move_from_output(state, SAMPLE_ARENA)


def _edit(text: str, changes: dict[tuple[int, int], str]) -> str:
    rows = [list(r) for r in text.splitlines()]
    for (x, y), ch in changes.items():
        rows[y - 1][x - 1] = ch
    return "".join("".join(r) + "\n" for r in rows)


def test_only_vacant_cells_may_change() -> None:
    state = start(SAMPLE_ARENA)
    out = _edit(SAMPLE_ARENA, {(1, 1): "A", (6, 3): "-"})
    with pytest.raises(IllegalMove, match=r"cell \(x=6, y=3\) changed from 'o' to '-'"):
        GAME.move_from_output(state, out)
    out = _edit(SAMPLE_ARENA, {(6, 3): "A"})
    with pytest.raises(IllegalMove, match=r"cell \(x=6, y=3\) changed from 'o' to 'A'"):
        GAME.move_from_output(state, out)


def test_wrong_mark() -> None:
    state = start(SAMPLE_ARENA)
    with pytest.raises(IllegalMove, match=r"cell \(x=2, y=1\) marked 'B'; this player's mark is 'A'"):
        GAME.move_from_output(state, _edit(SAMPLE_ARENA, {(1, 1): "A", (2, 1): "B"}))
    after = GAME.play(state, BoxMove(1, 1, 1))  # now B is to move
    out = _edit(GAME.arena_text(after), {(3, 3): "A"})
    with pytest.raises(IllegalMove, match="mark is 'B'"):
        GAME.move_from_output(after, out)


def test_marks_outside_one_square() -> None:
    state = start(SAMPLE_ARENA)
    rect = _edit(SAMPLE_ARENA, {(1, 1): "A", (2, 1): "A"})
    with pytest.raises(IllegalMove, match="columns 1-2 and rows 1-1: not a square"):
        GAME.move_from_output(state, rect)
    two_boxes = _edit(SAMPLE_ARENA, {(1, 1): "A", (2, 2): "A"})
    with pytest.raises(IllegalMove, match=r"not one filled square: cell \(x=2, y=1\)"):
        GAME.move_from_output(state, two_boxes)
    # an L shape around a blocked cell: the square would cover the 'o' at (6, 3)
    around = _edit(SAMPLE_ARENA, {(5, 2): "A", (6, 2): "A", (5, 3): "A"})
    with pytest.raises(IllegalMove, match=r"cell \(x=6, y=3\) .* still holds 'o'"):
        GAME.move_from_output(state, around)


def test_output_box_larger_than_max() -> None:
    small = Boxing(max_box=2)
    state = start(SAMPLE_ARENA, game=small)
    out = _edit(SAMPLE_ARENA, {(x, y): "A" for x in range(1, 4) for y in range(1, 4)})
    with pytest.raises(IllegalMove, match="box side 3 is larger than the maximum 2"):
        small.move_from_output(state, out)


# -- several players --------------------------------------------------------


def test_n_player_turn_order_and_marks() -> None:
    state = start(arena("------"), players=3)
    assert [GAME.seat_mark(state, s) for s in range(3)] == ["A", "B", "C"]
    seen = []
    for x in range(1, 6):
        seen.append(GAME.to_move(state))
        state = GAME.play(state, BoxMove(x, 1, 1))
    assert seen == [0, 1, 2, 0, 1]
    assert GAME.arena_text(state) == "ABCAB-\n"
    state = GAME.play(state, BoxMove(6, 1, 1))
    outcome = GAME.outcome(state)
    assert outcome is not None and outcome.winners == (2,) and outcome.scores == (0, 0, 2)


def test_n_player_forfeit_leaves_the_rotation() -> None:
    state = start(arena("--------"), players=3)
    state = GAME.play(state, BoxMove(1, 1, 1))  # A
    state = GAME.forfeit(state, 1)  # B, to move, is removed
    assert GAME.outcome(state) is None
    assert GAME.to_move(state) == 2
    state = GAME.play(state, BoxMove(2, 1, 1))  # C
    assert GAME.to_move(state) == 0
    state = GAME.play(state, BoxMove(3, 1, 1))  # A
    assert GAME.to_move(state) == 2
    state = GAME.forfeit(state, 0)  # A leaves while C is to move: C is the last one
    outcome = GAME.outcome(state)
    assert outcome is not None
    assert outcome.winners == (2,)
    assert outcome.scores == (0, 0, 1)
    assert outcome.reason == "B, A forfeited; C is the last player left"
    assert GAME.legal_moves(state) == []


def test_two_player_forfeit_scores_the_marks_on_the_board() -> None:
    state = start(SAMPLE_ARENA)
    state = GAME.play(state, BoxMove(1, 1, 2))
    state = GAME.play(state, BoxMove(10, 1, 3))
    over = GAME.forfeit(state, 0)
    outcome = GAME.outcome(over)
    assert outcome is not None
    assert outcome.winners == (1,) and outcome.scores == (0, 9)
    assert outcome.reason == "A forfeited; B is the last player left"
    assert GAME.forfeit(over, 1) == over


def test_player_counts() -> None:
    with pytest.raises(ValueError):
        GAME.new_game(SAMPLE_ARENA, 1)
    with pytest.raises(ValueError):
        GAME.new_game(SAMPLE_ARENA, 27)
    state = GAME.new_game(SAMPLE_ARENA, 26)
    assert GAME.seat_mark(state, 25) == "Z"


@pytest.mark.parametrize("text", ["1 1 1", "32 16 1", "3 6 9"])
def test_move_text_round_trip(text: str) -> None:
    assert GAME.format_move(GAME.parse_move(text)) == text


@pytest.mark.parametrize("text", ["", "1 1", "1 1 1 1", "a b c", "0 1 1", "1 1 0", "-1 2 3"])
def test_bad_move_text(text: str) -> None:
    with pytest.raises(BadMoveText):
        GAME.parse_move(text)
