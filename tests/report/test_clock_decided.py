"""Where only the move limit decided a game, the standings say so (issue 38, item 1).

A real `tourney run --inline` (``sandbox: none``): an m,n,k entry that sleeps past the move
limit loses on time, a result a busier or quieter machine could change; `tourney standings`
and the report name that game under the stage's standings, and a run without such a game
says nothing of the kind.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.cli import main
from runner.report.loader import load_report_data
from runner.report.site import write_html_report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

CONFIG = """
name: clocked
seed: 5
game: mnk
sandbox: none
limits: {{move_wall_s: 0.5}}
boards:
  small: {{text: "3 3 3"}}
entries:
  - path: {sleepy}
  - path: {plain}
stages:
  - name: league
    planner: round_robin
    boards: [small]
    games_per_pairing: {games}
"""


def _run(base: Path, sleepy_seconds: float, games: int) -> Path:
    sleepy = base / "sleepy"
    sleepy.mkdir(parents=True)
    (sleepy / "main.py").write_text(
        f"import sys, time\nsys.stdin.read()\ntime.sleep({sleepy_seconds})\nprint('1 1')\n"
    )
    (sleepy / "entry.yaml").write_text("name: sleepy\ngame: mnk\nprotocol: mnk\nrun: [python3, main.py]\n")
    config = base / "clocked.yaml"
    config.write_text(CONFIG.format(sleepy=sleepy, plain=FIXTURES / "mnk" / "first_empty", games=games))
    run_dir = base / "runs" / "clocked"
    assert main(["run", str(config), "--inline", "--run-dir", str(run_dir), "--no-progress"]) == 0
    return run_dir


def test_standings_name_the_games_the_move_limit_decided(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _run(tmp_path, 30.0, 2)
    capsys.readouterr()
    assert main(["standings", str(run_dir)]) == 0
    out = " ".join(capsys.readouterr().out.split())  # rich may fold the line at the terminal's width
    data = load_report_data(run_dir)
    (match,) = data.matches
    assert [g.verdict.kind.value for g in match.games] == ["timeout", "timeout"]
    m = match.match_id
    assert (
        f"note: 2 games decided by the move limit, not by the rules: {m} game 1 (timeout: sleepy), "
        f"{m} game 2 (timeout: sleepy); on a busier or quieter machine they could end otherwise"
    ) in out
    html = tmp_path / "report.html"
    write_html_report(data, html)
    assert "2 games decided by the move limit, not by the rules" in html.read_text()


def test_a_run_the_rules_decided_says_nothing_of_the_kind(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run_dir = _run(tmp_path, 0.0, 2)
    capsys.readouterr()
    assert main(["standings", str(run_dir)]) == 0
    assert "decided by the move limit" not in capsys.readouterr().out
