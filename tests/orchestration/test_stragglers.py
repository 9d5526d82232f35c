"""The straggler rule (runner.orchestration.stragglers): a second copy only when every match in
flight is running far past the median, and only as many as there are idle workers."""

from __future__ import annotations

from runner.orchestration.stragglers import Flight, straggler_copies

TIMED = [1.0, 2.0, 3.0]  # median 2 s: with factor 3, a straggler has run more than 6 s


def _flight(mid: str, elapsed: float | None, running: bool = True) -> Flight:
    return Flight(mid, 1, f"w-{mid}", running, elapsed)


def test_every_match_in_flight_past_the_threshold_gets_a_copy_up_to_the_idle_workers() -> None:
    flights = [_flight("a", 7.0), _flight("b", 9.0)]
    copies = straggler_copies(flights, TIMED, factor=3.0, idle=1)
    assert [(c.match_id, c.worker) for c in copies] == [("a", "w-a")]
    assert "over 3 x the median match time 2.00s" in copies[0].detail and "7.0s on w-a" in copies[0].detail
    assert [c.match_id for c in straggler_copies(flights, TIMED, factor=3.0, idle=5)] == ["a", "b"]
    assert [
        c.match_id for c in straggler_copies(flights, TIMED, factor=3.0, idle=5, copied=frozenset({"a"}))
    ] == ["b"]


def test_no_copy_while_the_run_still_waits_on_anything_else() -> None:
    slow = _flight("a", 60.0)
    assert not straggler_copies([slow, _flight("b", 5.0)], TIMED, factor=3.0, idle=4)  # b is within time
    assert not straggler_copies(
        [slow, _flight("b", 60.0, running=False)], TIMED, factor=3.0, idle=4
    )  # queued
    assert not straggler_copies([slow, _flight("b", None)], TIMED, factor=3.0, idle=4)  # age unknown
    assert not straggler_copies([slow], TIMED, factor=3.0, idle=4, pending=True)
    assert not straggler_copies([slow], TIMED, factor=3.0, idle=0)  # no idle worker
    assert not straggler_copies([slow], TIMED[:2], factor=3.0, idle=4)  # too few matches timed
    assert not straggler_copies([_flight("a", 6.0)], TIMED, factor=3.0, idle=4)  # exactly 3 x: not over
