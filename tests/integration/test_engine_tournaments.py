"""Real engines in real tournaments (docs/engines.md): Debian's stockfish, gnuchess and
phalanx through `tourney run` (the embedded Redis, a real Celery worker, the sandbox).

* a round robin of the three at a short clock, from the shipped config and book, with
  `games.pgn` out, no game lost on time and stockfish first (issue 35's plausibility check of the
  shipped config; `make bench ARGS=engine_strength` plays it whole, both openings);
* an SPRT of stockfish at 4,000 nodes a move against itself at 1,000, which must accept H1
  well before its cap of pairs.

Each skips where an engine is not installed (.ci/run installs all three).
"""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import chess.pgn
import pytest
import yaml

from bench.engine_strength import tally
from runner.domain.openings import read_book
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import LOADED_MARGIN_MS, ROOT, assert_nothing_left, tourney

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}")

ENGINES = ("stockfish", "gnuchess", "phalanx")


def _need(*programs: str) -> None:
    for program in programs:
        if shutil.which(program, path="/usr/games") is None:
            pytest.skip(f"{program} is not installed (apt-get install {program})")


def _pgn_games(path: Path) -> list[chess.pgn.Game]:
    games = []
    stream = io.StringIO(path.read_text())
    while (game := chess.pgn.read_game(stream)) is not None:
        games.append(game)
    return games


def _verdicts(run_dir: Path, cwd: Path) -> list[str]:
    listed = tourney("matches", run_dir, "--json", cwd=cwd)
    assert listed.returncode == 0, listed.stderr
    kinds = []
    for match in json.loads(listed.stdout):
        for game in match["result"]["games"]:
            kinds.append(game["verdict"]["kind"])
    return kinds


def test_a_round_robin_of_three_real_engines_writes_pgn_and_loses_no_game_on_time(tmp_path: Path) -> None:
    _need(*ENGINES)
    config = yaml.safe_load((ROOT / "configs" / "engines.yaml").read_text())
    config["openings"] = {**config["openings"], "file": str(ROOT / "configs" / "openings.epd"), "count": 1}
    # the shipped clock, with a margin for the load the suite puts on the machine: a flag that
    # falls by a scheduler's delay is not what is tested (stockfish lost one of six so at load 8)
    config["each"] = {**config["each"], "timemargin": LOADED_MARGIN_MS}
    for source in config["entries"]:
        source["path"] = str((ROOT / "configs" / source["path"]).resolve())
    path = tmp_path / "engines.yaml"
    path.write_text(yaml.safe_dump(config))
    done = tourney("run", path, "--workers", "2", "--no-progress", cwd=tmp_path, timeout=900)
    run_dir = tmp_path / "runs" / "engines"
    assert done.returncode == 0, done.stdout + done.stderr
    assert_nothing_left([str(run_dir)])
    # 3 pairings x 1 opening x both colours
    games = _pgn_games(run_dir / "games.pgn")
    assert len(games) == 6
    pairs = {frozenset((g.headers["White"], g.headers["Black"])) for g in games}
    assert pairs == {
        frozenset(p) for p in (("stockfish", "gnuchess"), ("stockfish", "phalanx"), ("gnuchess", "phalanx"))
    }
    assert all(g.headers["TimeControl"] == "2+0.05" and g.headers["SetUp"] == "1" for g in games)
    assert all(g.headers["Result"] in ("1-0", "0-1", "1/2-1/2") for g in games)
    kinds = _verdicts(run_dir, tmp_path)
    assert len(kinds) == 6 and "timeout" not in kinds, kinds
    # stockfish (four games) ahead of both: a setting that starves it (once `Move Overhead: 100`,
    # 1 ms a move) puts it last here
    (first, top), (_, second) = tally((run_dir / "games.pgn").read_text()).standings()[:2]
    assert first == "stockfish" and top > second, (first, top, second)


def test_sprt_of_stockfish_at_4000_nodes_against_1000_accepts_h1(tmp_path: Path) -> None:
    _need("stockfish")
    for nodes in (4000, 1000):
        entry = tmp_path / f"sf{nodes}"
        entry.mkdir()
        text = (ROOT / "entries" / "chess" / "stockfish" / "entry.yaml").read_text()
        (entry / "entry.yaml").write_text(text.replace("name: stockfish", f"name: sf{nodes}"))
    config = {
        "name": "sprt-nodes",
        "seed": 7,
        "game": "chess",
        "openings": {"file": str(ROOT / "configs" / "openings.epd"), "order": "random"},
        "adjudication": {"resign": {"movecount": 2, "score": 500}, "maxmoves": 120},
        "entries": [
            {"path": str(tmp_path / "sf4000"), "engine": {"nodes": 4000}},
            {"path": str(tmp_path / "sf1000"), "engine": {"nodes": 1000}},
        ],
        "stages": [
            {
                "name": "test",
                "planner": "sprt",
                "boards": ["openings"],
                "elo0": 0,
                "elo1": 100,
                "model": "normalized",
                "engine": "sf4000",
                "baseline": "sf1000",
                "max_pairs": 100,
            }
        ],
    }
    path = tmp_path / "sprt.yaml"
    path.write_text(yaml.safe_dump(config))
    done = tourney("run", path, "--workers", "2", "--no-progress", cwd=tmp_path, timeout=900)
    run_dir = tmp_path / "runs" / "sprt-nodes"
    assert done.returncode == 0, done.stdout + done.stderr
    assert_nothing_left([str(run_dir)])
    assert "H1 accepted, LLR +" in done.stdout, done.stdout
    decided = int(done.stdout.split("H1 accepted, LLR +", 1)[1].split("after ", 1)[1].split()[0])
    assert decided < 100, done.stdout
    games = _pgn_games(run_dir / "games.pgn")
    # the pairs decided on and those in flight beside them: each opening with both colours
    assert 2 * decided <= len(games) <= 2 * (decided + 2)
    assert "timeout" not in _verdicts(run_dir, tmp_path)


