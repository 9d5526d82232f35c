"""Engine traffic logs (workers/engine_log.py): the cap keeps the start and the end of a game."""

from __future__ import annotations

from runner.domain.match_values import GameRecord, Verdict, VerdictKind
from workers import engine_log
from workers.engine_log import EngineTraffic


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
