"""Re-plan a stage only when a result can change it (issue 13, item 2).

A planner is a pure function of (its entrants, the results of the matches it
plans): it plans a match, then reads that match's result, and nothing else.
So a stage's outcome stays valid while its entrants are the same and every
one of its planned matches maps to the very same result object as when it
was planned. ``StageMemo`` keeps each stage's last outcome with those result
objects and hands it back when nothing it read has changed; the check is an
identity test per planned match, no decoding and no re-tallying. A lazily
planned stage (an outcome with a ``window``) is always planned again: its
owner fed the window results the memo never saw.

The owner must replace a match's results with a new object when they change
(the coordinator's in-memory results do; a mapping rebuilt from the store
holds new objects everywhere, which only costs a full re-plan). A memo
belongs to one config: ``advance`` is given the same config every time.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from runner.domain.stages.common import Results, StageContext, StageOutcome


@dataclass(frozen=True)
class _Planned:
    entrants: tuple[str, ...]
    outcome: StageOutcome
    read: tuple[tuple[str, object], ...]  # (match id, the results object the plan saw, or None)


class StageMemo:
    """Each stage's last outcome, reused while what it was planned from is unchanged."""

    def __init__(self) -> None:
        self._stages: dict[str, _Planned] = {}
        self.reused = 0  # outcomes handed back without planning (for tests and benchmarks)
        self.planned = 0

    def plan(
        self,
        planner: Callable[[StageContext, list[str], Results], StageOutcome],
        ctx: StageContext,
        entrants: list[str],
        results: Results,
    ) -> StageOutcome:
        key = tuple(entrants)
        last = self._stages.get(ctx.name)
        if (
            last is not None
            and last.entrants == key
            # a lazy plan's window moved on with results the memo never saw: plan it again
            and last.outcome.window is None
            and all(results.get(mid) is seen for mid, seen in last.read)
        ):
            self.reused += 1
            return last.outcome
        outcome = planner(ctx, entrants, results)
        self.planned += 1
        read = tuple((m.match_id, results.get(m.match_id)) for m in outcome.matches)
        self._stages[ctx.name] = _Planned(key, outcome, read)
        return outcome
