"""Engine traffic logs (workers/engine_log.py): the cap keeps the start and the end of a game."""

from __future__ import annotations

from runner.domain.match_values import GameRecord, Verdict, VerdictKind
from workers import engine_log
from workers.engine_log import EngineTraffic, LoggingProcess
from workers.sandbox.base import InteractiveProcess, RunOutcome


def test_a_long_game_keeps_its_start_and_its_end_within_the_cap() -> None:
    traffic = EngineTraffic()
    traffic.add("sf", ">", "uci")
    for i in range(20_000):
        traffic.add("sf", "<", f"info depth 12 nodes {i} pv e2e4")
    traffic.add("sf", "!", "no line within 0.231 s")
    record = GameRecord(["sf", "x"], None, {}, Verdict(VerdictKind.NORMAL, None, ""), [], "")
    text = traffic.attach(record).engine_logs["sf"]
    lines = text.splitlines()
    assert lines[0].endswith(" > uci") and lines[1].endswith("< info depth 12 nodes 0 pv e2e4")
    assert lines[-1].endswith("! no line within 0.231 s")  # where a time loss is
    assert lines[-2].endswith("nodes 19999 pv e2e4")
    cut = [line for line in lines if "left out (log cap)" in line]
    assert len(cut) == 1
    assert len(text.encode()) <= engine_log.MAX_BYTES + 200
    # every kept line carries the moment the worker sent or read it
    assert all(line[2] == ":" and line[5] == ":" and line[8] == "." for line in lines if line != cut[0])


def test_a_game_without_logged_engines_records_nothing() -> None:
    record = GameRecord(["a", "b"], None, {}, Verdict(VerdictKind.NORMAL, None, ""), [], "")
    assert EngineTraffic().attach(record).engine_logs == {}


class _Feature(InteractiveProcess):
    """An xboard engine's feature line, then silence: what ``wait_line`` waits on."""

    def __init__(self) -> None:
        self.lines = ["feature done=1"]

    def send(self, text: str) -> None:
        pass

    def read_line(self, timeout_s: float, *, pause: bool = True) -> str | RunOutcome:
        raise AssertionError("the feature wait reads with wait_line")

    def wait_line(self, timeout_s: float) -> str | RunOutcome | None:
        return self.lines.pop(0) if self.lines else None

    @property
    def cpu_ms(self) -> float:
        return 0.0

    def close(self) -> None:
        pass


def test_an_xboard_engines_feature_wait_is_logged_not_refused() -> None:
    """``log: engine`` on an xboard engine: its feature wait goes through the logging wrapper
    (which once lacked ``wait_line`` and so refused every xboard engine it logged)."""
    traffic = EngineTraffic()
    proc = LoggingProcess(_Feature(), "ph", traffic)
    proc.send("xboard\nprotover 2\n")
    assert proc.wait_line(2.0) == "feature done=1"
    assert proc.wait_line(0.1) is None  # nothing more: no line, no end logged
    record = GameRecord(["ph", "x"], None, {}, Verdict(VerdictKind.NORMAL, None, ""), [], "")
    lines = traffic.attach(record).engine_logs["ph"].splitlines()
    assert [line.split(" ", 1)[1] for line in lines] == ["> xboard", "> protover 2", "< feature done=1"]
