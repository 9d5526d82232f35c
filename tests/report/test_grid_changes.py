"""``grid_changes`` walks only the span between the first and last changed cell; its runs
must be those of a walk over every cell."""

from __future__ import annotations

import random

import chess
import pytest

from runner.domain.games.chess import Chess, ChessState
from runner.report.boards import Grid, chess_grid, grid_changes


def every_cell_runs(before: Grid, after: Grid) -> list[tuple[int, int, str]]:
    """The runs as the report computed them before: every cell compared."""
    if (before.width, before.height) != (after.width, after.height):
        return [(i, 1, ch) for i, ch in enumerate(after.cells)]
    runs: list[tuple[int, int, str]] = []
    for i, (a, b) in enumerate(zip(before.cells, after.cells, strict=True)):
        if a == b:
            continue
        if runs and runs[-1][0] + runs[-1][1] == i and runs[-1][2] == b:
            start, length, ch = runs[-1]
            runs[-1] = (start, length + 1, ch)
        else:
            runs.append((i, 1, b))
    return runs


@pytest.mark.parametrize("seed", range(5))
def test_runs_equal_those_of_a_walk_over_every_cell(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(2000):
        width, height = rng.choice([(0, 0), (1, 1), (3, 1), (9, 9), (32, 16)])
        n = width * height
        cells = "".join(rng.choice("-XO") for _ in range(n))
        changed = list(cells)
        for _ in range(rng.choice([0, 1, 2, 6, n // 2 + 1])):
            if n:
                changed[rng.randrange(n)] = rng.choice("-XOo")
        before, after = Grid(width, height, cells, {}), Grid(width, height, "".join(changed), {})
        assert grid_changes(before, after) == every_cell_runs(before, after)


def test_a_first_and_a_last_cell_change_and_a_reshaped_grid() -> None:
    before = Grid(3, 2, "------", {})
    assert grid_changes(before, Grid(3, 2, "X----O", {})) == [(0, 1, "X"), (5, 1, "O")]
    assert grid_changes(before, Grid(3, 2, "-XXX--", {})) == [(1, 3, "X")]
    assert grid_changes(before, Grid(2, 1, "XO", {})) == [(0, 1, "X"), (1, 1, "O")]


def fen_cells(board: chess.Board) -> str:
    """The grid's cells read from the board's FEN: rank 8 first, a digit n as n empty cells."""
    return "".join("." * int(c) if c.isdigit() else c for c in board.board_fen() if c != "/")


@pytest.mark.parametrize("seed", range(4))
def test_a_chess_grid_is_the_position_s_fen_rank_8_on_top(seed: int) -> None:
    """``chess_grid`` reads the board by piece sets (the report's hot path): every square as the
    FEN has it, through castling, captures en passant and promotions, in Chess960 too."""
    rng = random.Random(seed)
    game = Chess()
    for start in range(6):
        board = chess.Board.from_chess960_pos(rng.randrange(960)) if start % 2 else chess.Board()
        for _ in range(300):
            grid = chess_grid(game, ChessState(board), 2)
            assert (grid.width, grid.height) == (8, 8)
            assert grid.cells == fen_cells(board), board.fen()
            assert grid.kinds["K"] == "seat0" and grid.kinds["k"] == "seat1" and grid.kinds["."] == "empty"
            moves = list(board.legal_moves)
            if not moves:
                break
            promotions = [m for m in moves if m.promotion]
            board.push(rng.choice(promotions or moves))
