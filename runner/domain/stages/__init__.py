"""Stage planners (docs/config.md, "Stages"), pure functions looked up by the config's ``planner``
name in ``PLANNERS`` (a ``runner.domain.registry.Registry``).

Each planner is ``plan(ctx, entrants, results) -> StageOutcome`` (see
``runner.domain.stages.common``); ``runner.domain.stages.tournament.advance`` chains them
into a whole tournament.
"""

from __future__ import annotations

from collections.abc import Callable

from runner.domain.registry import Registry
from runner.domain.stage_models import (
    EliminationStage,
    GauntletStage,
    KnockoutStage,
    PermutationsStage,
    RoundRobinStage,
    SeedingStage,
    SprtStage,
    SpsaStage,
    StageBase,
    SwissStage,
    SystemTestStage,
    planner_name,
)
from runner.domain.stages import (
    gauntlet,
    knockout,
    permutations,
    potm_elimination,
    round_robin,
    seeding,
    sprt,
    spsa,
    swiss,
    system_test,
)
from runner.domain.stages.common import Results, StageContext, StageOutcome

Planner = Callable[[StageContext, list[str], Results], StageOutcome]

# each planner function with the stage model that configures it; the names come from the models
_PLANS: tuple[tuple[type[StageBase], Planner], ...] = (
    (SystemTestStage, system_test.plan),
    (SeedingStage, seeding.plan),
    (GauntletStage, gauntlet.plan),
    (EliminationStage, potm_elimination.plan),
    (RoundRobinStage, round_robin.plan),
    (PermutationsStage, permutations.plan),
    (KnockoutStage, knockout.plan),
    (SwissStage, swiss.plan),
    (SprtStage, sprt.plan),
    (SpsaStage, spsa.plan),
)
PLANNERS: Registry[Planner] = Registry("planner", ((planner_name(model), plan) for model, plan in _PLANS))

__all__ = ["PLANNERS", "Planner", "StageContext", "StageOutcome"]
