"""The engine benchmark (bench/engine_bench.py, bench/bare_uci.py): its schedule, its PGN
count, the bare loop's clock rule against a real (fake) UCI process, and, where stockfish and
fastchess are installed, the real games."""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import chess
import pytest

from bench import engine_bench
from bench.bare_uci import EngineLimit, GamePlan, UciEngine, play_game, play_games
from bench.engine_bench import (
    FALLBACK_BOOK,
    OPTIONS,
    book_line,
    count_pgn,
    find_fastchess,
    find_stockfish,
    opening_fens,
    plan_games,
    run_fastchess,
)
from bench.tree_cpu import run_measured

#: a UCI engine that plays the first legal move (by UCI text) after sleeping DELAY seconds
FAKE_ENGINE = textwrap.dedent(
    """
    import sys, time
    import chess
    delay = float(sys.argv[1])
    board = chess.Board()
    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        if words[0] == "uci":
            print("id name fake\\nuciok", flush=True)
        elif words[0] == "isready":
            print("readyok", flush=True)
        elif words[0] == "position":
            fen = " ".join(words[2:8])
            board = chess.Board(fen)
            for move in words[9:]:
                board.push_uci(move)
        elif words[0] == "go":
            time.sleep(delay)
            print("bestmove " + min(m.uci() for m in board.legal_moves), flush=True)
        elif words[0] == "quit":
            break
    """
)


def test_plan_games_plays_each_opening_twice_with_colours_swapped_and_wraps() -> None:
    plans = plan_games(["a", "b", "c"], 8)
    assert [(p.fen, p.swapped) for p in plans] == [
        ("a", False),
        ("a", True),
        ("b", False),
        ("b", True),
        ("c", False),
        ("c", True),
        ("a", False),
        ("a", True),
    ]
    assert len(plan_games(["a"], 3)) == 4  # rounded up to whole pairs


def test_opening_fens_read_epd_lines_with_opcodes_as_legal_fens() -> None:
    line = 'rnbqkbnr/pp2pppp/3p4/8/3pP3/5N2/PPP2PPP/RNBQKB1R w KQkq - id "opening-003"; c0 "1. e4 c5";'
    fens = opening_fens([*FALLBACK_BOOK, line])
    assert fens[-1] == "rnbqkbnr/pp2pppp/3p4/8/3pP3/5N2/PPP2PPP/RNBQKB1R w KQkq - 0 1"
    assert all(chess.Board(fen).is_valid() for fen in fens)
    assert len(set(fens)) == len(fens)


def test_fastchess_book_lines_keep_the_move_counters_tourney_sends() -> None:
    """stockfish scales its evaluation by the 50-move counter: a book line without it would
    have fastchess play other games than tourney, which sends the whole FEN."""
    fen = "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - 4 4"
    line = book_line(fen)
    assert line == "r1bqk1nr/pppp1ppp/2n5/2b1p3/2B1P3/5N2/PPPP1PPP/RNBQK2R w KQkq - hmvc 4; fmvn 4;"
    assert chess.Board.from_epd(line)[0].fen() == fen


def test_run_measured_counts_the_cpu_of_a_grandchild_in_the_background(tmp_path: Path) -> None:
    """The CPU of a process under the command that its parent does not wait for is counted
    (``tourney run``'s worker pool and its engines are such processes)."""
    burn = "import time; t = time.process_time(); exec('while time.process_time() - t < 0.4: pass')"
    # the shell starts the burner in the background and does not wait for it
    argv = ["sh", "-c", f'{sys.executable} -c "{burn}" & sleep 0.6']
    done, cpu = run_measured(argv, cwd=tmp_path, timeout=30)
    assert done.returncode == 0
    assert cpu.total_s >= 0.3, cpu.by_name


def test_count_pgn_counts_games_plies_and_time_forfeits() -> None:
    pgn = textwrap.dedent(
        """
        [Event "Fastchess Tournament"]
        [White "stockfish-a"]
        [Black "stockfish-b"]
        [Result "0-1"]
        [FEN "rnbqkbnr/pppppppp/8/8/4P3/8/PPPP1PPP/RNBQKBNR b KQkq - 0 1"]
        [SetUp "1"]
        [Termination "time forfeit"]

        1... e5 2. Nf3 {+0.30/7 0.012s} Nc6 0-1

        [Event "Fastchess Tournament"]
        [Result "1/2-1/2"]
        [Termination "normal"]

        1. e4 e5 1/2-1/2
        """
    )
    assert count_pgn(pgn) == (2, 5, 1)


