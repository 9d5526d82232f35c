"""`tourney validate` looks for each entry's program (``run[0]``) and, with ``--build``,
builds every entry in the sandbox: a missing or broken program is a located error (exit 2)
before the run, not a tournament of crashes and build_failed verdicts."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import forked_cli
from tests.config.test_validate import GOOD, make_entry, write
from tests.integration.helpers import env

ROOT = Path(__file__).resolve().parents[2]


def validate(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return forked_cli.run(
        [sys.executable, "-m", "runner.cli", "validate", *map(str, args)],
        env=env(),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("alpha", "beta"):
        make_entry(tmp_path, "boxing", name)
    (tmp_path / "configs").mkdir()
    return tmp_path


def with_gamma(project: Path, run: str, build: str | None = None) -> tuple[Path, Path]:
    """The config with its third entry, ``gamma``, written by hand: ``run`` on line 4."""
    d = project / "entries" / "boxing" / "gamma"
    d.mkdir(parents=True)
    lines = ["name: gamma", "game: boxing", "protocol: potm-arena", f"run: {run}"]
    if build is not None:
        lines.append(f"build: {build}")
    (d / "entry.yaml").write_text("\n".join(lines) + "\n")
    return write(project, GOOD), d


def test_a_missing_program_is_located_at_run_0(project: Path) -> None:
    config, d = with_gamma(project, '[./runme, "{mark}"]')
    done = validate(config)
    assert done.returncode == 2, done.stdout + done.stderr
    assert done.stdout.splitlines() == [
        f"{d / 'entry.yaml'}:4:7: run[0]: './runme' does not exist in the entry directory {d}; "
        "expected the entry's program, or a `build:` command that makes it"
    ]
    assert done.stderr == ""  # one problem is its own one line


def test_a_bare_command_must_be_on_path(project: Path) -> None:
    config, d = with_gamma(project, "[no-such-interpreter-28, main.py]")
    (d / "main.py").write_text("print(1)\n")
    done = validate(config)
    assert done.returncode == 2
    assert f"{d / 'entry.yaml'}:4:7: run[0]: 'no-such-interpreter-28' is not a command on PATH" in done.stdout
    (d / "entry.yaml").write_text((d / "entry.yaml").read_text().replace("no-such-interpreter-28", "python3"))
    assert validate(config).returncode == 0


def test_a_program_in_the_entry_named_without_dot_slash_gets_a_hint(project: Path) -> None:
    config, d = with_gamma(project, "[runme]")
    (d / "runme").write_text("#!/bin/sh\n")
    (d / "runme").chmod(0o755)
    done = validate(config)
    assert done.returncode == 2
    assert "'runme' is not a command on PATH" in done.stdout and "did you mean ./runme?" in done.stdout


def test_a_program_that_is_not_executable_is_refused(project: Path) -> None:
    config, d = with_gamma(project, "[./runme]")
    (d / "runme").write_text("#!/bin/sh\n")
    (d / "runme").chmod(0o644)
    done = validate(config)
    assert done.returncode == 2
    assert f"{d / 'entry.yaml'}:4:7: run[0]: './runme' is not executable" in done.stdout
    (d / "runme").chmod(0o755)
    ok = validate(config)
    assert ok.returncode == 0, ok.stdout + ok.stderr


def test_a_program_the_build_makes_is_left_to_validate_build(project: Path) -> None:
    config, d = with_gamma(project, "[./a.out]", build="cc -o a.out main.c")
    (d / "main.c").write_text("int main(void) { return 0; }\n")
    done = validate(config)
    assert done.returncode == 0, done.stdout + done.stderr


@pytest.mark.integration
def test_validate_build_reports_the_first_compiler_error_at_the_entry(project: Path) -> None:
    """The real sandbox, the workers' build path: a C syntax error is one located line with
    the compiler's first error; a build that does not make run[0] is located at run[0]."""
    from tests.integration.conftest import bwrap_problem

    problem = bwrap_problem()
    if problem is not None:
        pytest.skip(f"bwrap sandbox unavailable: {problem}")
    config, d = with_gamma(project, '[./a.out, "{mark}"]', build="cc -O2 -o a.out main.c")
    (d / "main.c").write_text("int main(void) {\n  return 0\n}\n")  # no ';'
    # the other two entries' programs are there (make_entry): validate alone passes
    assert validate(config).returncode == 0
    done = validate(config, "--build")
    assert done.returncode == 2, done.stdout + done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith(f"{d / 'entry.yaml'}:5:8: build: the build failed (exit code 1): main.c:2:"), line
    assert line.count("error: expected") == 1, line  # the first error line, once
    assert "Traceback" not in done.stderr

    (d / "main.c").write_text("int main(void) { return 0; }\n")
    (d / "entry.yaml").write_text((d / "entry.yaml").read_text().replace("-o a.out", "-o b.out"))
    done = validate(config, "--build")
    assert done.returncode == 2
    assert done.stdout.splitlines() == [
        f"{d / 'entry.yaml'}:4:7: run[0]: './a.out' does not exist after the build "
        "('cc -O2 -o b.out main.c'); expected the build to make it"
    ]

    (d / "entry.yaml").write_text((d / "entry.yaml").read_text().replace("-o b.out", "-o a.out"))
    ok = validate(config, "--build")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "builds: every entry built in the bwrap sandbox" in ok.stdout
