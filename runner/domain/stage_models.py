"""The stage sections of a config: one pydantic model per planner, and the planner names.

Both the config schema (``runner.config.models``, which re-exports them) and the planners
(``runner.domain.stages``) read these models, so they live in the lower layer: the domain
(docs/architecture.md, "Layers"). Each model's ``planner`` literal is its planner's name;
``PLANNERS`` (the names, in this order) is derived from the union of the models.
"""

from __future__ import annotations

from typing import Annotated, ClassVar, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, field_validator, model_validator

from runner.domain.boards import DEFAULT_BOARD
from runner.domain.names import NAME_PATTERN
from runner.domain.scoring import MatchKey, RankKey, ScoringModel, potm_scoring
from runner.domain.sprt import elo_bound_problem

MIRROR_SUFFIX = "~mirror"  # system_test self-play: the second seat's name
#: an spsa stage's two seats, the tuned engine at θ + c·Δ and at θ - c·Δ (``<engine>~plus``, ``~minus``)
SPSA_PLUS_SUFFIX = "~plus"
SPSA_MINUS_SUFFIX = "~minus"
#: every seat name a stage derives from an entrant's, suffix -> what the seat is
DERIVED_SEATS = (MIRROR_SUFFIX, SPSA_PLUS_SUFFIX, SPSA_MINUS_SUFFIX)


class AdvanceTop(BaseModel):
    model_config = ConfigDict(extra="forbid")
    top: int = Field(ge=1, description="The N best of the stage's standings advance.")


Advance = Literal["all", "survivors"] | AdvanceTop


class StageBase(BaseModel):
    model_config = ConfigDict(extra="forbid")
    #: its matches form brackets (elimination-style planners; the report draws them)
    bracketed: ClassVar[bool] = False

    name: str = Field(
        pattern=NAME_PATTERN,
        description="Unique stage name: 1-64 letters, digits, '-', '_', starting with a letter or digit.",
    )
    when: Literal["always", "tied_for_first"] = Field(
        default="always",
        description="'tied_for_first': play this stage only when the ranking so far has entries tied "
        "for first place on every rank key; its entrants are then those tied entries and its ranking "
        "reorders them. Otherwise the stage is skipped and the ranking passes through unchanged.",
    )
    boards: list[str] = Field(
        default=[DEFAULT_BOARD],
        min_length=1,
        description="Board names from the top-level boards section ('default' is the game's own).",
    )
    scoring: ScoringModel = Field(default_factory=ScoringModel, description="Points per game.")
    rank_by: list[RankKey] = Field(
        default=["points", "wins", "score"],
        min_length=1,
        description="Rank keys in order; remaining ties are ordered by seed.",
    )
    advance: Advance = Field(default="all", description="Who goes on: 'all', 'survivors' or {top: N}.")
    description: str = Field(default="", description="Free text shown in reports.")

    @field_validator("advance", mode="before")
    @classmethod
    def _advance_form(cls, v: object) -> object:
        # one clear message instead of one per member of the union
        if not isinstance(v, dict) and v not in ("all", "survivors"):
            raise ValueError(f"expected 'all', 'survivors' or {{top: N}}, got {v!r}")
        return v


class TwoPlayerStage(StageBase):
    games_per_pairing: int = Field(
        default=2,
        ge=2,
        description="Games per pairing on each board; must be even: each side moves first equally often.",
    )
    penta: bool = Field(
        default=False,
        description="Standings add each entry's Elo +- 95% and the pentanomial counts of its colour-swapped "
        "game pairs (LL, LD, DD+WL, WD, WW), as fastchess -report penta=true (round_robin, gauntlet, "
        "seeding).",
    )

    @field_validator("games_per_pairing")
    @classmethod
    def _even(cls, v: int) -> int:
        if v % 2:
            raise ValueError("must be even, so that each side moves first equally often")
        return v


class SystemTestStage(StageBase):
    """Each entry plays a game per board against itself (or a reference); a verdict against it excludes it."""

    planner: Literal["system_test"] = Field(description="Which planner runs the stage.")
    reference: str | None = Field(
        default=None,
        description="A seed opponent to play against instead of a mirror copy of the entry itself "
        "(the copy's seat is named '<entry>~mirror').",
    )
    advance: Advance = Field(default="survivors", description="Default: the entries that passed.")


class SeedingStage(TwoPlayerStage):
    """Seed 000 stage 1: every entrant plays each seed opponent, each side first once, per board."""

    planner: Literal["seeding"] = Field(description="Which planner runs the stage.")
    opponents: list[str] | None = Field(
        default=None, description="Seed opponents to play; default: all of them."
    )
    scoring: ScoringModel = Field(default_factory=potm_scoring, description="Default: seed 000's table.")
    rank_by: list[RankKey] = Field(default=["points"], min_length=1, description="Default: points.")


class GauntletStage(TwoPlayerStage):
    """Every entrant plays each configured opponent (a seed/reference program)."""

    planner: Literal["gauntlet"] = Field(description="Which planner runs the stage.")
    opponents: list[str] | None = Field(
        default=None, description="Seed opponents to play; default: all of them."
    )


