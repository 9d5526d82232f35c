"""Who verification differences point at (``runner.domain.verification.blame``, issue 34 item 7):
what the differences follow, an entry across worker pairs or a worker across entries."""

from __future__ import annotations

from runner.domain.verification import Difference, blame


def _d(match: str, workers: str, entries: str) -> Difference:
    return Difference(match, frozenset(workers.split()), frozenset(entries.split()))


def test_an_entry_followed_across_worker_pairs_is_flagged_and_no_worker_is() -> None:
    diffs = [_d("m1", "A B", "liar x"), _d("m2", "B C", "liar y"), _d("m3", "A C", "liar z")]
    found = blame(diffs)
    assert list(found.entries) == ["liar"] and found.workers == {}
    assert blame(diffs[:2]).entries == {}  # B is in both: not yet the entry's alone
    four = blame([_d("m1", "A B", "liar x"), _d("m2", "C D", "liar y")])
    assert list(four.entries) == ["liar"] and four.workers == {}


def test_a_worker_followed_across_entries_is_flagged_and_no_entry_is() -> None:
    found = blame([_d("m1", "L H1", "x y"), _d("m2", "L H2", "x z"), _d("m3", "L H1", "y z")])
    assert list(found.workers) == ["L"] and found.entries == {}  # x is in two of them, not all three
    # with two workers the records cannot tell which of the pair lied: both
    pair = blame([_d("m1", "L H", "a b"), _d("m2", "L H", "c d")])
    assert sorted(pair.workers) == ["H", "L"] and pair.entries == {}


def test_one_difference_or_one_entry_with_one_pair_flags_nobody() -> None:
    assert blame([_d("m1", "A B", "x y")]) == blame([])
    same = blame([_d("m1", "A B", "liar x"), _d("m2", "A B", "liar y"), _d("m3", "B A", "liar z")])
    assert same.workers == {} and same.entries == {}  # the entry or the pair: unproven either way


def test_a_flagged_entrys_differences_never_count_against_a_worker() -> None:
    diffs = [
        _d("m1", "A B", "liar x"),
        _d("m2", "C D", "liar y"),
        _d("m3", "A C", "liar z"),
        _d("m4", "A B", "p q"),
    ]
    found = blame(diffs)
    assert list(found.entries) == ["liar"] and found.workers == {}  # A's other difference is alone
