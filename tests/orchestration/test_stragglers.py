"""The straggler rule (runner.orchestration.stragglers): a second copy only when every match in
flight is running far past the median of its own kind (stage and board), and only where
another worker has a process free to take it."""

from __future__ import annotations

from runner.domain.match_values import MatchPlan
from runner.orchestration.stragglers import Flight, match_kind, straggler_copies

KIND = "stage groups, board six"
TIMED = {KIND: [1.0, 2.0, 3.0]}  # median 2 s: with factor 3, a straggler has run more than 6 s
#: the workers playing the flights below (one process each, busy) and one idle elsewhere
BUSY_AND_IDLE = {"w-a": 1, "w-b": 1, "idle": 1}


def _flight(mid: str, elapsed: float | None, running: bool = True, kind: str = KIND) -> Flight:
    return Flight(mid, 1, f"w-{mid}", running, elapsed, kind)


def test_every_match_in_flight_past_the_threshold_gets_a_copy_up_to_the_idle_workers() -> None:
    flights = [_flight("a", 7.0), _flight("b", 9.0)]
    copies = straggler_copies(flights, TIMED, factor=3.0, processes=BUSY_AND_IDLE)
    assert [(c.match_id, c.worker) for c in copies] == [("a", "w-a")]
    assert "over 3 x the median time 2.00s of 3 stage groups, board six match(es)" in copies[0].detail
    assert "7.0s on w-a" in copies[0].detail
    roomy = {**BUSY_AND_IDLE, "idle": 5}
    assert [c.match_id for c in straggler_copies(flights, TIMED, factor=3.0, processes=roomy)] == ["a", "b"]
    assert [
        c.match_id
        for c in straggler_copies(flights, TIMED, factor=3.0, processes=roomy, copied=frozenset({"a"}))
    ] == ["b"]


def test_no_copy_while_the_run_still_waits_on_anything_else() -> None:
    slow = _flight("a", 60.0)
    idle = {"w-a": 1, "w-b": 1, "idle": 4}
    assert not straggler_copies(
        [slow, _flight("b", 5.0)], TIMED, factor=3.0, processes=idle
    )  # b is within time
    assert not straggler_copies(
        [slow, _flight("b", 60.0, running=False)], TIMED, factor=3.0, processes=idle
    )  # queued
    assert not straggler_copies([slow, _flight("b", None)], TIMED, factor=3.0, processes=idle)  # age unknown
    assert not straggler_copies([slow], TIMED, factor=3.0, processes=idle, pending=True)
    assert not straggler_copies([slow], TIMED, factor=3.0, processes={"w-a": 1})  # no idle worker
    assert not straggler_copies([slow], {KIND: [1.0, 2.0]}, factor=3.0, processes=idle)  # too few timed
    assert not straggler_copies(
        [_flight("a", 6.0)], TIMED, factor=3.0, processes=idle
    )  # exactly 3 x: not over


def test_a_match_is_measured_only_against_matches_of_its_own_stage_and_board() -> None:
    """Issue 38: a 9x9 playoff match was measured against the 0.72 s median of the 3x3/6x6
    group matches; a long kind of match is not a straggler for being long."""
    playoff = "stage playoff, board nine"
    durations = {"stage groups, board classic": [0.5, 0.7, 0.72, 0.8], "stage groups, board six": [0.7] * 5}
    nine = _flight("a", 8.0, kind=playoff)  # 11 x the groups' median, but no 9x9 match timed yet
    idle = {"w-a": 1, "idle": 2}
    assert not straggler_copies([nine], durations, factor=3.0, processes=idle)
    timed_nine = {**durations, playoff: [4.0, 5.0, 6.0]}  # median 5 s: 8 s is not 3 x that
    assert not straggler_copies([nine], timed_nine, factor=3.0, processes=idle)
    assert [c.match_id for c in straggler_copies([_flight("a", 16.0, kind=playoff)], timed_nine,
                                                  factor=3.0, processes=idle)] == ["a"]  # fmt: skip
    plan = MatchPlan("playoff", 1, "", 0, ("x", "y"), "nine", (("x", "y"),))
    assert match_kind(plan) == playoff


def test_never_a_copy_when_no_other_worker_could_take_it() -> None:
    """Issue 38: one worker with a free process was sent a copy of its own match "for another
    worker"; a copy goes only where a worker enrolled under another name has a process free."""
    one_worker = [Flight("a", 1, "local/host-1", True, 60.0, KIND)]
    # the only worker plays the match on one of its 4 processes: 3 free, but all its own
    assert not straggler_copies(one_worker, TIMED, factor=3.0, processes={"host-1": 4})
    # two processes of the same enrolled worker (two `tourney worker` on one key): still its own
    both = [*one_worker, Flight("b", 1, "local/host-2", True, 60.0, KIND)]
    assert not straggler_copies(both, TIMED, factor=3.0, processes={"host-1": 4, "host-2": 4})
    # a worker connected that has played nothing here yet may be another machine: it takes one
    copies = straggler_copies(one_worker, TIMED, factor=3.0, processes={"host-1": 4, "new": 1})
    assert [c.match_id for c in copies] == ["a"]
    # ... but only one: its one process is then spoken for, and a copy already sent holds it
    three = {"host-1": 4, "host-2": 4, "new": 1}
    assert [c.match_id for c in straggler_copies(both, TIMED, factor=3.0, processes=three)] == ["a"]
    assert not straggler_copies(
        both, TIMED, factor=3.0, processes={"host-1": 4, "host-2": 4, "new": 1}, copied=frozenset({"a"})
    )
    # none connected (inline, or the broker cannot tell)
    assert not straggler_copies(one_worker, TIMED, factor=3.0, processes={})
