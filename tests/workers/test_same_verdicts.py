"""One classifier: an entry gets the same verdict, word for word, under either host."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.domain.match_values import Limits, VerdictKind
from workers.sandbox import HostFactory, RunOutcome

from .conftest import processes_running

FAST = Limits(move_wall_s=0.3, output_kb=16)
EASY = Limits(move_wall_s=10.0, output_kb=16)


@pytest.fixture
def entry(tmp_path: Path) -> Path:
    d = tmp_path / "entry"
    d.mkdir()
    (d / "data.txt").write_text("x\n")
    return d


MOVES = [
    pytest.param(["sh", "-c", "exit 3"], EASY, VerdictKind.CRASH, "exit code 3", id="exit-code"),
    pytest.param(["sh", "-c", "kill -SEGV $$"], EASY, VerdictKind.CRASH, "signal 11 (SIGSEGV)", id="signal"),
    pytest.param(
        ["sleep", "35.1"], FAST, VerdictKind.TIMEOUT, "wall-clock limit 0.3 s exceeded", id="timeout"
    ),
    pytest.param(["yes"], EASY, VerdictKind.BAD_OUTPUT, "output over 16 KiB", id="output-flood"),
    pytest.param(
        # the pause lets the forked shell become `sleep` before the top process exits
        ["sh", "-c", "(sleep 35.2 &); sleep 0.2; echo 1"], EASY, VerdictKind.LEFT_PROCESSES,
        "did not kill all its processes: 1 still running after it exited (sleep)", id="left-processes",
    ),
    pytest.param(["sh", "-c", "echo fine"], EASY, None, "", id="clean"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "limits", "kind", "detail"), MOVES)
def test_a_move(
    hosts: HostFactory, entry: Path, argv: list[str], limits: Limits, kind: VerdictKind | None, detail: str
) -> None:
    with hosts.open(entry, limits, "A") as host:
        out = host.run(argv, b"", limits)
    assert (out.failure, out.detail) == (kind, detail)
    assert processes_running("sleep", "35.1") == processes_running("sleep", "35.2") == []


PERSISTENT = [
    pytest.param(["sleep", "35.3"], VerdictKind.TIMEOUT, "wall-clock limit 0.3 s exceeded", id="silent"),
    pytest.param(
        ["sh", "-c", "head -c 100000 /dev/zero | tr '\\0' x; exec sleep 35.4"],
        VerdictKind.BAD_OUTPUT, "output over 16 KiB", id="a-line-over-the-cap",
    ),
    pytest.param(["sh", "-c", "exit 4"], VerdictKind.CRASH, "exit code 4", id="exit-code"),
]  # fmt: skip


@pytest.mark.parametrize(("argv", "kind", "detail"), PERSISTENT)
def test_a_persistent_process(
    hosts: HostFactory, entry: Path, argv: list[str], kind: VerdictKind, detail: str
) -> None:
    with hosts.open(entry, FAST, "A") as host:
        proc = host.spawn(argv, FAST)
        ended = proc.read_line(0.3)
        proc.close()
    assert isinstance(ended, RunOutcome)
    assert (ended.failure, ended.detail) == (kind, detail)
    assert processes_running("sleep", "35.3") == processes_running("sleep", "35.4") == []