@pytest.fixture
def fake_engine(tmp_path: Path) -> Path:
    script = tmp_path / "fake_uci.py"
    script.write_text(FAKE_ENGINE)
    return script


def test_bare_loop_flags_an_engine_that_answers_past_its_clock_and_margin(fake_engine: Path) -> None:
    slow = UciEngine([sys.executable, str(fake_engine), "0.3"], {})
    quick = UciEngine([sys.executable, str(fake_engine), "0"], {})
    try:
        limit = EngineLimit(base_s=0.1, inc_s=0.0, margin_ms=50)
        assert play_game(slow, quick, chess.STARTING_FEN, limit) == (0, True)
    finally:
        slow.close()
        quick.close()
    assert slow.proc.returncode is not None and quick.proc.returncode is not None


def test_bare_loop_plays_to_the_rules_end_with_engines_kept_between_games(fake_engine: Path) -> None:
    plans = [GamePlan(chess.STARTING_FEN, swapped) for swapped in (False, True)]
    limit = EngineLimit(base_s=30.0, inc_s=0.0, margin_ms=50)
    played = play_games([sys.executable, str(fake_engine), "0"], {}, plans, limit, concurrency=1)
    # the first-legal-move engine plays the same game both times, to a rules' end
    assert played.games == 2 and played.time_losses == 0
    assert played.plies > 0 and played.plies % 2 == 0


def test_tourney_config_plays_the_planned_openings_at_fixed_nodes(tmp_path: Path) -> None:
    if not engine_bench.chess_known():
        pytest.skip("game: chess is not in this tourney")
    from runner.config.load import load_config

    fens = opening_fens(FALLBACK_BOOK[:3])
    plans = plan_games(fens, 6)
    path = engine_bench.tourney_config(
        tmp_path, "/usr/games/stockfish", plans, EngineLimit(nodes=2000), "none"
    )
    config = load_config(path)
    assert config.game == "chess"
    # 3 pairs, 2 at once: 2 openings a match, so 2 matches start 2 engines each, as fastchess's 2 slots
    assert len(config.stages[0].boards) == 2
    played = [b.text for board in config.stages[0].boards for b in config.match_boards(board)]
    played += [
        config.board_text(board) for board in config.stages[0].boards if not config.match_boards(board)
    ]
    assert played == fens
    assert config.each is not None and config.each.nodes == 2000  # type: ignore[attr-defined]
    one = load_config(
        engine_bench.tourney_config(
            tmp_path, "/usr/games/stockfish", plans, EngineLimit(nodes=2000), "none", 1
        )
    )
    assert [one.board_text(board) for board in one.stages[0].boards] == fens  # one opening a match


needs_stockfish = pytest.mark.skipif(find_stockfish() is None, reason="stockfish is not installed")


@pytest.mark.integration
@needs_stockfish
def test_fastchess_and_the_bare_loop_play_the_same_stockfish_games(tmp_path: Path) -> None:
    fastchess = find_fastchess()
    if fastchess is None:
        pytest.skip("fastchess not found (FASTCHESS=path or on PATH)")
    stockfish = find_stockfish()
    assert stockfish is not None
    fens = opening_fens(FALLBACK_BOOK[:2])
    plans = plan_games(fens, 4)
    limit = EngineLimit(nodes=2000)
    reference = run_fastchess(fastchess, stockfish, fens, len(plans), limit, tmp_path)
    bare = play_games([stockfish], OPTIONS, plans, limit, concurrency=2)
    # one thread at fixed nodes after ucinewgame: the same moves whoever drives stockfish
    assert (reference.games, reference.time_losses) == (4, 0)
    assert (bare.games, bare.time_losses) == (4, 0)
    assert bare.plies == reference.plies > 4 * 10


@pytest.mark.integration
@needs_stockfish
def test_engine_bench_prints_its_ratio_and_time_loss_lines(capsys: pytest.CaptureFixture[str]) -> None:
    engine_bench.main(quick=True, time_games=2, rate_games=4)  # the bench's lines, not its figures
    out = capsys.readouterr().out
    assert re.search(r"^engine plies per second, tourney / (fastchess|bare python-chess loop): ", out, re.M)
    assert re.search(r"^time losses at tc 1\+0\.01: \d+ of 2 games \(", out, re.M)
    if not engine_bench.chess_known():
        assert "tourney side skipped: game: chess is unknown" in out


def test_engine_bench_without_stockfish_says_so_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(engine_bench, "find_stockfish", lambda: None)
    engine_bench.main(quick=True)
    assert capsys.readouterr().out == (
        "engine bench skipped: stockfish is not installed (apt-get install stockfish)\n"
    )