def test_per_match_plays_two_openings_a_match_through_a_real_run(tmp_path: Path) -> None:
    """``openings.per_match: 2``: 4 openings of one pairing are 2 matches of 4 games, each game
    from its own opening (PGN FEN and Opening), accepted by the coordinator's re-judging, and
    the standings count its 4 pairs (``penta``)."""
    _need("stockfish")
    for nodes in (2000, 500):
        entry = tmp_path / f"sf{nodes}"
        entry.mkdir()
        text = (ROOT / "entries" / "chess" / "stockfish" / "entry.yaml").read_text()
        (entry / "entry.yaml").write_text(text.replace("name: stockfish", f"name: sf{nodes}"))
    book = ROOT / "configs" / "openings.epd"
    config = {
        "name": "per-match",
        "seed": 7,
        "game": "chess",
        "openings": {"file": str(book), "order": "sequential", "count": 4, "per_match": 2},
        "adjudication": {"resign": {"movecount": 3, "score": 800}, "maxmoves": 60},
        "entries": [
            {"path": str(tmp_path / "sf2000"), "engine": {"nodes": 2000}},
            {"path": str(tmp_path / "sf500"), "engine": {"nodes": 500}},
        ],
        "stages": [
            {
                "name": "rr",
                "planner": "round_robin",
                "boards": ["openings"],
                "games_per_pairing": 2,
                "penta": True,
            }
        ],
    }
    path = tmp_path / "per-match.yaml"
    path.write_text(yaml.safe_dump(config))
    done = tourney("run", path, "--workers", "2", "--no-progress", cwd=tmp_path, timeout=900)
    run_dir = tmp_path / "runs" / "per-match"
    assert done.returncode == 0, done.stdout + done.stderr
    assert_nothing_left([str(run_dir)])
    listed = tourney("matches", run_dir, "--json", cwd=tmp_path)
    matches = json.loads(listed.stdout)
    assert sorted(m["board_id"] for m in matches) == ["opening-001+opening-002", "opening-003+opening-004"]
    assert all(len(m["result"]["games"]) == 4 for m in matches)
    fens = [o.fen for o in read_book(book)[:4]]
    games = _pgn_games(run_dir / "games.pgn")
    assert len(games) == 8
    by_opening: dict[str, list[chess.pgn.Game]] = {}
    for g in games:
        by_opening.setdefault(g.headers["Opening"], []).append(g)
    assert sorted(by_opening) == ["opening-001", "opening-002", "opening-003", "opening-004"]
    for fen, (name, two) in zip(fens, sorted(by_opening.items()), strict=True):
        assert len(two) == 2 and {g.headers["White"] for g in two} == {"sf2000", "sf500"}, name
        assert all(g.headers["FEN"] == fen for g in two), name
    assert "timeout" not in _verdicts(run_dir, tmp_path)


def test_auto_openings_a_match_fill_the_local_slots_and_a_resume_keeps_them(tmp_path: Path) -> None:
    """``per_match: auto`` with more local slots than the config's rule fills (docs/config.md,
    "openings"): two stockfish at 1,000 nodes over 8 openings make 2 matches of 4 by the
    config alone; a run with 4 local slots (``--workers 4``) plans 4 matches of 2 so that each
    slot has one, records 2 in its resolved.json, and plays every opening's pair."""
    _need("stockfish")
    for name in ("sf-a", "sf-b"):
        d = tmp_path / name
        d.mkdir()
        (d / "entry.yaml").write_text(yaml.safe_dump({
            "name": name, "game": "chess", "protocol": "uci", "run": ["/usr/games/stockfish"],
        }))  # fmt: skip
    config = {
        "name": "fit",
        "game": "chess",
        "each": {"nodes": 1000},
        "openings": {"file": str(ROOT / "configs" / "openings.epd"), "order": "sequential", "count": 8},
        "adjudication": {"maxmoves": 20},
        "entries": [{"path": str(tmp_path / "sf-a")}, {"path": str(tmp_path / "sf-b")}],
        "stages": [{"name": "rr", "planner": "round_robin", "games_per_pairing": 2, "boards": ["openings"]}],
    }
    path = tmp_path / "fit.yaml"
    path.write_text(yaml.safe_dump(config))
    run_dir = tmp_path / "run"
    done = tourney(
        "run", path, "--workers", "4", "--no-progress", "--run-dir", run_dir, cwd=tmp_path, timeout=600
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr
    assert json.loads((run_dir / "resolved.json").read_text())["openings_per_match"] == 2
    listed = tourney("matches", run_dir, "--json", cwd=tmp_path)
    matches = json.loads(listed.stdout)
    groups = sorted(m["board_id"] for m in matches)
    assert groups == [f"opening-{i:03d}+opening-{i + 1:03d}" for i in (1, 3, 5, 7)], groups
    assert all(len(m["result"]["games"]) == 4 for m in matches)  # each opening's pair, both openings
    again = tourney("run", path, "--no-progress", "--run-dir", run_dir, cwd=tmp_path)  # 2 slots now
    assert again.returncode == 0, again.stderr
    assert json.loads((run_dir / "resolved.json").read_text())["openings_per_match"] == 2
    assert_nothing_left([str(run_dir)])
