"""Fair timing, the pure part (``runner.domain.timing``): cores to match slots, the
concurrency they allow, the config option, and what the report says about a run."""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.config.bound_run import TournamentConfig
from runner.domain.entries import EntrySpec
from runner.domain.match_values import (
    GameRecord,
    MatchPlan,
    MatchResult,
    MatchSpec,
    TimingConditions,
    Verdict,
    VerdictKind,
)
from runner.domain.stages.tournament import match_spec
from runner.domain.timing import (
    capped_concurrency,
    core_slots,
    cpu_list,
    parse_cpu_list,
    split_cores,
    timing_summary,
)
from runner.domain.wire import decode, encode


def test_every_usable_cpu_is_a_slot_of_its_own_lowest_first() -> None:
    assert core_slots({3, 1, 2, 0}) == [(0,), (1,), (2,), (3,)]
    assert core_slots([5, 9, 7]) == [(5,), (7,), (9,)]  # the process's own affinity, gaps and all
    assert core_slots([]) == []


def test_slots_of_several_cpus_are_disjoint_and_leave_the_rest_unused() -> None:
    assert core_slots(range(5), cpus_per_match=2) == [(0, 1), (2, 3)]
    assert core_slots(range(1), cpus_per_match=2) == []
    with pytest.raises(ValueError):
        core_slots(range(4), cpus_per_match=0)


@pytest.mark.parametrize(
    ("requested", "cpus", "exclusive", "expected"),
    [
        (None, range(8), True, 8),  # default: one per core
        (None, range(8), False, 8),
        (20, range(8), True, 8),  # never more matches than cores
        (20, range(8), False, 20),  # shared: as many as asked
        (3, range(8), True, 3),  # fewer is fine
        (None, [], True, 1),  # an empty affinity (impossible) still plays
    ],
)
def test_concurrency_is_capped_at_the_cores_only_with_exclusive_cores(
    requested: int | None, cpus: range | list[int], exclusive: bool, expected: int
) -> None:
    assert capped_concurrency(requested, cpus, exclusive=exclusive) == expected


def test_reserved_cores_are_the_lowest_and_the_matches_get_the_rest() -> None:
    assert split_cores({3, 0, 2, 1}, 1) == ((0,), (1, 2, 3))
    assert split_cores([4, 6, 5, 7], 2) == ((4, 5), (6, 7))
    assert split_cores(range(4), 0) == ((0, 1, 2, 3), (0, 1, 2, 3))  # nothing reserved: shared
    with pytest.raises(ValueError, match="leaves none to play matches on"):
        split_cores(range(2), 2)
    # and the concurrency follows the matches' CPUs
    _, matches = split_cores(range(8), 2)
    assert capped_concurrency(None, matches, exclusive=True) == 6


def test_cpu_lists_travel_through_the_environment() -> None:
    assert cpu_list({3, 1, 2}) == "1,2,3"
    assert parse_cpu_list("1,2,3") == {1, 2, 3}
    assert parse_cpu_list(cpu_list(range(5, 9))) == set(range(5, 9))
    with pytest.raises(ValueError):
        parse_cpu_list("1-3")


def _config(**extra: object) -> TournamentConfig:
    raw = {
        "name": "t",
        "game": "mnk",
        "entries": [{"path": "x"}],
        "stages": [{"name": "rr", "planner": "round_robin"}],
        **extra,
    }
    return TournamentConfig.model_validate(raw)


def test_the_option_is_off_by_default_and_reaches_every_match_spec() -> None:
    assert _config().timing.exclusive_cores is False
    config = _config(timing={"exclusive_cores": True})
    entries = {n: EntrySpec(n, "mnk", "mnk", Path("."), ["x"], None, "0" * 64) for n in ("a", "b")}
    config.bind(base_dir=Path("."), entries=entries)
    spec = match_spec(config, MatchPlan.ad_hoc("m1", "default", [["a", "b"]]))
    assert spec.exclusive_cores is True
    assert decode(encode(spec), MatchSpec).exclusive_cores is True  # through the wire and the store


def test_a_shared_spec_reads_as_before_the_option_existed() -> None:
    plan = MatchPlan.ad_hoc("m1", "default", [["a", "b"]])
    shared = MatchSpec.playing(
        plan, game="mnk", board_text="9 9 5", entries={}, limits=_config().limits_obj, seed=1
    )
    assert decode(encode(shared), MatchSpec).exclusive_cores is False


def test_an_unknown_timing_key_is_refused() -> None:
    with pytest.raises(ValueError, match="extra"):
        _config(timing={"exclusive": True})


def _result(worker: str, timing: TimingConditions | None, *, failed: bool = False) -> MatchResult:
    verdict = Verdict(VerdictKind.SYSTEM_ERROR if failed else VerdictKind.NORMAL, None, "")
    game = GameRecord(["a", "b"], None, {"a": 0, "b": 0}, verdict, [])
    return MatchResult("m", [game], worker=worker, timing=timing)


def test_result_timing_round_trips_and_old_results_have_none() -> None:
    timing = TimingConditions(True, [3], 8, 8, 0.25)
    r = _result("w1", timing)
    assert decode(encode(r), MatchResult).timing == timing
    assert decode(encode(_result("w1", None)), MatchResult).timing is None


def test_the_summary_states_exclusive_cores_per_worker() -> None:
    results = [
        _result("w1", TimingConditions(True, [0], 2, 2)),
        _result("w1", TimingConditions(True, [1], 2, 2)),
        _result("w2", TimingConditions(True, [0], 1, 1)),
    ]
    s = timing_summary(True, results)
    assert (s.matches, s.exclusive, s.shared) == (3, 3, 0)
    assert s.headline().startswith("exclusive cores")
    line = s.line()
    assert "3 of 3 match(es) on a core of their own" in line
    assert "1 worker(s) of 1 core(s), each playing up to 1 match(es) at once" in line
    assert "1 worker(s) of 2 core(s), each playing up to 2 match(es) at once" in line
    assert [w.label for w in s.workers] == [
        "w1: 2 core(s), 2 match(es) at once",
        "w2: 1 core(s), 1 match(es) at once",
    ]
    many = timing_summary(True, [_result(f"w{i}", TimingConditions(True, [0], 8, 8)) for i in range(100)])
    assert many.line().endswith("100 worker(s) of 8 core(s), each playing up to 8 match(es) at once")


def test_the_summary_says_so_when_a_match_did_not_hold_a_core() -> None:
    results = [_result("w1", TimingConditions(True, [0], 2, 2)), _result("old", None)]
    s = timing_summary(True, results)
    assert "NOT held by every match" in s.headline()
    assert "1 match(es) without timing record" in s.line()
    shared = timing_summary(False, [_result("w1", TimingConditions(False, [], 2, 4))])
    assert shared.headline().startswith("shared cores")
    assert (
        "0 of 1 match(es)" in shared.line()
        and "1 worker(s) of 2 core(s), each playing up to 4 match(es)" in shared.line()
    )


def test_a_system_error_without_timing_is_not_counted_as_unrecorded() -> None:
    played = _result("w1", TimingConditions(True, [0], 2, 2))
    s = timing_summary(True, [played, _result("w2", None, failed=True)])
    assert s.unknown == 0 and s.headline().startswith("exclusive cores")
