"""The matches in flight in the live progress: builds and move counts, busiest first, bounded."""

from __future__ import annotations

import dataclasses
import io

from rich.console import Console

from runner.domain.wire import LiveMatch
from runner.report.progress import (
    LIVE_ROWS,
    ProgressSnapshot,
    RunProgress,
    StageProgress,
    live_items,
    plain_line,
)


def live(match_id: str, phase: str = "playing", game: int = 1, moves: int = 0) -> LiveMatch:
    building = ("greedy",) if phase == "building" else ()
    return LiveMatch(match_id, 1, "w1", ("greedy", "random"), 2, phase, game, moves, building)


def snap(*matches: LiveMatch) -> ProgressSnapshot:
    stage = StageProgress("rr", 1, 10, "running")
    return ProgressSnapshot([stage], 2, 80, 3.0, workers=1, running=len(matches), live=tuple(matches))


def test_busiest_first_then_builds() -> None:
    s = snap(live("aa", "building"), live("bb", moves=3), live("cc", game=2, moves=1), live("dd", "starting"))
    assert [m.match_id for m in live_items(s)] == ["cc", "bb", "aa", "dd"]


def test_the_plain_line_names_the_first_few() -> None:
    s = snap(
        live("aaaaaaaaaaaa", "building"), live("bbbbbbbbbbbb", moves=37), live("c"), live("d"), live("e")
    )
    line = plain_line(s, 1.0, 10.0)
    assert "in progress: bbbbbbbb greedy vs random: game 1/2, move 37; " in line
    assert "(+2 more)" in line
    assert "in progress" not in plain_line(dataclasses.replace(s, live=()), 1.0, 10.0)


def test_the_live_display_lists_matches_in_flight() -> None:
    buf = io.StringIO()
    console = Console(file=buf, force_terminal=True, width=120, color_system=None)
    many = [live(f"m{i:02d}", moves=i) for i in range(LIVE_ROWS + 3)]
    with RunProgress("t", "live", console=console) as p:
        p.update(snap(live("build1", "building"), *many))
    text = buf.getvalue()
    assert "in progress" in text and "game 1/2, move 10" in text
    assert "+4 more" in text  # LIVE_ROWS shown, the rest counted
