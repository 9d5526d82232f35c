"""Chess engines through the real sandbox (docs/engines.md): `tourney play --game chess`.

A fake UCI engine (tests/fixtures/chess/fake-uci/engine.py) plays a scripted game or
misbehaves one way per variant; each misbehaviour is a verdict, and the worker never hangs
(every run has a timeout far above what the verdict needs). Real engines (Debian's
stockfish, gnuchess, phalanx) play where they are installed (.ci/run installs them).
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

import chess.pgn
import pytest

from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import LOADED_MARGIN_MS, ROOT, assert_nothing_left, tourney, unique

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}")

FAKE = ROOT / "tests" / "fixtures" / "chess" / "fake-uci"
FAKE_XBOARD = ROOT / "tests" / "fixtures" / "chess" / "fake-xboard"
ENGINES = ROOT / "entries" / "chess"
#: real engines' clock here: the shipped config's (configs/engines.yaml), its flag padded by
#: LOADED_MARGIN_MS for the suite's own load
REAL_TC = "2+0.05"


def fake_engine(tmp_path: Path) -> tuple[Path, str]:
    """A copy of the fake engine whose every variant carries a tag unique to this test, so
    that its processes can be found (and must be gone) afterwards."""
    tag = unique("fake-uci")
    dest = tmp_path / "fake-uci"
    shutil.copytree(FAKE, dest)
    entry = dest / "entry.yaml"
    entry.write_text(entry.read_text().replace("]}", f", {tag}]}}"))
    return dest, tag


def play(tmp_path: Path, *args: str | Path, timeout: float = 60) -> dict[str, Any]:
    done = tourney("play", "--game", "chess", "--json", *args, cwd=tmp_path, timeout=timeout)
    assert done.returncode == 0, done.stderr
    games: dict[str, Any] = json.loads(done.stdout)["games"][0]
    return games


def test_a_scripted_game_ends_in_checkmate_and_both_engines_quit(tmp_path: Path) -> None:
    fake, tag = fake_engine(tmp_path)
    game = play(tmp_path, f"{fake}:fools-mate", f"{fake}:fools-mate")
    assert [m["move"] for m in game["moves"]] == ["f2f3", "e7e5", "g2g4", "d8h4"]
    assert game["verdict"] == {"kind": "normal", "player": None, "detail": "checkmate"}
    assert game["winner"] == "fools-mate#2"
    assert game["moves"][0]["search"] == {"cp": -25, "mate": None, "depth": 3}  # the engine's last info line
    assert game["stderr"]["fools-mate"][-1] == "got quit"
    assert game["stderr"]["fools-mate#2"][-1] == "got quit"
    assert_nothing_left([tag])


def test_a_games_two_engines_start_side_by_side(tmp_path: Path) -> None:
    """Both seats' engines are started before the worker waits for either's uciok: an engine's
    start is as long as a whole fast game, and two of them one after the other doubled it."""
    fake, tag = fake_engine(tmp_path)
    game = play(tmp_path, f"{fake}:slow-start", f"{fake}:slow-start")
    assert game["verdict"] == {"kind": "normal", "player": None, "detail": "checkmate"}

    def said(seat: str, word: str) -> float:
        return next(float(line.split()[1]) for line in game["stderr"][seat] if line.startswith(word + " "))

    # each takes 0.5 s to say uciok: the second was started while the first had not said it
    assert said("slow-start#2", "started") < said("slow-start", "uciok")
    assert_nothing_left([tag])


def test_both_clocks_are_kept_from_the_measured_time_and_sent_to_the_engine(tmp_path: Path) -> None:
    fake, _ = fake_engine(tmp_path)
    game = play(tmp_path, "--tc", "40/2+0.5", f"{fake}:fools-mate", f"{fake}:fools-mate")
    w0, b0 = (m["wall_ms"] for m in game["moves"][:2])
    white_go = [line for line in game["stderr"]["fools-mate"] if line.startswith("go ")]
    black_go = [line for line in game["stderr"]["fools-mate#2"] if line.startswith("go ")]
    assert white_go[0] == "go wtime 2000 btime 2000 winc 500 binc 500 movestogo 40"
    # black's first move: white has spent its first move and gained its increment
    assert black_go[0] == f"go wtime {int(2000 - w0 + 500)} btime 2000 winc 500 binc 500 movestogo 40"
    assert white_go[1] == (
        f"go wtime {int(2000 - w0 + 500)} btime {int(2000 - b0 + 500)} winc 500 binc 500 movestogo 39"
    )


def test_the_entrys_options_are_set_when_the_engine_announces_them(tmp_path: Path) -> None:
    fake, _ = fake_engine(tmp_path)
    entry = fake / "entry.yaml"
    entry.write_text(entry.read_text() + "options: {Hash: 32, Threads: 2, NoSuchOption: 1}\n")
    game = play(tmp_path, f"{fake}:fools-mate", f"{fake}:fools-mate")
    told = [line for line in game["stderr"]["fools-mate"] if line.startswith("setoption")]
    assert told == ["setoption name Hash value 32", "setoption name Threads value 2"]


def test_stockfish_plays_chess960_from_a_generated_start(tmp_path: Path) -> None:
    stockfish = engine_or_skip("stockfish")
    start = "bqnbrkrn/pppppppp/8/8/8/8/PPPPPPPP/BQNBRKRN w GEge - 0 1"
    (tmp_path / "start.fen").write_text(start + "\n")
    # a search of 20,000 nodes a move: the rules of the start are what is tested, not a clock
    game = play(
        tmp_path, "--variant", "chess960", "--board", tmp_path / "start.fen", "--nodes", "20000",
        stockfish, stockfish, timeout=180,
    )  # fmt: skip
    assert game["verdict"]["kind"] == "normal", game["verdict"]
    assert len(game["moves"]) > 10


def test_time_per_move_flags_an_engine_past_st_and_the_margin(tmp_path: Path) -> None:
    fake, tag = fake_engine(tmp_path)
    game = play(tmp_path, "--st", "0.1", f"{fake}:ignores-stop", f"{fake}:fools-mate", timeout=30)
    assert game["verdict"]["kind"] == "timeout"
    assert game["verdict"]["detail"] == "flag fell: no move with st=0.1"
    assert_nothing_left([tag])


@pytest.mark.parametrize(
    ("mode", "kind", "detail"),
    [
        ("crash", "crash", "exit code 3: bad engine: crashing on purpose"),
        ("illegal", "illegal_move", "e2e5 is not legal in"),
        ("malformed", "bad_output", "not a UCI move"),
        ("ignores-stop", "timeout", "flag fell: no move with 1.000 s left of 1+0.01"),
        ("flood", "bad_output", "printed over 64 KiB while thinking on one move"),
    ],
)
def test_a_bad_engine_gets_its_verdict_and_leaves_nothing(
    tmp_path: Path, mode: str, kind: str, detail: str
) -> None:
    fake, tag = fake_engine(tmp_path)
    # the scripted engine is the opponent: the bad one moves first and fails on move 1
    game = play(tmp_path, "--tc", "1+0.01", f"{fake}:{mode}", f"{fake}:fools-mate", timeout=30)
    assert game["verdict"]["kind"] == kind
    assert game["verdict"]["player"] == mode
    assert detail in game["verdict"]["detail"]
    assert game["winner"] == "fools-mate"
    assert game["moves"] == []
    assert_nothing_left([tag])


@pytest.mark.parametrize(
    ("engine", "detail"),
    [
        (f"{FAKE}:no-uciok", "engine no-uciok (python3 engine.py no-uciok): no uciok within 5 s"),
        (f"{FAKE}:no-readyok", "engine no-readyok (python3 engine.py no-readyok): no readyok within 5 s"),
        (
            f"{FAKE_XBOARD}:xb-no-done",
            "engine xb-no-done (python3 engine.py no-done): no feature done=1 within 5 s",
        ),
    ],
)
def test_an_engine_that_never_finishes_its_handshake_stops_play_before_any_game(
    tmp_path: Path, engine: str, detail: str
) -> None:
    """As fastchess stops (issue 35, item 5): every engine is started and greeted once before
    the match (workers/engine_probe.py); one that cannot start is one line and exit 2, never a
    game scored against it. In a game (a run's later match) the same is its ``timeout``
    verdict (tests/sandbox/test_kept_engines.py)."""
    done = tourney("play", "--game", "chess", engine, f"{FAKE}:fools-mate", cwd=tmp_path, timeout=60)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stderr.strip() == f"tourney play: {detail}"
    assert done.stdout == ""


def engine_or_skip(name: str) -> Path:
    program = {"stockfish": "stockfish", "gnuchess": "gnuchess", "phalanx": "phalanx"}[name]
    if shutil.which(program, path="/usr/games") is None:
        pytest.skip(f"{program} is not installed (apt-get install {program})")
    return ENGINES / name


@pytest.mark.parametrize(("white", "black"), [("stockfish", "phalanx"), ("gnuchess", "stockfish")])
def test_real_engines_play_a_whole_game_on_a_clock_without_losing_on_time(
    tmp_path: Path, white: str, black: str
) -> None:
    game = play(
        tmp_path, "--tc", REAL_TC, "--timemargin", str(LOADED_MARGIN_MS), engine_or_skip(white),
        engine_or_skip(black), timeout=180,
    )  # fmt: skip
    assert game["verdict"]["kind"] in ("normal", "resign"), game["verdict"]
    assert len(game["moves"]) > 10
    searched = [m for m in game["moves"] if m.get("search")]
    assert len(searched) > len(game["moves"]) // 2  # both protocols report scores and depths


def test_a_chess_run_writes_games_pgn_and_tourney_pgn_writes_it_again(tmp_path: Path) -> None:
    fake, tag = fake_engine(tmp_path)
    config = tmp_path / "fools.yaml"
    config.write_text(
        json.dumps(
            {
                "name": "fools",
                "game": "chess",
                "each": {"tc": "5+0.1"},
                "entries": [
                    {"path": str(fake), "include": ["fools-mate"], "variants": {"count": 2, "prefix": "fm"}}
                ],
                "stages": [{"name": "rr", "planner": "round_robin", "games_per_pairing": 2}],
            }
        )
    )
    done = tourney("run", config, "--workers", "1", "--no-progress", cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    run_dir = tmp_path / "runs" / "fools"
    written = (run_dir / "games.pgn").read_text()
    games = []
    stream = io.StringIO(written)
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    # each side is white once; the script mates white every time
    assert [(g.headers["White"], g.headers["Result"]) for g in games] == [("fm-1", "0-1"), ("fm-2", "0-1")]
    assert all(g.headers["TimeControl"] == "5+0.1" and g.headers["Termination"] == "normal" for g in games)
    assert all(g.end().board().is_checkmate() for g in games)
    assert games[0].next() is not None and games[0].next().comment.startswith("-0.25/3 ")  # type: ignore[union-attr]
    again = tourney("pgn", run_dir, "-o", tmp_path / "again.pgn", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again.pgn").read_text() == written
    report = (run_dir / "report.html").read_text()
    assert "rnbqkbnr" in report  # the board replay's first rank, in the report's data
    assert_nothing_left([str(run_dir), tag])


def test_an_xboard_engine_gets_level_time_and_otim_and_may_answer_in_san(tmp_path: Path) -> None:
    xb = f"{FAKE_XBOARD}:xb-fools-mate"
    game = play(tmp_path, "--tc", "40/3+0.5", xb, xb)
    assert [m["move"] for m in game["moves"]] == ["f2f3", "e7e5", "g2g4", "d8h4"]  # SAN made UCI
    assert game["verdict"]["detail"] == "checkmate"
    assert game["moves"][0]["search"] == {"cp": -25, "mate": None, "depth": 1}  # its thinking line
    white = game["stderr"]["xb-fools-mate"]
    assert white[:3] == ["level 40 0:03 0.5", "time 300", "otim 300"]  # centiseconds
    w0 = game["moves"][0]["wall_ms"]
    assert white[3] == f"time {int((3000 - w0 + 500) / 10)}"  # its own clock after its first move
    assert white[-1] == "got quit"


def test_an_xboard_engine_on_nodes_and_depth_gets_nps_st_and_sd(tmp_path: Path) -> None:
    xb = f"{FAKE_XBOARD}:xb-fools-mate"
    game = play(tmp_path, "--nodes", "5000", "--depth", "7", xb, xb)
    assert game["verdict"]["detail"] == "checkmate"
    assert game["stderr"]["xb-fools-mate"][:3] == ["nps 5000", "st 1", "sd 7"]


@pytest.mark.parametrize(
    ("mode", "kind", "detail"),
    [("xb-resigns", "resign", "resigned")],
)
def test_an_xboard_engine_that_resigns_or_never_finishes_its_features(
    tmp_path: Path, mode: str, kind: str, detail: str
) -> None:
    game = play(tmp_path, f"{FAKE_XBOARD}:{mode}", f"{FAKE_XBOARD}:xb-fools-mate", timeout=30)
    assert (game["verdict"]["kind"], game["verdict"]["player"], game["verdict"]["detail"]) == (
        kind,
        mode,
        detail,
    )
    assert game["winner"] == "xb-fools-mate"


@pytest.mark.parametrize("opponent", ["phalanx", "stockfish"])
def test_a_slow_first_seat_handshake_costs_the_real_engine_in_the_second_seat_nothing(
    tmp_path: Path, opponent: str
) -> None:
    """Issue 35, item 3: an engine answering readyok 2.5 s late in the first seat made phalanx
    forfeit (its features, already in the pipe, were never read: the wait for them had run
    out while the first seat was greeted, and the read killed it). Each seat's handshake
    stands on its own now. The slow one slept, computing nothing: its clock is not charged
    for that (what an engine computes while the worker waits is; the next test)."""
    fake, tag = fake_engine(tmp_path)
    real = engine_or_skip(opponent)
    # a book opening too: phalanx then needs its setboard feature, read or not
    (tmp_path / "start.fen").write_text("rnbqkbnr/pppp1ppp/8/4p3/4P3/8/PPPP1PPP/RNBQKBNR w KQkq - 0 2\n")
    boards: list[list[str | Path]] = [[], ["--board", tmp_path / "start.fen"]]
    for board in boards:
        game = play(tmp_path, "--tc", "10+0.1", *board, f"{fake}:slow-readyok", real, timeout=120)
        assert game["verdict"]["player"] != opponent, game["verdict"]
        replies = [m for m in game["moves"] if m["player"] == opponent]
        assert replies, game  # it played
        assert game["moves"][0]["wall_ms"] < 2000  # idle, not thinking: off its clock
    assert_nothing_left([tag])


def test_an_engine_that_searches_while_the_worker_waits_for_readyok_pays_for_it(tmp_path: Path) -> None:
    """Issue 35, item 4: an engine "searched" 4.5 s while the worker waited for readyok, then
    answered at once at depth 20, charged nothing. What it computes meanwhile past 0.1 s of
    CPU is its first move's time now, in every game of the match (a kept engine is asked
    again before each). Here it computes for 2.5 s on each isready and says how much CPU that
    was (all of it on a quiet machine, less on a loaded one): that, less the grace, is charged."""
    fake, tag = fake_engine(tmp_path)
    done = tourney(
        "play", "--game", "chess", "--json", "--games", "2", "--tc", "10+0.1",
        f"{fake}:ready-thinker", f"{fake}:fools-mate", cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    games = json.loads(done.stdout)["games"]
    # its stderr comes with the match's last game: what each isready computed, in order
    said = games[-1]["stderr"]["ready-thinker"]
    computed = [int(line.split()[2]) for line in said if line.startswith("isready computed")]
    assert len(computed) == len(games) and min(computed) >= 300, computed  # it did compute, each game
    for game, cpu_ms in zip(games, computed, strict=True):
        first = next(m for m in game["moves"] if m["player"] == "ready-thinker")
        # the charge is the CPU less the grace (the cgroup's count and the engine's own differ
        # by its reads of its clock, a few ms)
        assert first["wall_ms"] >= cpu_ms - 100 - 50, (first, cpu_ms)
        assert first["search"]["depth"] == 20
    # its clock as the opponent was first told it (in the first game): less what was charged
    go = next(line for line in games[-1]["stderr"]["fools-mate"] if line.startswith("go "))
    assert int(go.split()[2]) <= 10000 - (computed[0] - 150) + 100
    # on a clock shorter than what it held, it loses on time at its first move
    game = play(tmp_path, "--tc", "0.1+0.05", f"{fake}:ready-thinker", f"{fake}:fools-mate", timeout=60)
    assert (game["verdict"]["kind"], game["verdict"]["player"]) == ("timeout", "ready-thinker")
    assert "before the game, waiting for the engine to be ready" in game["verdict"]["detail"]
    assert game["moves"] == []
    assert_nothing_left([tag])
