"""The command line's conventions (issue 28): --version, no abbreviated options, a closed
pipe ends a command quietly, one exit-code table for every command, a line per finished
game in a plain log, the results as files in the run directory, tourney on PATH."""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from runner.cli import build_parser
from runner.errors import EXIT_CODES_TEXT
from runner.orchestration.redis_server import free_port
from runner.storage.store import RunStore
from tests import forked_cli
from tests.integration.helpers import ROOT, TOURNEY, env, tourney, write_config

#: a run's config, its directory, and what `tourney run` printed
Finished = tuple[Path, Path, subprocess.CompletedProcess[str]]


@pytest.fixture(scope="module")
def finished_run(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    """A small inline run, its stdout a pipe (a plain log, as in CI)."""
    d = tmp_path_factory.mktemp("conventions")
    config = write_config(d, "conv", entrants=4)
    done = tourney("run", config, "--inline", cwd=d)
    assert done.returncode == 0, done.stdout + done.stderr
    return config, d / "runs" / "conv", done


def test_version() -> None:
    done = subprocess.run([*TOURNEY, "--version"], env=env(), capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout == f"tourney {version('tourney')}\n"


def _parsers(parser: argparse.ArgumentParser | None = None) -> list[argparse.ArgumentParser]:
    """Every parser of the command line, sub-commands' own (``fleet add``) included."""
    top = build_parser() if parser is None else parser
    found = [top]
    for action in top._actions:
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                found += _parsers(sub)
    return found


def test_no_option_is_ever_abbreviated(tmp_path: Path) -> None:
    parsers = _parsers()
    assert {"tourney run", "tourney pgn", "tourney fleet add", "tourney fleet revoke"} <= {
        p.prog for p in parsers
    }
    assert [p.prog for p in parsers if p.allow_abbrev] == []
    config = write_config(tmp_path, "abbrev", entrants=2)
    done = tourney("run", config, "--worker", "3", cwd=tmp_path)
    assert done.returncode == 2
    assert "unrecognized arguments: --worker 3" in done.stderr
    assert not (tmp_path / "runs").exists()  # refused before anything started


def test_a_closed_pipe_ends_every_command_quietly(
    finished_run: Finished,
) -> None:
    config, run_dir, _ = finished_run
    for args in (["matches", run_dir, "--json"], ["validate", config], ["standings", run_dir]):
        proc = forked_cli.Popen(
            [*TOURNEY, *map(str, args)], env=env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        assert proc.stdout is not None and proc.stderr is not None
        proc.stdout.close()  # the reader is gone before the command writes a byte
        err = proc.stderr.read().decode()
        assert proc.wait(60) == 141, (args, err)
        assert err == "", (args, err)
    # and as a user writes it
    shell = subprocess.run(
        ["bash", "-c", f"{' '.join(TOURNEY)} matches {run_dir} --json | head -1"],
        env=env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert shell.stderr == "" and shell.stdout.strip() in ("[", "{"), shell.stdout  # its first line


def test_one_exit_code_table_in_help_and_readme() -> None:
    help_text = forked_cli.run(
        [*TOURNEY, "--help"], env=env(), capture_output=True, text=True, timeout=60
    ).stdout
    assert EXIT_CODES_TEXT in help_text
    in_help = [*re.findall(r"^  (\d+) ", EXIT_CODES_TEXT, re.MULTILINE), "143"]
    readme = (ROOT / "README.md").read_text()
    table = readme.split("## Exit codes", 1)[1].split("\n## ", 1)[0]
    in_readme = [*re.findall(r"^\| (\d+) \|", table, re.MULTILINE), "143"]
    assert sorted(in_help, key=int) == sorted(in_readme, key=int) == ["0", "1", "2", "3", "130", "141", "143"]


def test_an_unreachable_broker_is_exit_3_from_run_and_worker(tmp_path: Path) -> None:
    url = f"redis://:secret@127.0.0.1:{free_port()}/0"  # nobody listens there
    config = write_config(tmp_path, "nobroker", entrants=2)
    run = tourney("run", config, "--broker", url, "--no-local-workers", "--no-progress", cwd=tmp_path)
    worker = tourney("worker", "--broker", url, "--skip-health-check", cwd=tmp_path)
    assert run.returncode == 3 and "unreachable" in run.stderr, run.stderr
    assert worker.returncode == 3 and "unreachable" in worker.stderr, worker.stderr
    assert "Traceback" not in run.stderr + worker.stderr


def test_a_plain_log_has_a_line_per_finished_game(
    finished_run: Finished,
) -> None:
    _, run_dir, done = finished_run
    lines = [x for x in done.stdout.splitlines() if x.startswith("finished game ")]
    with RunStore.open(run_dir) as store:
        games = [
            (r.match_id, k, g)
            for r in store.match_rows()
            if r.result
            for k, g in enumerate(r.result.games, 1)
        ]
    assert len(lines) == len(games) == 12
    for match_id, k, g in games:
        result = f"{g.winner} wins" if g.winner else "draw"
        line = f"finished game {match_id[:8]}/{k} {' vs '.join(g.order)}: {result}"
        assert any(x.startswith(line) and x.endswith(f"{{{g.reason}}}") for x in lines), (line, lines)


def test_every_run_writes_its_standings_and_games_into_the_run_directory(
    finished_run: Finished, tmp_path: Path
) -> None:
    _, run_dir, done = finished_run
    standings = tourney("standings", run_dir, "--json", cwd=tmp_path)
    assert json.loads((run_dir / "standings.json").read_text()) == json.loads(standings.stdout)
    exported = tourney("report", run_dir, "--games-jsonl", tmp_path / "games.jsonl", cwd=tmp_path)
    assert exported.returncode == 0, exported.stderr
    written = (run_dir / "games.jsonl").read_text().splitlines()
    assert written == (tmp_path / "games.jsonl").read_text().splitlines() and len(written) == 12
    assert f"results: {run_dir / 'standings.json'}, {run_dir / 'games.jsonl'}" in done.stdout


def test_the_set_up_puts_tourney_on_path() -> None:
    """What README.md's set-up says to do after `make tournament`: `. .venv/bin/activate`."""
    hint = subprocess.run(["make", "-s", "venv"], cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert "'. .venv/bin/activate' puts it on PATH" in hint.stdout, hint.stdout + hint.stderr
    assert ". .venv/bin/activate\n    tourney --version" in (ROOT / "README.md").read_text()
    venv = Path(sys.executable).parent.parent
    on_path = subprocess.run(
        ["bash", "-c", f". {venv}/bin/activate && command -v tourney && tourney --version"],
        capture_output=True,
        text=True,
        timeout=60,
        env={"PATH": "/usr/bin:/bin", "HOME": str(Path.home())},
    )
    assert on_path.returncode == 0, on_path.stderr
    assert on_path.stdout.splitlines() == [f"{venv}/bin/tourney", f"tourney {version('tourney')}"]
