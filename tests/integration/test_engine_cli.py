"""``tourney fastchess`` and ``tourney cutechess``: a real match of stockfish at few nodes, from
the tools' own command line, on an embedded Redis and a local worker, every engine in the
sandbox; what it prints is read with the parsers fishtest and chess-tuning-tools use on the
real tools' output (tests/report/test_engine_lines.py restates them with their sources), and
what they read must be what the run's PGN says was played."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

import chess.pgn
import pytest

from tests.fetch_syzygy import syzygy_dir
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import ROOT, assert_nothing_left, tourney
from tests.report.test_engine_lines import FISHTEST_PTNML, FISHTEST_WLD, chess_tuning_tools_pentanomial

STOCKFISH = Path("/usr/games/stockfish")
BOOK = ROOT / "configs" / "openings.epd"

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}"),
    pytest.mark.skipif(
        not STOCKFISH.is_file(), reason="stockfish is not installed (apt-get install stockfish)"
    ),
]


def pgn_pentanomial(path: Path, first: str) -> tuple[list[int], tuple[int, int, int]]:
    """[LL, LD, DD+WL, WD, WW] and (W, L, D) of ``first`` from a PGN whose games come in pairs."""
    points: dict[str, list[float]] = {}
    text = path.read_text()
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        h = game.headers
        mine = {"1-0": 1.0, "0-1": 0.0, "1/2-1/2": 0.5}[h["Result"]]
        if h["Black"] == first:
            mine = 1 - mine
        points.setdefault(h["Opening"], []).append(mine)
    penta = [0] * 5
    flat = []
    for pair in points.values():
        assert len(pair) == 2
        penta[int(sum(pair) * 2)] += 1
        flat += pair
    return penta, (flat.count(1.0), flat.count(0.0), flat.count(0.5))


def test_a_fastchess_command_line_plays_and_prints_what_fishtest_reads(tmp_path: Path) -> None:
    pgn = tmp_path / "games.pgn"
    argv = [
        "fastchess",
        "-engine", f"cmd={STOCKFISH}", "name=sf-a", "option.Hash=16",
        "-engine", f"cmd={STOCKFISH}", "name=sf-b", "option.Hash=16", "nodes=200",
        "-each", "proto=uci", "nodes=600", "option.Threads=1",
        "-openings", f"file={BOOK}", "format=epd", "order=random",
        "-rounds", "4", "-repeat", "-concurrency", "2", "-ratinginterval", "2", "-srand", "11",
        "-sprt", "elo0=0", "elo1=10", "alpha=0.05", "beta=0.05",
        "-recover", "-pgnout", f"file={pgn}", "notation=san",
        "--run-dir", str(tmp_path / "run"),
    ]  # fmt: skip
    done = tourney(*argv, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    out = done.stdout.splitlines()
    # standard output holds the tool's lines and nothing else (tourney's own went to stderr)
    tool_line = re.compile(
        r"Finished game \d+ \(sf-[ab] vs sf-[ab]\): (1-0|0-1|1/2-1/2) \{.+\}|-{50}|Results of sf-a vs sf-b "
        r"\(600 nodes - 200 nodes, 1t, 16MB, openings\.epd\):|Elo: |LOS: |Games: |Ptnml\(0-2\): |LLR: |"
        r"Tournament finished|SPRT \(\[0\.00, 10\.00\]\) completed"
    )
    assert [line for line in out if not tool_line.match(line)] == []
    assert "report:" in done.stderr
    penta, (w, l_, d) = pgn_pentanomial(pgn, "sf-a")
    assert sum(penta) == 4
    wld = [m for line in out if (m := FISHTEST_WLD.search(line))]
    ptnml = [m for line in out if (m := FISHTEST_PTNML.search(line))]
    assert len(wld) == len(ptnml) == 2  # after pair 2, and at the end (pair 4)
    assert [int(wld[-1].group(i)) for i in range(1, 5)] == [8, w, l_, d]
    assert [int(ptnml[-1].group(i)) for i in range(1, 6)] == penta
    # sf-a searches three times as many nodes: it should not lose the match
    assert w + d / 2 >= 4, out
    assert_nothing_left([str(tmp_path)])

    # the same command again: the run is complete, its totals are printed again, nothing replayed
    again = tourney(*argv, cwd=tmp_path, timeout=120)
    assert again.returncode == 0, again.stderr[-2000:]
    assert "Finished game" not in again.stdout
    last = [m for line in again.stdout.splitlines() if (m := FISHTEST_PTNML.search(line))]
    assert [int(last[-1].group(i)) for i in range(1, 6)] == penta
    assert_nothing_left([str(tmp_path)])


def test_a_cutechess_command_line_prints_what_chess_tuning_tools_reads(tmp_path: Path) -> None:
    # chess-tuning-tools' own flags: -rounds N -games 2 -repeat -recover -debug -pgnout out.pgn
    argv = [
        "cutechess", "-concurrency", "2",
        "-engine", f"cmd={STOCKFISH}", "name=tuned", "option.Hash=16", "restart=auto",
        "-engine", f"cmd={STOCKFISH}", "name=base", "option.Hash=16", "nodes=150",
        "-each", "proto=uci", "nodes=450", "timemargin=100",
        "-openings", f"file={BOOK}", "format=epd", "order=random",
        "-draw", "movenumber=40", "movecount=10", "score=8",
        "-resign", "movecount=3", "score=550", "twosided=false",
        "-rounds", "3", "-games", "2", "-repeat", "-recover", "-debug", "-pgnout", "out.pgn",
        "--run-dir", str(tmp_path / "run"),
    ]  # fmt: skip
    done = tourney(*argv, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    penta, (w, l_, d) = pgn_pentanomial(tmp_path / "out.pgn", "tuned")
    counts = chess_tuning_tools_pentanomial(done.stdout)
    assert [counts["LL"], counts["LD"], counts["WL/DD"], counts["WD"], counts["WW"]] == penta
    assert sum(penta) == 3
    scores = re.findall(r"Score of tuned vs base: (\d+) - (\d+) - (\d+)  \[([0-9.]+)\] (\d+)", done.stdout)
    assert len(scores) == 6 and tuple(map(int, scores[-1][:3])) == (w, l_, d)
    assert float(scores[-1][3]) == round((w + d / 2) / 6, 3)
    assert re.search(r"^Elo difference: .+, LOS: .+ %, DrawRatio: [0-9.]+ %$", done.stdout, re.M)
    assert done.stdout.rstrip().endswith("Finished match")
    assert "-debug: engine traffic is not printed" in done.stderr
    assert_nothing_left([str(tmp_path)])


def test_tb_flags_adjudicate_by_the_tables_and_the_coordinator_accepts_it(tmp_path: Path) -> None:
    tables = syzygy_dir()
    if tables is None:
        pytest.skip("no 3-piece Syzygy tables: python -m tests.fetch_syzygy")
    # white to move takes the knight next to its king: KQvK, a win for white by the tables
    (tmp_path / "tb.epd").write_text("4k3/8/8/8/8/8/3n4/3QK3 w - - hmvc 0; fmvn 1;\n")
    argv = [
        "fastchess",
        "-engine", f"cmd={STOCKFISH}", "name=one", "-engine", f"cmd={STOCKFISH}", "name=two",
        "-each", "nodes=300", "option.Hash=16",
        "-openings", "file=tb.epd", "format=epd", "-rounds", "1",
        "-tb", str(tables), "-tbpieces", "3",
        "--run-dir", str(tmp_path / "run"),
    ]  # fmt: skip
    done = tourney(*argv, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    finished = [line for line in done.stdout.splitlines() if line.startswith("Finished game")]
    assert finished == [
        "Finished game 1 (one vs two): 1-0 {White wins by adjudication: SyzygyTB}",
        "Finished game 2 (two vs one): 1-0 {White wins by adjudication: SyzygyTB}",
    ]
    listed = tourney("matches", tmp_path / "run", "--json", cwd=tmp_path)
    (match,) = json.loads(listed.stdout)
    assert match["state"] == "done"  # accepted: the coordinator's replay agreed with the tables
    assert [g["moves"] for g in match["result"]["games"]] == [1, 1]
    assert_nothing_left([str(tmp_path)])