class EliminationStage(TwoPlayerStage):
    """Seed 000 stage 2: the two-bracket elimination (see docs/config.md for every rule)."""

    bracketed: ClassVar[bool] = True
    planner: Literal["potm_elimination"] = Field(description="Which planner runs the stage.")
    k: int = Field(
        default=2,
        ge=1,
        le=64,
        description="The winners bracket stops at 2K members, the losers bracket when both together "
        "hold at most 3K; the final gets between K+2 and 3K entries (4..6 for K=2, inside the "
        "seed's 4..8).",
    )
    match_win_by: list[MatchKey] = Field(
        default=["wins"],
        min_length=1,
        description="How a match is won: the first key on which the two differ; equal on all is a tie, "
        "and a tied match keeps both in their bracket (seed 000: 'If an entry wins or ties, it "
        "advances'). Default: game wins only, so a 1-1 split is a tie.",
    )
    stall_rounds: int = Field(
        default=3,
        ge=1,
        description="A bracket that still has to shrink but produced no loser in this many consecutive "
        "rounds in which it had to shrink (tied matches) is cut to its size by seed.",
    )
    max_rounds: int | None = Field(
        default=None,
        ge=1,
        description="Round cap; when reached the brackets are cut to size by seed. Default: no cap "
        "beyond stall_rounds (which already guarantees an end); required with a list of fixed boards.",
    )
    advance: Advance = Field(default="survivors", description="Default: the 2K + about K survivors.")


class RoundRobinStage(TwoPlayerStage):
    """Every pair plays on every board, each side first equally often (one match per pair per board)."""

    planner: Literal["round_robin"] = Field(description="Which planner runs the stage.")


class PermutationsStage(StageBase):
    """Seed 002 stage 2: N-player games on each board, one per each of the N! seat orders (a balanced
    design beyond max_entrants)."""

    planner: Literal["permutations"] = Field(description="Which planner runs the stage.")
    games_per_order: int = Field(default=1, ge=1, description="Games per seat order on each board.")
    max_entrants: int = Field(
        default=6,
        ge=2,
        le=8,
        description="Up to this many entrants every one of the N! seat orders is played; with more, a "
        "balanced Williams design (every entry in every seat equally often, N or 2N orders).",
    )
    rank_by: list[RankKey] = Field(
        default=["wins", "score"], min_length=1, description="Default: wins, then score (seed 002)."
    )


class KnockoutStage(TwoPlayerStage):
    """Single elimination, standard seeding (1 v N ...), byes to top seeds; a tie goes to the better seed."""

    bracketed: ClassVar[bool] = True
    planner: Literal["knockout"] = Field(description="Which planner runs the stage.")
    match_win_by: list[MatchKey] = Field(
        default=["wins", "score"],
        min_length=1,
        description="How a match is won: the first key on which the two differ; equal on all goes to the "
        "better seed.",
    )
    advance: Advance = Field(default="survivors", description="Default 'survivors': the champion alone.")


class SwissStage(StageBase):
    """A fixed number of rounds paired within score groups, no repeats, buchholz."""

    planner: Literal["swiss"] = Field(description="Which planner runs the stage.")
    rounds: int = Field(ge=1, le=64, description="Number of rounds.")
    games_per_pairing: int = Field(
        default=2, ge=1, description="Games per pairing: 1 (colours balanced over rounds) or an even number."
    )
    rank_by: list[RankKey] = Field(
        default=["points", "buchholz", "wins", "score"],
        min_length=1,
        description="Default: points, buchholz, wins, score.",
    )

    @field_validator("games_per_pairing")
    @classmethod
    def _one_or_even(cls, v: int) -> int:
        if v != 1 and v % 2:
            raise ValueError("must be 1 or even")
        return v


class SprtStage(StageBase):
    """Two entries play colour-swapped game pairs until the SPRT decides (docs/config.md, "sprt")."""

    planner: Literal["sprt"] = Field(description="Which planner runs the stage.")
    elo0: float = Field(description="H0: the engine is this many Elo (model's scale) stronger, at most.")
    elo1: float = Field(description="H1: the engine is at least this many Elo stronger; above elo0.")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="Chance of accepting H1 when H0 holds.")
    beta: float = Field(default=0.05, gt=0, lt=1, description="Chance of accepting H0 when H1 holds.")
    model: Literal["normalized", "logistic"] = Field(
        default="normalized",
        description="Which Elo elo0 and elo1 are in: 'normalized' (fishtest's default, the t-value "
        "scaled by 800/ln 10) or 'logistic' (the classic Elo scale, bounds on the expected score).",
    )
    max_pairs: int | None = Field(
        default=None, ge=1, description="Stop inconclusive after this many game pairs; default: no cap."
    )
    concurrency: int | None = Field(
        default=None,
        ge=1,
        le=1024,
        description="Game pairs planned ahead of the decided ones; default: the run's worker slots "
        "(its local workers), so every worker is busy. Set it when remote workers play.",
    )
    engine: str | None = Field(
        default=None, description="The entry under test (with baseline): the stage's two players."
    )
    baseline: str | None = Field(default=None, description="The entry the engine is measured against.")
    rank_by: list[RankKey] = Field(default=["points", "wins", "score"], min_length=1, description="Ranking.")

    @model_validator(mode="after")
    def _consistent(self) -> SprtStage:
        bounds = elo_bound_problem(self.elo0, self.elo1, self.model)
        if bounds is not None:
            raise ValueError(bounds)
        if self.alpha + self.beta >= 1:
            raise ValueError(f"alpha + beta must be below 1, not {self.alpha} + {self.beta}")
        if (self.engine is None) != (self.baseline is None):
            raise ValueError("name both engine and baseline, or neither (then the stage's two entrants)")
        if self.engine is not None and self.engine == self.baseline:
            raise ValueError("the engine and the baseline must differ")
        return self


