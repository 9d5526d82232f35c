"""Live progress: what the organiser sees while a run moves."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from runner.report.progress import (
    ProgressSnapshot,
    RateMeter,
    RunProgress,
    StageProgress,
    default_mode,
    eta_seconds,
    format_duration,
)


def snap(
    t: float,
    seeding_done: int,
    final_done: int = 0,
    verdicts: dict[str, int] | None = None,
    workers: int = 0,
    running: int = 0,
    queued: int = 0,
    broker_down_s: float | None = None,
) -> ProgressSnapshot:
    seeding = StageProgress("seeding", seeding_done, 20, "done" if seeding_done >= 20 else "running")
    final_total = 6 if seeding_done >= 20 else 0
    final = StageProgress("final", final_done, final_total, "running" if final_total else "waiting")
    games = 2 * (seeding_done + final_done)
    return ProgressSnapshot(
        [seeding, final],
        games,
        40 * games,
        t,
        verdicts or {},
        workers,
        running,
        queued,
        broker_down_s=broker_down_s,
        broker_patience_s=600.0,
    )


class FakeClock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_default_mode() -> None:
    assert default_mode(True) == "quiet"
    assert default_mode(False) == "plain"  # pytest captures stdout: not a terminal


def test_format_duration() -> None:
    assert format_duration(None) == "?"
    assert format_duration(42.4) == "42s"
    assert format_duration(185) == "3m05s"
    assert format_duration(7440) == "2h04m"


def test_rate_and_eta_follow_the_recent_window() -> None:
    meter = RateMeter(window_s=10)
    for t in range(0, 31):
        # 1 game/s for 20 s, then 4 games/s
        games = t if t <= 20 else 20 + 4 * (t - 20)
        meter.add(float(t), games, games // 2)
    gps = meter.games_per_s()
    assert gps is not None and gps == pytest.approx(4.0, rel=0.01)
    s = ProgressSnapshot([StageProgress("x", 10, 30, "running")], 20, 0, 30.0)
    assert eta_seconds(s, 2.0) == 10.0
    assert eta_seconds(s, None) is None
    done = ProgressSnapshot([StageProgress("x", 30, 30, "done")], 60, 0, 30.0)
    assert eta_seconds(done, None) == 0.0


def test_quiet_prints_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    with RunProgress("t", "quiet") as p:
        p.update(snap(1.0, 3))
        p.log("hello")
    assert capsys.readouterr().out == ""


def test_plain_prints_at_most_every_few_seconds_and_on_stage_changes() -> None:
    out = io.StringIO()
    clock = FakeClock()
    with RunProgress("potm", "plain", out=out, clock=clock, plain_interval_s=5.0) as p:
        for t in range(0, 30):
            clock.now = float(t)
            p.update(
                snap(
                    float(t), min(t, 20), max(0, t - 24), verdicts={"timeout": 1} if t > 3 else {}, workers=2
                )
            )
        p.log("worker w3 connected")
    lines = out.getvalue().splitlines()
    assert lines[0] == "potm: started"
    progress = [line for line in lines if line.startswith("[")]
    # 30 updates over 30 s: one line per 5 s plus the stage change and the closing line
    assert 6 <= len(progress) <= 9
    assert any("stage seeding: running -> done (20/20 matches)" in line for line in lines)
    assert any("stage final: waiting -> running" in line for line in lines)
    assert "worker w3 connected" in lines
    last = progress[-1]
    for part in ("matches 25/26", "games 50 (1.7/s)", "ETA 1s", "verdicts timeout 1", "workers 2"):
        assert part in last, (part, last)


def test_live_display_shows_stages_rate_eta_verdicts_and_workers() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120, color_system=None)
    clock = FakeClock()
    with RunProgress("potm-finals", "live", console=console, clock=clock) as p:
        for t in range(0, 5):
            clock.now = float(t)
            p.update(
                snap(float(t), 4 * t, verdicts={"crash": 2, "timeout": 1}, workers=3, running=4, queued=9)
            )
        p.log("worker w2 lost; requeued 1 match")
    text = buf.getvalue()
    assert "potm-finals" in text
    assert "seeding" in text and "16/20" in text and "final" in text and "waiting" in text
    assert "games/s" in text and "ETA" in text
    assert "crash 2, timeout 1" in text
    assert "3 connected · playing 4 · queued 9" in text
    assert "worker w2 lost; requeued 1 match" in text


def test_a_lost_broker_shows_how_long_until_the_run_gives_up() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=160, color_system=None)
    with RunProgress("potm", "live", console=console, clock=FakeClock()) as p:
        p.update(snap(1.0, 3, workers=2, running=2, queued=10, broker_down_s=4.0))
    text = buf.getvalue()
    assert "UNREACHABLE for 4s; the run stops in 9m56s unless it answers" in text
    out = io.StringIO()
    with RunProgress("potm", "plain", out=out, clock=FakeClock()) as p:
        p.update(snap(1.0, 3, workers=2, running=2, queued=10, broker_down_s=64.0))
        p.update(snap(2.0, 3, workers=2, running=2, queued=10))
    first, last = [line for line in out.getvalue().splitlines() if line.startswith("[")][:2]
    assert "playing 2 | queued 10 | broker UNREACHABLE for 1m04s; the run stops in 8m56s" in first
    assert "UNREACHABLE" not in last


def test_a_stage_detail_shows_in_the_plain_line_and_beside_the_live_bar() -> None:
    detail = "SPRT running: LLR +1.23 in [-2.94, 2.94] after 40 pairs"
    sprt = ProgressSnapshot([StageProgress("test", 40, 42, "running", detail)], 80, 900, 3.0)
    out = io.StringIO()
    with RunProgress("sprt", "plain", out=out) as p:
        p.update(sprt)
    assert f"stage test 40/42 | {detail} |" in out.getvalue()
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=160, color_system=None)
    with RunProgress("sprt", "live", console=console) as p:
        p.update(sprt)
    assert detail in buf.getvalue()
