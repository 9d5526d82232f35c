"""Engine clocks (runner/domain/engine_clock.py): tc forms as cutechess and fastchess write
them, the clock the worker keeps, flag falls with the margin, settings merged per entry."""

from __future__ import annotations

import pytest

from runner.domain.engine_clock import Clock, EngineSettings, TimeControl, merged


@pytest.mark.parametrize(
    ("text", "moves", "base_s", "inc_s"),
    [
        ("40/60", 40, 60.0, 0.0),
        ("10+0.1", None, 10.0, 0.1),
        ("40/1:30+0.5", 40, 90.0, 0.5),
        ("60", None, 60.0, 0.0),
        ("0.5+0.01", None, 0.5, 0.01),
    ],
)
def test_time_controls_parse_as_engine_testers_write_them(
    text: str, moves: int | None, base_s: float, inc_s: float
) -> None:
    tc = TimeControl.parse(text)
    assert (tc.moves, tc.base_s, tc.inc_s) == (moves, base_s, inc_s)
    assert TimeControl.parse(tc.text()) == tc


@pytest.mark.parametrize("text", ["", "ten", "40/", "0/60", "10+", "1:75"])
def test_a_bad_time_control_says_what_one_looks_like(text: str) -> None:
    with pytest.raises(ValueError, match="tc"):
        TimeControl.parse(text)


def test_increment_is_added_after_each_move_and_a_period_refills_the_clock() -> None:
    clock = Clock.start(EngineSettings(tc=TimeControl.parse("2/10+1"), timemargin_ms=0))
    assert clock.moves_to_go == 2
    clock, flagged = clock.spend(3000)
    assert (clock.left_ms, flagged, clock.moves_to_go) == (8000.0, False, 1)
    clock, flagged = clock.spend(7500)
    assert (clock.left_ms, flagged, clock.moves_to_go) == (1000.0 + 500.0 + 10000.0, False, 2)


def test_the_flag_falls_past_the_clock_and_its_margin_only() -> None:
    settings = EngineSettings(tc=TimeControl.parse("1+0"), timemargin_ms=50)
    clock = Clock.start(settings)
    assert clock.allowance_ms() == 1050.0
    assert clock.spend(1049)[1] is False
    assert clock.spend(1051)[1] is True
    assert Clock.start(settings).describe() == "1.000 s left of 1"


def test_time_per_move_flags_past_st_and_margin() -> None:
    clock = Clock.start(EngineSettings(st_s=0.1, timemargin_ms=20))
    assert clock.allowance_ms() == 120.0
    assert clock.spend(119)[1] is False and clock.spend(121)[1] is True


def test_nodes_or_depth_alone_play_without_a_clock_and_nothing_plays_at_the_default() -> None:
    assert not EngineSettings(nodes=2000).timed
    assert Clock.start(EngineSettings(depth=5)).spend(10_000_000)[1] is False
    assert EngineSettings().tc == TimeControl.parse("10+0.1")


def test_settings_round_trip_and_merge_key_by_key_with_options_by_name() -> None:
    entry = {"options": {"Hash": 16, "Threads": 1}}
    each = {"tc": "10+0.1", "options": {"Hash": 64}}
    own = {"st_s": 0.5, "options": {"Contempt": 0}}
    d = merged(entry, each, own)
    assert d == {"tc": "10+0.1", "st_s": 0.5, "options": {"Hash": 64, "Threads": 1, "Contempt": 0}}
    settings = EngineSettings.from_dict(d)
    assert EngineSettings.from_dict(settings.to_dict()) == settings
    assert settings.describe() == "10+0.1 st=0.5"


def test_tc_inf_is_no_clock_and_needs_nodes_or_depth() -> None:
    """fastchess's tc=inf (issue 35, item 5): over an each: clock, it leaves nodes alone."""
    from runner.domain.engine_clock import EngineSettings, merged

    s = EngineSettings.from_dict(merged({"tc": "2+0.05"}, {"tc": "inf", "nodes": 5000}))
    assert (s.tc, s.timed, s.nodes, s.describe()) == (None, False, 5000, "nodes=5000")
    assert EngineSettings.from_dict(s.to_dict()) == s
    assert s.refusal("uci") is None
    alone = EngineSettings.from_dict({"tc": "inf"})
    assert alone.tc is None
    assert alone.refusal("uci") == "tc=inf needs nodes or depth: with no limit at all an engine never answers"
