"""The example plugin (examples/connect4) installed into a fresh virtualenv and run end
to end through real workers: standings, report with replays, rerun and judge.

The fresh environment sees tourney's own environment the way
``python -m venv --system-site-packages`` sees a system Python's (a ``.pth`` that
adds tourney's site-packages, so nothing but the plugin is installed and only
PyPI-free steps run), then ``pip install`` puts the plugin in it for real: its
``tourney.games`` entry point is the only way ``game: connect4`` can be found.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

import pytest

from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import ROOT, assert_nothing_left, env, private_tmp, tourney, unique

EXAMPLE = ROOT / "examples" / "connect4"


def fresh_venv_with_the_plugin(where: Path) -> Path:
    """A new virtualenv that sees tourney's environment, with the example plugin pip-installed."""
    # no pip of its own (ensurepip costs seconds of CPU): this environment's pip installs into it
    venv.EnvBuilder(with_pip=False).create(where)
    python = where / "bin" / "python"
    site_packages = Path(
        subprocess.run(
            [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    ours = sysconfig.get_paths()["purelib"]
    # addsitedir (not a bare path line) so tourney's own .pth files (its editable install) apply too
    (site_packages / "tourney-parent.pth").write_text(f"import site; site.addsitedir({ours!r})\n")
    source = where.parent / "connect4-src"
    shutil.copytree(EXAMPLE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    pip = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "--no-deps", str(source)],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert pip.returncode == 0, pip.stdout + pip.stderr
    return python


def run_tourney(
    python: Path, *args: str | Path, cwd: Path, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    environment = env(**private_tmp(cwd))
    environment.pop("PYTHONPATH")  # only what the fresh environment itself holds
    return subprocess.run(
        [python, "-m", "runner.cli", *map(str, args)],
        cwd=cwd,
        env=environment,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def test_the_connect4_plugin_runs_end_to_end_from_a_fresh_virtualenv(tmp_path: Path) -> None:
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bwrap sandbox unavailable: {problem}")
    # the plugin is not part of tourney: its own environment does not know the game
    assert subprocess.run([sys.executable, "-c", "import connect4"], capture_output=True).returncode != 0

    python = fresh_venv_with_the_plugin(tmp_path / "venv")
    contest = tmp_path / "contest"
    shutil.copytree(EXAMPLE, contest, ignore=shutil.ignore_patterns("connect4", "pyproject.toml"))
    config = contest / "connect4.yaml"
    checked = run_tourney(python, "validate", config, cwd=contest)
    assert checked.returncode == 0, checked.stdout + checked.stderr

    tag = unique("c4")
    run_dir = tmp_path / f"run-{tag}"
    done = run_tourney(
        python, "run", config, "--run-dir", run_dir, "--workers", "2", "--no-progress", cwd=contest
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert_nothing_left([str(run_dir)])

    # standings: the stronger entry (C, text protocol) beats the weaker (Python, json) both ways
    shown = run_tourney(python, "standings", run_dir, "--json", cwd=contest)
    assert shown.returncode == 0, shown.stderr
    doc = json.loads(shown.stdout)
    assert doc["game"] == "connect4"
    (league,) = doc["stages"]
    rows = [(r["entry"], r["wins"], r["losses"]) for r in league["standings"]]
    assert rows == [("greedy", 2, 0), ("leftmost", 0, 2)]

    # the report draws every game through the plugin's render()
    report = (run_dir / "report.html").read_text()
    assert "replays embedded for 2 of 2 games" in report

    listed = run_tourney(python, "matches", run_dir, "--json", cwd=contest)
    assert listed.returncode == 0, listed.stderr
    (match,) = json.loads(listed.stdout)
    match_id = match["match_id"]
    again = run_tourney(python, "rerun", run_dir, match_id, cwd=contest)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "identical: every game has the same moves and result" in again.stdout

    replay = run_tourney(python, "replay", run_dir, match_id, cwd=contest)
    assert replay.returncode == 0, replay.stderr
    assert "winner greedy (4 in a row)" in replay.stdout

    # the protocol examples of docs/games.md, one against the other (Python text vs C json)
    played = run_tourney(
        python,
        "play",
        "--game",
        "connect4",
        "--games",
        "2",
        "--json",
        contest / "entries" / "rightmost",
        contest / "entries" / "centre",
        cwd=contest,
    )
    assert played.returncode == 0, played.stdout + played.stderr
    games = json.loads(played.stdout)["games"]
    assert len(games) == 2
    for game in games:
        assert game["verdict"]["kind"] == "normal", game["verdict"]
        assert game["winner"] in ("rightmost", "centre") or game["winner"] is None

    transcript = contest / "game.txt"
    transcript.write_text("7 6\n4\n1\n4\n1\n4\n1\n4\n")
    judged = run_tourney(python, "judge", "--game", "connect4", transcript, cwd=contest)
    assert judged.returncode == 0, judged.stderr
    assert json.loads(judged.stdout) == {"over": True, "winner": "X", "reason": "4 in a row", "moves": 7}


def test_a_referee_program_in_awk_runs_a_tournament_through_real_workers(tmp_path: Path) -> None:
    """examples/nim-referee: the rules are nim.awk, spoken to in JSON lines from every worker."""
    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bwrap sandbox unavailable: {problem}")
    contest = tmp_path / "nim"
    shutil.copytree(ROOT / "examples" / "nim-referee", contest)  # game_params.program is "." there
    run_dir = tmp_path / f"run-{unique('nim')}"
    done = tourney("run", "nim.yaml", "--run-dir", run_dir, "--workers", "2", "--no-progress", cwd=contest)
    assert done.returncode == 0, done.stdout + done.stderr
    assert_nothing_left([str(run_dir)])
    shown = tourney("standings", run_dir, "--json", cwd=contest)
    assert shown.returncode == 0, shown.stderr
    (league,) = json.loads(shown.stdout)["stages"]
    rows = [(r["entry"], r["wins"], r["losses"]) for r in league["standings"]]
    assert rows == [("optimal", 4, 0), ("take-one", 0, 4)]
    assert "replays embedded for 4 of 4 games" in (run_dir / "report.html").read_text()
