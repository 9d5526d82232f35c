"""A real `tourney run --inline` whose entries learn the contest's parameters and say things.

Three mnk entries, every move a real process (``sandbox: none``): one whose
moves come from its ``{seed}`` and that writes which seed it got on stderr,
one whose build fails with several compiler-like lines, and a plain one. The
run directory alone must then tell the organiser: which seed each game gave
(the same one a rerun gives), what the entry wrote (``tourney matches`` warns,
``replay`` shows it), and why the build failed (the verdict quotes the first
error-like lines and ``tourney build-log`` prints the whole log, carried back
in the result, not left on the worker).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from runner.cli import main
from runner.domain.match_values import VerdictKind
from runner.domain.placeholders import game_seed
from runner.report.entry_notes import build_logs, stderr_notes, warning_lines
from runner.report.loader import load_report_data
from runner.report.model import ReportData

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"

SEEDED = """\
import random
import sys

seed, size, budget_ms = int(sys.argv[1]), sys.argv[2], sys.argv[3]
print(f"seed {seed} size {size} budget {budget_ms} ms", file=sys.stderr)
lines = sys.stdin.read().split("\\n")
w, h, _ = (int(v) for v in lines[0].split())
taken = {tuple(int(v) for v in ln.split()) for ln in lines[1:] if ln.strip()}
free = [(x, y) for y in range(1, h + 1) for x in range(1, w + 1) if (x, y) not in taken]
print(*random.Random(seed * 1000 + len(taken)).choice(free))
"""

BROKEN_BUILD = (
    "echo 'compiling main.c'; "
    "echo 'main.c:3:5: error: unknown type name strng' >&2; "
    "echo 'main.c:4:1: note: note: declared here' >&2; "
    "echo 'main.c:9:1: error: expected declaration' >&2; "
    "echo 'the last line of the log' >&2; exit 1"
)

CONFIG = """
name: notes-it
seed: 17
game: mnk
sandbox: none
limits: {{move_wall_s: 5.0}}
boards:
  small: {{text: "3 3 3"}}
entries:
  - path: {seeded}
  - path: {broken}
  - path: {plain}
stages:
  - name: league
    planner: round_robin
    boards: [small]
    games_per_pairing: 2
"""


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if shutil.which("python3") is None:
        pytest.skip("python3 is needed to run the entries")
    base = tmp_path_factory.mktemp("notes")
    seeded = base / "seeded"
    seeded.mkdir()
    (seeded / "main.py").write_text(SEEDED)
    (seeded / "entry.yaml").write_text(
        "name: seeded\ngame: mnk\nprotocol: mnk\n"
        'run: [python3, main.py, "{seed}", "{size}", "{move_time_ms}"]\n'
    )
    broken = base / "broken"
    broken.mkdir()
    (broken / "entry.yaml").write_text(
        f'name: broken\ngame: mnk\nprotocol: mnk\nbuild: "{BROKEN_BUILD}"\nrun: [./a.out]\n'
    )
    config = base / "notes-it.yaml"
    config.write_text(CONFIG.format(seeded=seeded, broken=broken, plain=FIXTURES / "mnk" / "first_empty"))
    rd = base / "runs" / "notes-it"
    assert main(["run", str(config), "--inline", "--run-dir", str(rd), "--no-progress"]) == 0
    return rd


@pytest.fixture(scope="module")
def data(run_dir: Path) -> ReportData:
    return load_report_data(run_dir)


def test_each_game_gave_its_own_seed_and_the_contest_parameters(data: ReportData) -> None:
    seen = 0
    for m, k, g in data.games():
        if "seeded" not in g.order or "broken" in g.order:
            continue
        assert m.spec is not None
        (line,) = g.stderr["seeded"]
        # the seed a rerun of this match would give again: from the stored spec and the game number
        assert line.startswith(f"seed {game_seed(m.spec.seed, k)} size 3x3x3 budget 5000 ms"), line
        seen += 1
    assert seen == 2


def test_matches_warns_about_what_entries_wrote(
    run_dir: Path, data: ReportData, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["matches", str(run_dir)]) == 0
    out, err = capsys.readouterr()
    rows = [ln for ln in out.splitlines() if "seeded" in ln and "first-empty" in ln]
    assert rows and all("stderr: seeded" in ln for ln in rows)
    assert err.startswith("warning: entries wrote on stderr in 2 game(s): seeded")
    assert "budget 5000 ms" in err
    assert warning_lines(stderr_notes(data), str(run_dir))[0] == err.splitlines()[0]


def test_replay_shows_a_games_stderr(
    run_dir: Path, data: ReportData, capsys: pytest.CaptureFixture[str]
) -> None:
    match = next(m for m in data.matches if set(m.players) == {"seeded", "first-empty"})
    assert match.spec is not None
    assert main(["replay", str(run_dir), match.match_id, "--game", "2"]) == 0
    out = capsys.readouterr().out
    assert "seeded wrote on stderr:" in out and f"seed {game_seed(match.spec.seed, 2)} " in out


def test_build_failed_quotes_the_first_error_lines_and_build_log_prints_the_whole_log(
    run_dir: Path, data: ReportData, capsys: pytest.CaptureFixture[str]
) -> None:
    details = {g.verdict.detail for _, _, g in data.games() if g.verdict.kind is VerdictKind.BUILD_FAILED}
    (detail,) = details
    assert detail.startswith(
        "exit code 1: main.c:3:5: error: unknown type name strng | main.c:9:1: error: expected declaration"
    )
    assert "(full log: tourney build-log RUN ENTRY; on the worker " in detail
    (log,) = build_logs(data.matches)
    assert log.entry == "broken" and log.detail == detail

    assert main(["build-log", str(run_dir), "broken"]) == 0
    out = capsys.readouterr().out
    for line in ("compiling main.c", "note: declared here", "the last line of the log", "exit code 1"):
        assert line in out  # the whole log, not only the quoted lines
    assert main(["build-log", str(run_dir)]) == 0
    assert capsys.readouterr().out == f"broken: {detail}\n"
    assert main(["build-log", str(run_dir), "seeded"]) == 2
    assert "no failed build of 'seeded'" in capsys.readouterr().err


def test_the_html_report_shows_the_warnings_and_the_failed_build(run_dir: Path, data: ReportData) -> None:
    from runner.report.html import render_report

    html = render_report(data)
    assert "Warning: entries wrote on stderr in 2 game(s)" in html
    assert "budget 5000 ms" in html
    assert "Failed builds (1)" in html and "unknown type name strng" in html
    assert f"tourney build-log {run_dir} ENTRY" in html


def test_the_end_of_run_summary_warns(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from runner.report.terminal import print_final

    print_final(run_dir)
    out = capsys.readouterr().out
    assert "warning: entries wrote on stderr in 2 game(s): seeded" in out
    # issue 38: the run that charged a failed build names the command for its whole log, last
    # (broken played first-empty and seeded twice each: 4 games charged)
    last = " ".join(out.strip().splitlines()[-1].split())
    charged = "broken: its build failed (4 games charged build_failed)"
    assert last == f"{charged}; the whole log: tourney build-log {run_dir} broken"


def test_matches_json_carries_the_stderr_lines(run_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json

    assert main(["matches", str(run_dir), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    with_stderr = [g for r in rows for g in r["result"]["games"] if "stderr" in g]
    assert len(with_stderr) == 2 and all(set(g["stderr"]) == {"seeded"} for g in with_stderr)
