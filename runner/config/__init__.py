"""Tournament configs: the schema, and a loader that locates every error.

``load_config(path)`` returns a ``TournamentConfig`` or raises ``ConfigError``
holding every problem found, each as ``file:line:col: message`` (schema
errors with a did-you-mean for unknown keys, and the checks the schema alone
cannot make: entry directories, games and protocols, boards, references
between sections, stages that cannot happen). ``tourney validate``
(``runner.commands.validate``) prints them and exits 2; nothing runs.

Paths in a config (entries, seed opponents, board files) are relative to the
directory that holds the config file, so ``configs/potm94.yaml`` names its
entries ``../entries/boxing/...``. ``load_config(path, base_dir=...)`` loads a
copy stored elsewhere (a run directory's frozen ``config.yaml``) against the
original directory.

The parts, each doing one job:

- ``models``: the pydantic schema, one model per section (``TournamentSchema``);
- ``stage_models``: one model per planner, and the planner names derived from them;
- ``bound_run``: ``TournamentConfig``, the schema bound to what loading found;
- ``source_map``: YAML parsed with the position of every node;
- ``errors``: ``ConfigProblem``, ``ConfigError`` and the wording messages share;
- ``schema_errors``: pydantic's errors turned into located problems;
- ``checks``: what the schema cannot check (files, registries, cross-references);
- ``load``: the passes in order.

The reference for every field is docs/config.md; ``python -m
runner.commands.schema`` writes the JSON schema (configs/schema.json).
"""

from runner.config.bound_run import TournamentConfig, json_schema
from runner.config.errors import ConfigError, ConfigProblem
from runner.config.load import load_config, load_config_text
from runner.config.models import EntrySource, LimitsModel, VariantsModel
from runner.domain.stage_models import (
    ELIMINATION_PLANNERS,
    MIRROR_SUFFIX,
    PLANNERS,
    STAGE_MODELS,
    Advance,
    AdvanceTop,
    AnyStage,
    EliminationStage,
    GauntletStage,
    KnockoutStage,
    PermutationsStage,
    RoundRobinStage,
    SeedingStage,
    SprtStage,
    SpsaParam,
    SpsaStage,
    StageBase,
    StageModel,
    SwissStage,
    SystemTestStage,
    TwoPlayerStage,
    planner_name,
)

__all__ = [
    "ELIMINATION_PLANNERS",
    "MIRROR_SUFFIX",
    "PLANNERS",
    "STAGE_MODELS",
    "Advance",
    "AdvanceTop",
    "AnyStage",
    "ConfigError",
    "ConfigProblem",
    "EliminationStage",
    "EntrySource",
    "GauntletStage",
    "KnockoutStage",
    "LimitsModel",
    "PermutationsStage",
    "RoundRobinStage",
    "SeedingStage",
    "SprtStage",
    "SpsaParam",
    "SpsaStage",
    "StageBase",
    "StageModel",
    "SwissStage",
    "SystemTestStage",
    "TournamentConfig",
    "TwoPlayerStage",
    "VariantsModel",
    "json_schema",
    "load_config",
    "load_config_text",
    "planner_name",
]