class SpsaParam(BaseModel):
    """One tuned engine option (fishtest's line ``name, start, min, max, c_end, r_end``)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(
        min_length=1, description="The engine option tuned (UCI setoption name), e.g. 'Skill Level'."
    )
    start: float = Field(description="Its value before tuning (θ at the first pair).")
    min: float = Field(description="The least value θ and the perturbed values may take.")
    max: float = Field(description="The largest value θ and the perturbed values may take.")
    c_end: float = Field(
        gt=0, description="The perturbation at the last pair: pair k plays θ ± c_end·(N/k)^gamma."
    )
    r_end: float = Field(
        ge=0, description="The learning rate at the last pair (R_N = a_N / c_N², fishtest's r_end)."
    )

    @model_validator(mode="after")
    def _range(self) -> SpsaParam:
        if self.min >= self.max:
            raise ValueError(f"{self.name!r}: min ({self.min:g}) must be below max ({self.max:g})")
        if not self.min <= self.start <= self.max:
            raise ValueError(
                f"{self.name!r}: start ({self.start:g}) must lie in [{self.min:g}, {self.max:g}]"
            )
        return self


class SpsaStage(StageBase):
    """One engine tunes its options by SPSA: game pairs of θ + c·Δ against θ - c·Δ, a batch at a
    time (docs/config.md, "spsa"; docs/engines.md, "SPSA")."""

    planner: Literal["spsa"] = Field(description="Which planner runs the stage.")
    engine: str | None = Field(
        default=None,
        description="The entry tuned (a UCI or xboard engine); default: the stage's one entrant.",
    )
    params: list[SpsaParam] = Field(
        min_length=1, description="The options tuned, each sent as an engine option."
    )
    pairs: int = Field(
        ge=1,
        le=500_000,
        description="Game pairs of the whole tuning (fishtest's num_games / 2, N in the gains).",
    )
    batch: int = Field(
        default=16,
        ge=1,
        le=1024,
        description="Game pairs played at once with the same θ (an iteration); θ moves once they are all "
        "in. Keep it at least the workers' slots, so every worker plays; θ depends on it, so it is "
        "the config's, never the run's.",
    )
    A_ratio: float = Field(
        default=0.1,
        ge=0,
        description="A = A_ratio x pairs in a_k = a / (A + k)^alpha (fishtest's 'A ratio').",
    )
    alpha: float = Field(default=0.602, ge=0, description="The decay of a_k = a / (A + k)^alpha.")
    gamma: float = Field(default=0.101, ge=0, description="The decay of c_k = c / k^gamma.")
    rank_by: list[RankKey] = Field(default=["points", "wins", "score"], min_length=1, description="Ranking.")

    @field_validator("params")
    @classmethod
    def _unique(cls, v: list[SpsaParam]) -> list[SpsaParam]:
        names = [p.name for p in v]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"each option is tuned once; repeated: {', '.join(repeated)}")
        return v


AnyStage = (
    SystemTestStage
    | SeedingStage
    | GauntletStage
    | EliminationStage
    | RoundRobinStage
    | PermutationsStage
    | KnockoutStage
    | SwissStage
    | SprtStage
    | SpsaStage
)
StageModel = Annotated[AnyStage, Field(discriminator="planner")]
STAGE_MODELS: tuple[type[StageBase], ...] = get_args(AnyStage)


def planner_name(model: type[StageBase]) -> str:
    """The ``planner:`` value that selects ``model`` (its discriminator literal)."""
    (name,) = get_args(model.model_fields["planner"].annotation)
    return str(name)


PLANNERS: tuple[str, ...] = tuple(planner_name(m) for m in STAGE_MODELS)
#: planners whose matches form brackets (the report draws them)
ELIMINATION_PLANNERS: frozenset[str] = frozenset(planner_name(m) for m in STAGE_MODELS if m.bracketed)
STAGE_ADAPTER: TypeAdapter[AnyStage] = TypeAdapter(StageModel)
