"""``log: engine`` through ``tourney run`` (docs/engines.md, "Engine traffic"): Debian's
stockfish on a real worker in the sandbox; every line to and from each engine, with
timestamps, one file per engine per game in ``logs/engines/`` of the run directory."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from runner.storage.store import RunStore
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import ROOT, tourney

pytestmark = [
    pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}"),
    pytest.mark.skipif(not Path("/usr/games/stockfish").exists(), reason="apt-get install stockfish"),
]

STAMP = re.compile(r"^\d\d:\d\d:\d\d\.\d{6} [<>!] ")


def _stockfish(directory: Path, name: str) -> Path:
    entry = directory / name
    entry.mkdir()
    text = (ROOT / "entries" / "chess" / "stockfish" / "entry.yaml").read_text()
    (entry / "entry.yaml").write_text(text.replace("name: stockfish", f"name: {name}"))
    return entry


def test_log_engine_writes_every_line_of_each_engine_per_game_with_the_run(tmp_path: Path) -> None:
    config = {
        "name": "logged",
        "seed": 5,
        "game": "chess",
        "each": {"tc": "5+0.05", "log": "engine"},
        "openings": {"file": str(ROOT / "configs" / "openings.epd"), "count": 1},
        "adjudication": {"maxmoves": 12},
        "entries": [
            {"path": str(_stockfish(tmp_path, "sf-a"))},
            {"path": str(_stockfish(tmp_path, "sf-b")), "engine": {"log": "off"}},
        ],
        "stages": [{"name": "s", "planner": "round_robin", "boards": ["openings"], "games_per_pairing": 2}],
    }
    path = tmp_path / "logged.yaml"
    path.write_text(yaml.safe_dump(config))
    done = tourney("run", path, "--workers", "1", "--no-progress", cwd=tmp_path, timeout=600)
    run_dir = tmp_path / "runs" / "logged"
    assert done.returncode == 0, done.stdout + done.stderr
    assert "engine logs:" in done.stdout
    logs = sorted((run_dir / "logs" / "engines").iterdir())
    # one match (a pair), two games; sf-b asked for no log
    assert [p.name.split("-g", 1)[1] for p in logs] == ["1-sf-a.log", "2-sf-a.log"], logs
    first, second = (p.read_text().splitlines() for p in logs)
    assert all(STAMP.match(line) for line in first + second if "left out" not in line)
    said = [line[16:] for line in first]
    assert said[0].startswith("! start /usr/games/stockfish")
    assert "> uci" in said and "< uciok" in said and "> isready" in said and "< readyok" in said
    goes = [s for s in said if s.startswith("> go wtime ")]
    bests = [s for s in said if s.startswith("< bestmove ")]
    assert len(goes) == len(bests) == 12  # its every move: asked, thought (info lines), answered
    assert any(s.startswith("< info depth ") for s in said)
    # the engine is kept for the pair's second game (restart off): its log starts at ucinewgame
    second_said = [line[16:] for line in second]
    assert second_said[0] == "> ucinewgame" and "> uci" not in second_said
    assert second_said[-1] == "> quit" or "> quit" in second_said[-3:]
    # the same text is in the stored result (it travelled back with it from the worker)
    with RunStore.open(run_dir) as store:
        (row,) = store.match_rows()
    assert row.result is not None
    assert [sorted(g.engine_logs) for g in row.result.games] == [["sf-a"], ["sf-a"]]
    assert row.result.games[0].engine_logs["sf-a"] == logs[0].read_text()
