"""The engine check before a run (workers/engine_probe.py; docs/engines.md, "Before a run"):
engines that would start the same way are started once, and every entry of them gets its line."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from runner.domain.match_values import Limits
from workers.engine_probe import EngineToProbe, engine_problems

#: an engine that says where it started and cannot play: its check must fail
FAILING_ENGINE = """\
import sys
with open(sys.argv[1], "a") as log:
    log.write("started\\n")
sys.exit(3)
"""


def entry(root: Path, name: str, script: Path, log: Path, extra: str | None = None) -> EngineToProbe:
    path = root / name
    path.mkdir()
    (path / "entry.yaml").write_text(f"name: {name}\ngame: chess\nprotocol: uci\n")
    if extra is not None:
        (path / "book.txt").write_text(extra)
    return EngineToProbe(
        name, "uci", path, ["/usr/bin/python3", str(script), str(log)], {"options": {"Hash": 16}}
    )


def test_engines_that_start_alike_are_checked_once_and_each_is_named(tmp_path: Path) -> None:
    shared = Path(tempfile.mkdtemp(prefix="probe-"))  # the entry user (sandbox: none as root) writes here
    try:
        os.chmod(shared, 0o777)
        script, log = shared / "engine.py", shared / "starts.log"
        script.write_text(FAILING_ENGINE)
        os.chmod(script, 0o755)
        engines = [
            entry(tmp_path, "a", script, log),
            entry(tmp_path, "b", script, log),  # the same engine under another name: one start
            entry(tmp_path, "c", script, log, extra="1. e4"),  # a file of its own: a start of its own
        ]
        lines = engine_problems(engines, "chess", {}, "startpos", "none", Limits())
        assert [line.split(" (")[0] for line in lines] == ["engine a", "engine b", "engine c"], lines
        assert all("exit code 3" in line for line in lines), lines  # each its engine's own failure
        assert log.read_text().count("started") == 2
    finally:
        for f in shared.iterdir():
            f.unlink()
        shared.rmdir()
