"""The report commands on a real run directory: `tourney run --inline`, then read it back.

A tiny boxing tournament (a round robin, then a knockout) of first-fit
players and one that prints garbage, with ``sandbox: none`` so it needs no
namespaces; every move is a real process. It checks that the loader, the
stages' audit helpers and every renderer agree on what the store holds.
"""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from runner.cli import main
from runner.report.loader import load_report_data
from runner.report.model import ReportData

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "boxing"

CONFIG = """
name: report-it
game: boxing
game_params: {{max_box: 2}}
sandbox: none
limits: {{move_wall_s: 5.0}}
boards:
  tiny: {{text: "---\\n-o-\\n"}}
entries:
  - path: {first_fit}
    variants: {{prefix: ff, count: 2}}
  - path: {garbage}
stages:
  - name: league
    planner: round_robin
    boards: [tiny]
    games_per_pairing: 2
  - name: cup
    planner: knockout
    boards: [tiny]
    games_per_pairing: 2
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("python3") is None:
        pytest.skip("python3 is needed to run the fixture entries")
    base = tmp_path_factory.mktemp("run")
    config = base / "report-it.yaml"
    config.write_text(CONFIG.format(first_fit=FIXTURES / "first_fit", garbage=FIXTURES / "garbage"))
    rd = base / "runs" / "report-it"
    code = main(["run", str(config), "--inline", "--run-dir", str(rd), "--no-progress"])
    assert code == 0
    return rd


@pytest.fixture(scope="module")
def data(run_dir: Path) -> ReportData:
    return load_report_data(run_dir)


def test_the_loader_sees_every_stage_match_and_game(data: ReportData) -> None:
    assert data.name == "report-it" and data.game_name == "boxing" and data.sandbox == "none"
    assert data.tournament.finished
    assert [s.name for s in data.stages] == ["league", "cup"]
    assert all(s.status == "done" for s in data.stages)
    assert all(m.finished and m.state == "done" and m.attempt >= 1 for m in data.matches)
    assert len(data.stage_matches("league")) == 3  # 3 entries, every pair once
    cup = data.stage("cup")
    assert cup is not None and sum(len(r.byes) for r in cup.rounds) == 1  # three players: one bye
    assert sum(1 for _ in data.games()) == 2 * len(data.matches)
    # the garbage entry loses every game by a verdict
    assert data.verdicts_by_entry()[("garbage", "bad_output")] == sum(
        1 for _, _, g in data.games() if "garbage" in g.order
    )
    assert data.tournament.final_ranking[-1] == "garbage"


def test_the_run_wrote_its_report_and_the_command_rewrites_it(run_dir: Path, data: ReportData) -> None:
    page = (run_dir / "report.html").read_text()
    assert 'id="sandbox-warning"' in page and "report-it" in page
    assert '<div class="bracket">' in page  # the knockout's diagram
    out = run_dir / "again.html"
    assert main(["report", str(run_dir), "--html", str(out)]) == 0
    assert f'id="m-{data.matches[0].match_id}"' in out.read_text()


def test_matches_standings_replay_and_exports(
    run_dir: Path, data: ReportData, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["matches", str(run_dir), "--json", "--stage", "cup"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert {r["match_id"] for r in rows} == {m.match_id for m in data.stage_matches("cup")}
    assert all(r["state"] == "done" and r["result"] is not None for r in rows)

    assert main(["standings", str(run_dir), "--csv", str(tmp_path / "s.csv")]) == 0
    text = capsys.readouterr().out
    assert "Stage league (round_robin): done" in text and "Final ranking" in text
    assert len(list(csv.DictReader((tmp_path / "s.csv").open()))) == 3 + 3

    m = data.stage_matches("league")[0]
    assert main(["replay", str(run_dir), m.match_id, "--game", "2"]) == 0
    out = capsys.readouterr().out
    assert f"Match {m.match_id} game 2/2" in out and "move 1/" in out

    jsonl = tmp_path / "games.jsonl"
    assert main(["report", str(run_dir), "--games-jsonl", str(jsonl)]) == 0
    games = [json.loads(line) for line in jsonl.read_text().splitlines()]
    assert len(games) == 2 * len(data.matches)
    assert all(g["moves"] or g["verdict"]["kind"] != "normal" for g in games)
