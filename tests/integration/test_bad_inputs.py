"""No traceback, ever, from bad input (issue 38, item 3): a table of bad inputs a newcomer
gives, each run as the real `tourney` command. Every one must answer with exactly one line
that names what is wrong, exit 2 (README.md, "Exit codes": what was asked is wrong), and no
traceback; none may leave a run directory behind.

The table holds the inputs that used to end in a traceback (a run directory that is a file,
under a file, /dev/null; TOURNEY_HOME a file; a config that is not UTF-8; an output file
under a file), the messages issue 38 asked to say what to do, and the ones that already
answered well (docs/config.md "Errors", tests/config, tests/report/test_commands.py), so
that none of them slips back.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests import forked_cli
from tests.integration.helpers import ROOT, TOURNEY, env, private_tmp

SMALL = """\
name: small
seed: 1
game: mnk
sandbox: none
boards: {b: {text: "3 3 3"}}
entries:
  - path: FIXTURES/mnk/first_empty
  - path: ENTRIES/mnk/greedy
stages:
  - {name: rr, planner: round_robin, boards: [b], games_per_pairing: 2}
"""


@dataclass(frozen=True)
class Bad:
    """One bad input: the command's words (``{d}``: the table's directory), the words its one
    line must hold, and extra environment."""

    label: str
    argv: Sequence[str]
    says: Sequence[str]
    extra_env: dict[str, str] = field(default_factory=dict)
    code: int = 2
    #: words the line must not hold (advice the command cannot take)
    lacks: Sequence[str] = ()


TABLE = [
    # -- run directories (issue 38: tracebacks before) ----------------------------------------
    Bad(
        "run dir is a file",
        ["run", "{d}/small.yaml", "--inline", "--run-dir", "{d}/afile"],
        ["--run-dir", "afile is a file", "give a directory"],
    ),
    Bad(
        "run dir under a file",
        ["run", "{d}/small.yaml", "--inline", "--run-dir", "{d}/afile/sub"],
        ["afile is a file, so nothing can be made under it"],
    ),
    Bad(
        "run dir /dev/null",
        ["run", "{d}/small.yaml", "--inline", "--run-dir", "/dev/null"],
        ["--run-dir /dev/null is not a directory"],
    ),
    Bad(
        "TOURNEY_HOME is a file",
        ["run", "{d}/small.yaml", "--run-dir", "{d}/runs/home"],
        ["TOURNEY_HOME=", "afile is not a directory"],
        {"TOURNEY_HOME": "{d}/afile"},
    ),
    Bad(
        "TOURNEY_HOME under a file",
        ["run", "{d}/small.yaml", "--run-dir", "{d}/runs/home2"],
        ["cannot be made:", "afile is not a directory"],
        {"TOURNEY_HOME": "{d}/afile/home"},
    ),
    # -- configs -------------------------------------------------------------------------------
    Bad(
        "validate: not UTF-8",
        ["validate", "{d}/notutf8.yaml"],
        ["notutf8.yaml:2:10: not UTF-8 text: byte 0xe9", "save the file as UTF-8"],
    ),
    Bad(
        "run: not UTF-8",
        ["run", "{d}/notutf8.yaml", "--inline", "--run-dir", "{d}/runs/utf"],
        ["notutf8.yaml:2:10: not UTF-8 text"],
    ),
    Bad("validate: no such file", ["validate", "{d}/missing.yaml"], ["missing.yaml:1:1: cannot read config"]),
    Bad(
        "validate: a directory",
        ["validate", "{d}/cfgdir"],
        ["cfgdir:1:1: cannot read config: Is a directory"],
    ),
    Bad("validate: YAML syntax", ["validate", "{d}/syntax.yaml"], ["syntax.yaml:2:1: not valid YAML"]),
    Bad("validate: a list", ["validate", "{d}/list.yaml"], ["list.yaml:1:1: a config must be a mapping"]),
    Bad(
        "validate: unknown key",
        ["validate", "{d}/unknown.yaml"],
        ["unknown.yaml:2:1:", "unknown key 'bogus'"],
    ),
    Bad(
        "run: unknown key",
        ["run", "{d}/unknown.yaml", "--inline", "--run-dir", "{d}/runs/unknown"],
        ["unknown key 'bogus'"],
    ),
    # -- run's options -------------------------------------------------------------------------
    Bad(
        "run: --inline with --broker",
        [
            "run",
            "{d}/small.yaml",
            "--inline",
            "--broker",
            "redis://:pw@127.0.0.1:1/0",
            "--run-dir",
            "{d}/runs/x",
        ],
        ["--inline and --broker exclude each other"],
    ),
    Bad(
        "run: --no-local-workers alone",
        ["run", "{d}/small.yaml", "--no-local-workers", "--run-dir", "{d}/runs/x"],
        ["--no-local-workers needs --broker"],
    ),
    Bad(
        "run: --workers 0",
        ["run", "{d}/small.yaml", "--workers", "0", "--run-dir", "{d}/runs/x"],
        ["--workers must be at least 1"],
    ),
    Bad(
        "run: --broker-file missing",
        ["run", "{d}/small.yaml", "--broker-file", "{d}/nofile", "--run-dir", "{d}/runs/x"],
        ["--broker-file"],
    ),
    Bad(
        "run: broker without password",
        ["run", "{d}/small.yaml", "--broker", "redis://127.0.0.1:1/0", "--run-dir", "{d}/runs/x"],
        ["has no password", "tourney run accepts only a broker with a password", "leave out --broker"],
        lacks=["--allow-no-password"],
    ),
    Bad(
        "worker: broker without password",
        ["worker", "--broker", "redis://127.0.0.1:1/0"],
        ["has no password", "Pass --allow-no-password"],
    ),
    Bad(
        "validate: advance top 0",
        ["validate", "{d}/top0.yaml"],
        ["top0.yaml:10:", "stages[0].advance.top: Input should be greater than or equal to 1"],
        lacks=["is not allowed"],
    ),
    Bad(
        "resume with another config",
        ["run", "{d}/changed.yaml", "--inline", "--run-dir", "{d}/runs/done"],
        [
            "holds a run of another config",
            "stages[0].games_per_pairing: 2 -> 4",
            "the run's frozen copy {d}/runs/done/config.yaml",
            "start a new run with --run-dir",
        ],
    ),
    # -- reading runs --------------------------------------------------------------------------
    Bad("matches: no such run", ["matches", "{d}/nothere"], ["nothere: no such run directory"]),
    Bad("matches: a file", ["matches", "{d}/afile"], ["afile is a file, not a run directory"]),
    Bad("standings: not a run", ["standings", "{d}/cfgdir"], ["not a run directory (no tournament.sqlite)"]),
    Bad("replay: unknown match", ["replay", "{d}/runs/done", "zzzz"], ["no match 'zzzz' in this run"]),
    Bad("rerun: unknown match", ["rerun", "{d}/runs/done", "zzzz"], ["no match 'zzzz' in this run"]),
    Bad(
        "build-log: no such build", ["build-log", "{d}/runs/done", "nobody"], ["no failed build of 'nobody'"]
    ),
    Bad(
        "report: --html under a file",
        ["report", "{d}/runs/done", "--html", "{d}/afile/x.html"],
        ["--html", "cannot write it:", "afile is not a directory"],
    ),
    Bad(
        "standings: --csv under /dev/null",
        ["standings", "{d}/runs/done", "--csv", "/dev/null/x.csv"],
        ["--csv /dev/null/x.csv: cannot write it: /dev/null is not a directory"],
    ),
    # -- play, judge ---------------------------------------------------------------------------
    Bad(
        "play: no entry there",
        ["play", "--game", "mnk", "{d}/nothere", "ENTRIES/mnk/greedy"],
        ["nothere: no entry.yaml"],
    ),
    Bad(
        "play: unknown game",
        ["play", "--game", "nogame", "ENTRIES/mnk/greedy", "ENTRIES/mnk/greedy"],
        ["unknown game 'nogame'"],
    ),
    Bad("judge: no transcript", ["judge", "--game", "pousse", "{d}/nothere.txt"], ["nothere.txt"]),
]


def _words(words: Sequence[str], d: Path) -> list[str]:
    return [
        w.replace("{d}", str(d))
        .replace("ENTRIES", str(ROOT / "entries"))
        .replace("FIXTURES", str(ROOT / "tests/fixtures"))
        for w in words
    ]


@pytest.fixture(scope="module")
def table_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("bad")
    small = SMALL.replace("FIXTURES", str(ROOT / "tests" / "fixtures")).replace(
        "ENTRIES", str(ROOT / "entries")
    )
    (d / "small.yaml").write_text(small)
    (d / "afile").write_text("not a directory\n")
    (d / "notutf8.yaml").write_bytes(b"# a config saved as Latin-1\nname: caf\xe9\xff\n")
    (d / "syntax.yaml").write_text("name: [x\n")
    (d / "list.yaml").write_text("- a\n")
    (d / "unknown.yaml").write_text(small.replace("seed: 1\n", "bogus: 3\nseed: 1\n"))
    (d / "cfgdir").mkdir()
    stages = "  - {name: rr, planner: round_robin, boards: [b], games_per_pairing: 2}\n"
    (d / "top0.yaml").write_text(small.replace(stages, stages.replace("}", ", advance: {top: 0}}")))
    (d / "changed.yaml").write_text(small.replace("games_per_pairing: 2", "games_per_pairing: 4"))
    (d / "broken").mkdir()
    (d / "broken" / "entry.yaml").write_text("name: b\ngame: mnk\nprotocol: mnk\nrun: [x\n")
    run = [
        *TOURNEY,
        "run",
        str(d / "small.yaml"),
        "--inline",
        "--no-progress",
        "--run-dir",
        str(d / "runs" / "done"),
    ]
    done = forked_cli.run(run, env=env(**private_tmp(d)), capture_output=True, text=True, timeout=300, cwd=d)
    assert done.returncode == 0, done.stdout + done.stderr
    return d


def _answer(bad: Bad, d: Path) -> str | None:
    """What is wrong with the command's answer to ``bad`` (None: one clear line, exit 2)."""
    extra = {k: v.replace("{d}", str(d)) for k, v in bad.extra_env.items()}
    done = forked_cli.run(
        [*TOURNEY, *_words(bad.argv, d)], env=env(**private_tmp(d), **extra), capture_output=True,
        text=True, timeout=120, cwd=d,
    )  # fmt: skip
    lines = [ln for ln in (done.stdout + done.stderr).splitlines() if ln.strip()]
    if "Traceback" in done.stdout + done.stderr:
        return f"{bad.label}: a traceback:\n{done.stderr[-1500:]}"
    if done.returncode != bad.code:
        return f"{bad.label}: exit {done.returncode}, not {bad.code}: {lines}"
    if len(lines) != 1:
        return f"{bad.label}: {len(lines)} lines, not one: {lines}"
    missing = [w for w in _words(bad.says, d) if w not in lines[0]]
    if missing:
        return f"{bad.label}: the line lacks {missing}: {lines[0]!r}"
    wrong = [w for w in bad.lacks if w in lines[0]]
    if wrong:
        return f"{bad.label}: the line says {wrong}: {lines[0]!r}"
    return None


def test_every_bad_input_gets_one_line_exit_2_and_no_traceback(table_dir: Path) -> None:
    with ThreadPoolExecutor(max_workers=4) as pool:
        problems = [p for p in pool.map(lambda bad: _answer(bad, table_dir), TABLE) if p]
    assert problems == [], "\n".join(problems)
    # refused before anything was made: no run directory for any of them
    assert sorted(p.name for p in (table_dir / "runs").iterdir()) == ["done"]


def test_resume_ignores_comments_and_layout(table_dir: Path) -> None:
    """The config is compared by content, not bytes: a comment or a re-indent resumes."""
    small = (table_dir / "small.yaml").read_text()
    (table_dir / "commented.yaml").write_text(
        "# the organiser's note\n" + small.replace("seed: 1", "seed:   1  # same")
    )
    argv = [
        *TOURNEY,
        "run",
        str(table_dir / "commented.yaml"),
        "--inline",
        "--run-dir",
        str(table_dir / "runs/done"),
    ]
    done = forked_cli.run(
        argv, env=env(**private_tmp(table_dir)), capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "is complete: nothing left to play" in done.stdout
