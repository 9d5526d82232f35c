"""Round robin: every pair of entrants plays on every board of the stage.

One match per pair and board (the unit a worker plays and a rerun repeats),
with ``games_per_pairing`` games: the better seed first in the first game,
then alternating, so every entry moves first in exactly half of its games.
Seed 000's final, seed 002's stage 1 and both ICFP'98 phases are round
robins with different boards and tables.

The matches are planned lazily (issue 13, item 3): n entrants imply
n(n-1)/2 x boards matches (50 million for 10,000 entrants on one board), so
the plan is a *window* over a fixed pairing order rather than every match at
once. Match number ``k`` of the order is computed arithmetically
(``RoundRobinOrder.match``): pair ``k // boards`` in ``itertools.combinations``
order of the entrants (seed order), board ``k % boards``, pairing field ``k``.
That is exactly the order, ids, seats and boards the eager planner gave, so
runs started before resume unchanged and standings are the same.

The planned matches are the shortest prefix of that order holding ``WINDOW``
unplayed matches (or all of them): a pure function of (entrants, results,
window). Played matches only move the prefix's end forward, so a stored
match is never dropped by a later plan. While the stage runs, the outcome
carries a ``RoundRobinWindow``: the same rule applied one result at a time,
which the coordinator keeps to plan the next matches in O(1) per result
instead of re-planning the stage (``runner.orchestration.coordinator``).
"""

from __future__ import annotations

from collections.abc import Sequence
from math import isqrt

from runner.domain.match_values import GameRecord, MatchPlan
from runner.domain.scoring import is_system_error
from runner.domain.stage_models import RoundRobinStage
from runner.domain.stages.common import (
    Results,
    StageContext,
    StageOutcome,
    completed,
    one_round_outcome,
    two_player_orders,
)

#: unplayed matches planned ahead: far more than the worker slots of a big cluster can take
#: at once, few enough that a plan of them costs nothing (about 1 KB each in the store)
WINDOW = 2048


class RoundRobinOrder:
    """The stage's matches in plan order, any one computed from its number alone."""

    def __init__(self, ctx: StageContext, entrants: Sequence[str]) -> None:
        st = ctx.stage
        assert isinstance(st, RoundRobinStage)
        self.stage = st.name
        self.entrants = list(entrants)
        self.boards = ctx.boards_for_round(1)
        self.games = st.games_per_pairing
        n = len(self.entrants)
        self.pairs = n * (n - 1) // 2
        self.total = self.pairs * len(self.boards)

    def pair(self, p: int) -> tuple[int, int]:
        """Positions (i, j), i < j, of pair number ``p`` in ``itertools.combinations`` order.

        Row i holds the n-1-i pairs (i, i+1) ... (i, n-1) and starts at
        i(2n-i-1)/2; i is the largest row starting at or before p (a root of
        that quadratic, then corrected for integer rounding)."""
        n = len(self.entrants)
        b = 2 * n - 1
        i = max((b - isqrt(max(b * b - 8 * p, 0))) // 2, 0)
        while i > 0 and i * (b - i) // 2 > p:
            i -= 1
        while (i + 1) * (b - i - 1) // 2 <= p:
            i += 1
        return i, i + 1 + p - i * (b - i) // 2

    def match(self, k: int) -> MatchPlan:
        i, j = self.pair(k // len(self.boards))
        a, b = self.entrants[i], self.entrants[j]
        board = self.boards[k % len(self.boards)]
        return MatchPlan(self.stage, 1, "", k, (a, b), board, two_player_orders(a, b, self.games))


class RoundRobinWindow:
    """The lazy plan kept up to date one result at a time (module doc).

    Holds how many matches of the order are planned, the ids of the unplayed
    ones and a reference to the results mapping the plan was made from, which
    its owner keeps up to date (the coordinator's in-memory results): memory
    stays O(window), whatever the size of the stage."""

    def __init__(self, order: RoundRobinOrder, window: int, results: Results) -> None:
        self.order = order
        self.window = window
        self.results = results
        self.planned = 0  # matches 0 .. planned-1 of the order are planned
        self.unplayed: set[str] = set()

    @property
    def total(self) -> int:
        return self.order.total

    @property
    def complete(self) -> bool:
        """Every match of the stage is planned: nothing left to plan one result at a time."""
        return self.planned >= self.order.total

    def extend(self) -> list[MatchPlan]:
        """Plan matches until ``window`` are unplayed (or none is left); the new ones."""
        fresh: list[MatchPlan] = []
        while len(self.unplayed) < self.window and self.planned < self.order.total:
            m = self.order.match(self.planned)
            self.planned += 1
            fresh.append(m)
            if completed(self.results, m) is None:
                self.unplayed.add(m.match_id)
        return fresh

    def on_result(self, match_id: str, games: Sequence[GameRecord]) -> list[MatchPlan]:
        """``match_id`` got ``games`` as its official result: the matches this plans next
        (O(1) amortised). A system error counts as unplayed, as in ``completed``."""
        if match_id not in self.unplayed or not games or any(is_system_error(g) for g in games):
            return []
        self.unplayed.discard(match_id)
        return self.extend()


def plan_window(ctx: StageContext, entrants: list[str], results: Results, window: int) -> StageOutcome:
    """The stage's outcome with its matches planned up to ``window`` unplayed ones (module doc)."""
    if window < 1:
        raise ValueError(f"a round robin window must hold at least one match, not {window}")
    order = RoundRobinOrder(ctx, entrants)
    lazy = RoundRobinWindow(order, window, results)
    out = one_round_outcome(ctx, entrants, lazy.extend(), results)
    if not lazy.complete:
        out.done = False
        out.window = lazy
    return out


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    return plan_window(ctx, entrants, results, WINDOW)
