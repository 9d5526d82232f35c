"""The clock-depth and whole-command benchmarks (bench/clock_depth.py, bench/whole_command.py):
what they read from fastchess's PGN, how they sum a side, and the config they hand tourney."""

from __future__ import annotations

import io
from pathlib import Path

import chess.pgn
import pytest

from bench import engine_bench
from bench.clock_depth import _COMMENT, EARLY_MOVES, Searched
from bench.engine_bench import FALLBACK_BOOK, opening_fens
from bench.tree_cpu import TreeCpu
from bench.whole_command import Command, default_config

#: a game as fastchess writes it at a clock: book moves bare, each engine move with its
#: score/depth and time (and a mate score, a negative score, a whole-second time)
FASTCHESS_GAME = """[Event "?"]
[Result "0-1"]

1. e4 e5 2. Nf3 {+0.31/9 0.045s} Nc6 {-0.25/11 0.038s} 3. Bb5 {+M3/24 1.002s}
Nf6 {-1.50/7 0.010s, n=1234} 0-1
"""


def test_fastchess_move_comments_give_depth_and_time() -> None:
    game = chess.pgn.read_game(io.StringIO(FASTCHESS_GAME))
    assert game is not None
    found = [_COMMENT.search(node.comment) for node in game.mainline()]
    read = [(int(m.group(1)), float(m.group(2))) for m in found if m]
    assert read == [(9, 0.045), (11, 0.038), (24, 1.002), (7, 0.010)]  # book moves have none


def test_a_side_is_summed_over_its_moves_and_its_early_moves_apart() -> None:
    early: list[tuple[int | None, float]] = [(8, 30.0)] * EARLY_MOVES
    late: list[tuple[int | None, float]] = [(20, 10.0)] * 10  # a deep endgame: only every move's mean sees it
    searched = Searched([early + late, [(10, 10.0), (None, 10.0)]], 0.5, 0, 1.0)
    assert searched.depth(early=True) == pytest.approx((8 * EARLY_MOVES + 10) / (EARLY_MOVES + 1))
    assert searched.depth() > searched.depth(early=True)
    assert searched.moves == EARLY_MOVES + 12
    thinking_s = (30.0 * EARLY_MOVES + 10.0 * 12) / 1000.0
    assert searched.cpu_share == pytest.approx(0.5 / thinking_s)


def test_a_command_splits_its_cpu_a_ply_into_engines_and_the_rest() -> None:
    ran = Command(2.0, 1000, 20, TreeCpu({"stockfish": 3.0, "python": 1.0, "redis-server": 0.5}))
    assert ran.rate == 500.0
    assert ran.cpu_ms_a_ply() == pytest.approx(4.5)
    assert ran.cpu_ms_a_ply(True) == pytest.approx(3.0)
    assert ran.cpu_ms_a_ply(False) == pytest.approx(1.5)


def test_the_whole_command_config_is_a_default_config_tourney_loads(tmp_path: Path) -> None:
    if not engine_bench.chess_known():
        pytest.skip("game: chess is not in this tourney")
    from runner.config.load import load_config

    fens = opening_fens(FALLBACK_BOOK[:4])
    config = load_config(default_config(tmp_path, "/usr/games/stockfish", fens))
    assert config.game == "chess" and config.sandbox == "bwrap"  # the default sandbox
    # the default (openings.per_match auto): the 4 openings 2 a match, each match playing its
    # openings in book order, so the one pairing still makes 2 matches
    played = [[b.text for b in config.match_boards(board)] for board in config.stages[0].boards]
    assert played == [fens[:2], fens[2:]]
    assert config.each is not None and config.each.nodes == 2000  # type: ignore[attr-defined]
    single = load_config(default_config(tmp_path, "/usr/games/stockfish", fens, per_match=1))
    assert [single.board_text(board) for board in single.stages[0].boards] == fens
