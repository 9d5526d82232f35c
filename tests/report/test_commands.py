"""`tourney matches | standings | replay | report` through the real CLI parser.

The run directory is replaced by a synthetic ``ReportData`` (the loader is
tested against a real run in test_run_dir.py).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from runner.cli import main
from runner.commands import report as commands
from runner.report.model import ReportData


@pytest.fixture()
def run(pousse_data: ReportData, monkeypatch: pytest.MonkeyPatch) -> ReportData:
    monkeypatch.setattr(commands, "load_report_data", lambda run_dir: pousse_data)
    return pousse_data


def test_matches_json_lists_every_match(run: ReportData, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matches", "RUN", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert [d["match_id"] for d in doc] == [m.match_id for m in run.matches]
    d = doc[0]
    for key in ("stage", "round", "bracket", "pairing", "board_id", "orders", "state", "attempt", "result"):
        assert key in d


def test_matches_table_filtered_by_stage(run: ReportData, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["matches", "RUN", "--stage", "final"]) == 0
    out = capsys.readouterr().out
    for m in run.matches:
        assert (m.match_id in out) == (m.stage == "final")
    assert main(["matches", "RUN", "--stage", "nope"]) == 2
    assert "no stage 'nope' (stages: seeding, elimination, final)" in capsys.readouterr().err


def test_standings_terminal_json_and_csv(
    run: ReportData, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out_csv = tmp_path / "s.csv"
    assert main(["standings", "RUN", "--csv", str(out_csv)]) == 0
    text = capsys.readouterr().out
    assert "Stage seeding (round_robin): done" in text and "Final ranking" in text
    rows = list(csv.DictReader(out_csv.open()))
    assert len(rows) == sum(len(s.standings) for s in run.stages)
    assert main(["standings", "RUN", "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["final_ranking"] == run.tournament.final_ranking


def test_replay_prints_a_game(run: ReportData, capsys: pytest.CaptureFixture[str]) -> None:
    m = run.matches[-1]
    assert main(["replay", "RUN", m.match_id[:8], "--game", "2"]) == 0
    out = capsys.readouterr().out
    g = m.games[1]
    assert f"Match {m.match_id} game 2/2" in out
    assert out.count("\nmove ") == len(g.moves)
    assert main(["replay", "RUN", m.match_id, "--game", "3"]) == 2
    assert "has games 1..2, not 3" in capsys.readouterr().err
    assert main(["replay", "RUN", "zzzz"]) == 2
    assert "no match 'zzzz'" in capsys.readouterr().err


def test_report_writes_every_requested_file(
    run: ReportData, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    html, c, j, gl = (tmp_path / n for n in ("r.html", "s.csv", "s.json", "g.jsonl"))
    args = [
        "report",
        str(tmp_path),
        "--html",
        str(html),
        "--csv",
        str(c),
        "--json",
        str(j),
        "--games-jsonl",
        str(gl),
    ]
    assert main(args) == 0
    assert html.read_text().startswith("<!DOCTYPE html>")
    assert json.loads(j.read_text())["tournament"] == "pousse-demo"
    assert len(gl.read_text().splitlines()) == sum(len(m.games) for m in run.matches)
    assert c.read_text().startswith("stage,planner,")
    assert f"wrote {gl} ({len(gl.read_text().splitlines())} games)" in capsys.readouterr().out


def test_report_without_options_writes_report_html_in_the_run_dir(run: ReportData, tmp_path: Path) -> None:
    assert main(["report", str(tmp_path)]) == 0
    assert (tmp_path / "report.html").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.html"]


def test_missing_run_dir_is_a_clear_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["standings", str(tmp_path / "nope")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tourney standings: ") and "nope" in err
