"""The suite's fork server (tests/forked_cli.py) starts a command as a fresh interpreter would:
the same argv, working directory, environment, temporary directory, session, signals, streams
and exit status, and the same output from ``tourney`` itself."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from tests import forked_cli
from tests.integration.helpers import env

PROBE = [sys.executable, "-m", "tests.fork_probe"]
ROOT = Path(__file__).resolve().parents[2]


def _both(
    args: list[str], **kwargs: Any
) -> tuple[subprocess.CompletedProcess[str], subprocess.CompletedProcess[str]]:
    forked = forked_cli.run(args, capture_output=True, text=True, timeout=60, **kwargs)
    fresh = forked_cli.run(args, capture_output=True, text=True, timeout=60, fork=False, **kwargs)
    return forked, fresh


def test_a_forked_process_sees_what_a_fresh_one_sees(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    plugins = tmp_path / "plugins"
    e = env(TMPDIR=str(tmp), PROBE_VALUE="x y", PYTHONPATH=f"{plugins}{os.pathsep}{ROOT}")
    args = [*PROBE, "--read", "--exit", "3", "--env", "PROBE_VALUE", "--env", "TMPDIR"]
    forked, fresh = _both(args, cwd=tmp_path, env=e, input="from stdin\n", start_new_session=True)
    assert (forked.returncode, forked.stderr) == (fresh.returncode, fresh.stderr) == (3, "to stderr\n")
    seen, expected = json.loads(forked.stdout), json.loads(fresh.stdout)
    assert seen == expected
    assert seen["cwd"] == str(tmp_path) and seen["tmp"] == str(tmp) and seen["path0"] == str(tmp_path)
    assert seen["stdin"] == "from stdin\n" and seen["leader"] and seen["main"] == "tests.fork_probe"
    assert seen["argv"][1:] == args[3:] and seen["sigint"] and seen["sigterm"]
    assert forked_cli.cpu_seconds > 0  # the children's CPU reaches --cpu-durations


def test_tourney_answers_the_same_forked_and_fresh(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nstages: [\n")
    for args in (["--help"], ["validate", str(bad)], ["standings", str(tmp_path / "nowhere")]):
        forked, fresh = _both([*forked_cli.TOURNEY, *args], cwd=tmp_path, env=env())
        assert (forked.returncode, forked.stdout, forked.stderr) == (
            fresh.returncode,
            fresh.stdout,
            fresh.stderr,
        ), args
    assert forked.returncode == 2 and "no such run directory" in forked.stderr


def test_a_signal_ends_a_forked_process_as_a_fresh_one(tmp_path: Path) -> None:
    proc = forked_cli.Popen([*PROBE, "--sleep", "60"], cwd=tmp_path, env=env(), stdout=subprocess.DEVNULL)
    assert isinstance(proc, forked_cli.Process)
    assert proc.poll() is None
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(0.2)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(30) == -signal.SIGTERM
    proc.kill()  # after its end: nothing, as subprocess


def test_a_timeout_kills_the_command_and_says_so(tmp_path: Path) -> None:
    started = time.monotonic()
    with pytest.raises(subprocess.TimeoutExpired):
        forked_cli.run([*PROBE, "--sleep", "60"], cwd=tmp_path, env=env(), capture_output=True, timeout=1)
    assert time.monotonic() - started < 30


def test_what_the_interpreter_reads_at_start_is_never_forked(tmp_path: Path) -> None:
    # a locale or a warnings filter of its own: the server's would be wrong, so a fresh one
    for extra in ({"PYTHONWARNINGS": "error"}, {"LC_ALL": "C"}):
        proc = forked_cli.Popen([*PROBE], cwd=tmp_path, env=env(**extra), stdout=subprocess.DEVNULL)
        assert isinstance(proc, subprocess.Popen), extra
        assert proc.wait(60) == 0
    with forked_cli.no_server():  # the switch: everything fresh
        proc = forked_cli.Popen([*PROBE], cwd=tmp_path, env=env(), stdout=subprocess.DEVNULL)
        assert isinstance(proc, subprocess.Popen)
        assert proc.wait(60) == 0
