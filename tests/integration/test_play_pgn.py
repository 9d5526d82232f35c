"""``tourney play --pgn`` writes a PGN that PGN tools take as it is (issue 35, item 6;
docs/engines.md, "PGN"): python-chess and Debian's ``pgn-extract`` read every game of real
engines' play, standard and Chess960, with PlyCount, unique Rounds and the standard's
TimeControl.
"""

from __future__ import annotations

import io
import shutil
import subprocess
from pathlib import Path

import chess.pgn
import pytest

from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import ROOT, tourney

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}")

ENGINES = ROOT / "entries" / "chess"
PGN_EXTRACT = shutil.which("pgn-extract", path="/usr/games:/usr/bin")


def need(*programs: str) -> None:
    for program in programs:
        if shutil.which(program, path="/usr/games") is None:
            pytest.skip(f"{program} is not installed (apt-get install {program})")


def read_all(path: Path) -> list[chess.pgn.Game]:
    games, stream = [], io.StringIO(path.read_text())
    while (game := chess.pgn.read_game(stream)) is not None:
        assert not game.errors, game.errors
        games.append(game)
    return games


@pytest.mark.parametrize(
    "flags", [["--tc", "1+0.01"], ["--nodes", "3000", "--variant", "chess960"]], ids=["tc", "chess960-nodes"]
)
def test_play_writes_pgn_that_python_chess_and_pgn_extract_read(tmp_path: Path, flags: list[str]) -> None:
    need("stockfish", "gnuchess")
    opponent = ENGINES / ("gnuchess" if "--tc" in flags else "stockfish")
    out = tmp_path / "play.pgn"
    done = tourney(
        "play", "--game", "chess", "--quiet", "--games", "2", *flags, "--pgn", out,
        ENGINES / "stockfish", opponent, cwd=tmp_path, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    games = read_all(out)
    assert [g.headers["Round"] for g in games] == ["1", "2"]
    for g in games:
        plies = len(list(g.mainline_moves()))
        assert int(g.headers["PlyCount"]) == plies > 10
        if "--tc" in flags:
            assert g.headers["TimeControl"] == "1+0.01" and "SearchLimit" not in g.headers
        else:
            assert (g.headers["TimeControl"], g.headers["SearchLimit"]) == ("-", "nodes=3000")
            assert g.headers["Variant"] == "Chess960" and g.headers["SetUp"] == "1"
        end = g.end().board()
        if g.headers["Termination"] == "normal" and end.is_checkmate():
            assert g.headers["Result"] == ("0-1" if end.turn == chess.WHITE else "1-0")
    if PGN_EXTRACT is None:
        pytest.skip("pgn-extract is not installed (apt-get install pgn-extract)")
    checked = subprocess.run([PGN_EXTRACT, "-r", str(out)], capture_output=True, text=True, timeout=60)
    assert "2 games matched out of 2." in checked.stderr + checked.stdout, checked.stderr
    assert "Failed" not in checked.stderr and "rror" not in checked.stderr, checked.stderr
