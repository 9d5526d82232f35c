"""Stage planners (DESIGN §5), pure functions looked up by the config's ``planner`` name.

Each planner is ``plan(ctx, entrants, results) -> StageOutcome`` (see
``runner.stages.common``); ``runner.stages.tournament.advance`` chains them
into a whole tournament.
"""

from __future__ import annotations

from collections.abc import Callable

from runner.stages import (
    gauntlet,
    knockout,
    permutations,
    potm_elimination,
    round_robin,
    seeding,
    swiss,
    system_test,
)
from runner.stages.common import Results, StageContext, StageOutcome

Planner = Callable[[StageContext, list[str], Results], StageOutcome]

PLANNERS: dict[str, Planner] = {
    "system_test": system_test.plan,
    "seeding": seeding.plan,
    "gauntlet": gauntlet.plan,
    "potm_elimination": potm_elimination.plan,
    "round_robin": round_robin.plan,
    "permutations": permutations.plan,
    "knockout": knockout.plan,
    "swiss": swiss.plan,
}

__all__ = ["PLANNERS", "Planner", "StageContext", "StageOutcome"]
