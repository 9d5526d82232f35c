"""The pairing search behind ``common.pair_off`` and swiss, without recursion.

Players are positions ``0 .. n-1`` in preference order. The first unpaired
player takes the first of its candidates that still lets everyone else be
paired with at most the allowed number of repeat pairings; the search
backtracks otherwise. This is the depth-first search ``pair_off`` always did,
written with an explicit stack of small frames (a player, the next candidate
to try, the partner chosen) and one shared list of unpaired positions that a
step removes from and a backtrack puts back: memory stays linear in the
number of players and Python's recursion limit is never reached (the
recursive form failed near 2,100 swiss entries and used quadratic memory).

A candidate source gets the unpaired positions (the player itself removed)
and returns a sequence of candidate positions; it may be lazy (swiss computes
the k-th candidate on demand, so a step costs O(log n) instead of O(n)).
"""

from __future__ import annotations

from bisect import bisect_left, insort
from collections.abc import Callable, Sequence

from runner.errors import TourneyError

CandidateSource = Callable[[int, list[int]], Sequence[int]]
MetCheck = Callable[[int, int], bool]


class SearchBudgetExceeded(TourneyError):
    """The search visited more nodes than allowed; the caller falls back to greedy
    (control flow inside the planner: it never leaves ``pair_off``)."""


def _remove(remaining: list[int], position: int) -> None:
    del remaining[bisect_left(remaining, position)]


def search_pairs(
    n: int, candidates: CandidateSource, met: MetCheck, repeats_allowed: int, budget: int
) -> list[tuple[int, int]] | None:
    """The first pairing in candidate order with at most ``repeats_allowed``
    repeats, or None if there is none (raises ``SearchBudgetExceeded``)."""
    remaining = list(range(n))
    if not remaining:
        return []
    nodes = 0
    # a frame: [player, next candidate index, chosen partner (-1: none), repeats left, cost of chosen]
    stack: list[list[int]] = []

    def open_frame(repeats_left: int) -> None:
        nonlocal nodes
        nodes += 1
        if nodes > budget:
            raise SearchBudgetExceeded
        stack.append([remaining.pop(0), 0, -1, repeats_left, 0])

    open_frame(repeats_allowed)
    while stack:
        frame = stack[-1]
        player, k, chosen, left, _ = frame
        if chosen >= 0:  # back from a dead end below: undo this frame's choice
            insort(remaining, chosen)
            frame[2] = -1
        cands = candidates(player, remaining)
        found, cost = -1, 0
        while k < len(cands):
            c = cands[k]
            k += 1
            cost = 1 if met(player, c) else 0
            if cost <= left:
                found = c
                break
        frame[1] = k
        if found < 0:
            stack.pop()
            insort(remaining, player)
            continue
        _remove(remaining, found)
        frame[2], frame[4] = found, cost
        if not remaining:
            return [(f[0], f[2]) for f in stack]
        open_frame(left - cost)
    return None


def greedy_pairs(n: int, candidates: CandidateSource, met: MetCheck) -> list[tuple[int, int]]:
    """Each first unpaired player takes its first candidate not met yet, else its first."""
    out: list[tuple[int, int]] = []
    remaining = list(range(n))
    while remaining:
        player = remaining.pop(0)
        cands = candidates(player, remaining)
        c = next((x for x in cands if not met(player, x)), cands[0])
        out.append((player, c))
        _remove(remaining, c)
    return out


def pair_positions(n: int, candidates: CandidateSource, met: MetCheck, budget: int) -> list[tuple[int, int]]:
    """Pairs for ``n`` (even) players with the fewest repeat pairings (see module doc);
    a search that outgrows ``budget`` nodes falls back to the greedy choice."""
    assert n % 2 == 0
    for allowed in range(n // 2 + 1):
        try:
            found = search_pairs(n, candidates, met, allowed, budget)
        except SearchBudgetExceeded:
            break
        if found is not None:
            return found
    return greedy_pairs(n, candidates, met)


class ClosestInGroupFirst(Sequence[int]):
    """Swiss candidates of the first unpaired player, computed on demand.

    ``group`` = how many of ``remaining`` (a prefix: the pool is sorted by
    points) share the player's points. Group members come first, by closeness
    to the position half a group down (ties: the higher placed), then everyone
    below in order: ``sorted(range(group), key=lambda i: (abs(i - t), i))``
    followed by ``range(group, len(remaining))``, without building either.
    """

    def __init__(self, remaining: list[int], group: int) -> None:
        self._remaining = remaining
        self._size = len(remaining)
        self._group = group
        self._target = (group + 1) // 2 - 1

    def __len__(self) -> int:
        return self._size

    def _index(self, k: int) -> int:
        t = self._target
        if k >= self._group or k > 2 * t:
            return k  # past the symmetric part: the rest of the group, then lower groups, in order
        if k == 0:
            return t
        d = (k + 1) // 2
        return t - d if k % 2 else t + d

    def __getitem__(self, k: int) -> int:  # type: ignore[override]
        if not 0 <= k < self._size:
            raise IndexError(k)
        return self._remaining[self._index(k)]


class LastFirst(Sequence[int]):
    """The unpaired positions from the last (worst seed) to the first, without copying them:
    elimination's "best plays worst" candidates, O(1) per step instead of O(n)."""

    def __init__(self, remaining: list[int]) -> None:
        self._remaining = remaining
        self._size = len(remaining)

    def __len__(self) -> int:
        return self._size

    def __getitem__(self, k: int) -> int:  # type: ignore[override]
        if not 0 <= k < self._size:
            raise IndexError(k)
        return self._remaining[self._size - 1 - k]
