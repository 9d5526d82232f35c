"""The schema of a tournament config: pydantic models, one per section and one per planner.

``TournamentConfig`` is what the rest of the runner reads; loading
(``runner.config.load``) fills in what the schema cannot know (the entry
specs found on disk, the config's directory) through ``bind``.

Each stage model is also the planner registry's source: its ``planner``
literal is the planner's name, and ``PLANNERS`` (the names, in this order)
is derived from the union of stage models. The planner functions and their
admission rules live in ``runner.domain.stages``, keyed by these names.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal, get_args

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    field_validator,
    model_validator,
)

from runner.config.errors import ConfigProblem
from runner.domain.adjudication import Adjudication, DrawRule, ResignRule
from runner.domain.boards import DEFAULT_BOARD, BoardResolver, BoardSpec
from runner.domain.contracts import DEFAULT_MAX_MOVES, EntryRef, GameBound, Limits
from runner.domain.engine_clock import TimeControl
from runner.domain.entries import EntrySpec
from runner.domain.games import GAME_NAMES, get_game
from runner.domain.games.base import Game
from runner.domain.names import ENTRY_NAME_PATTERN, NAME_PATTERN, NAME_RULE
from runner.domain.openings import OPENINGS_BOARD, Opening, read_book, select
from runner.domain.registry import SandboxKind, sandbox_bind_problem
from runner.domain.scoring import MatchKey, RankKey, ScoringModel, potm_scoring

MIRROR_SUFFIX = "~mirror"  # system_test self-play: the second seat's name


# -- models ------------------------------------------------------------------


class LimitsModel(BaseModel):
    """Resource limits per entry (``runner.domain.contracts.Limits``)."""

    model_config = ConfigDict(extra="forbid")

    move_wall_s: float = Field(
        default=1.0, gt=0, description="Wall-clock seconds per move (seed 002: one second)."
    )
    move_cpu_s: float | None = Field(
        default=None, gt=0, description="CPU seconds per move; default: move_wall_s."
    )
    memory_mb: int = Field(default=512, ge=16, description="Address-space limit in MiB.")
    output_kb: int = Field(default=64, ge=1, description="Largest output of one move in KiB.")
    processes: int = Field(default=32, ge=1, description="Processes (and threads) an entry may run at once.")
    open_files: int = Field(default=64, ge=8, description="Open file descriptors.")
    file_size_mb: int = Field(default=16, ge=1, description="Largest file an entry may write, MiB.")
    game_wall_s: float | None = Field(
        default=None,
        gt=0,
        description="Whole-game wall budget for persistent protocols (gomocup); default none.",
    )
    exit_grace_ms: int = Field(
        default=300,
        ge=0,
        le=10_000,
        description="After a move's program exits, how long its descendants may take to go (or to enter "
        "the kernel's exit path) before they count as left_processes; this time is the move's own (its "
        "wall clock runs on, never past the move's deadline). Zombies and exiting processes never count.",
    )

    def to_limits(self) -> Limits:
        return Limits(**self.model_dump())


class BoundModel(BaseModel):
    """When a game is stopped before the rules end it, and adjudicated by the game
    (``runner.domain.game_bound``; docs/config.md has each game's rule)."""

    model_config = ConfigDict(extra="forbid")

    max_moves: int | None = Field(
        default=DEFAULT_MAX_MOVES,
        ge=1,
        description="Stop a game after this many moves and adjudicate it (null: no move bound; "
        "pousse can then run until a repetition ends it).",
    )
    wall_s: float | None = Field(
        default=None,
        gt=0,
        description="Stop a game once it has run this many seconds (the worker's clock, checked between "
        "moves) and adjudicate it; default none. Results then depend on the machine's speed.",
    )

    def to_bound(self) -> GameBound:
        return GameBound(**self.model_dump())


class TimingModel(BaseModel):
    """How moves are timed (issue 14: seed 003's "the entire machine to itself")."""

    model_config = ConfigDict(extra="forbid")

    exclusive_cores: bool = Field(
        default=False,
        description="Fair timing: every match is played on a CPU of its own (its entries and their "
        "descendants pinned to it, builds included), and a machine plays at most one match per usable "
        "CPU (tourney run starts at most that many local workers; workers wait for a free core). "
        "Default false: matches share the machine's cores.",
    )
    reserved_cores: int = Field(
        default=0,
        ge=0,
        le=4096,
        description="With exclusive_cores: the lowest N CPUs tourney run may use are left to the "
        "coordinator, Redis and the workers' own processes (pinned there), and its local workers play "
        "matches only on the others, so the runner's own work never lands on a match's core. "
        "Remote workers choose their CPUs themselves (taskset).",
    )


class VariantsModel(BaseModel):
    """Entries made in the config from one entry directory, differing by argv."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(ge=1, le=10000, description="How many variants.")
    prefix: str | None = Field(
        default=None,
        pattern=ENTRY_NAME_PATTERN,
        description="Name prefix; names are '<prefix>-<i>' (i zero-padded). Default: the entry's name.",
    )
    start: int = Field(default=1, ge=0, description="The first i.")
    args: list[str] = Field(
        default_factory=list, description="Extra argv appended to the entry's; '{i}' is replaced by i."
    )
    keep_original: bool = Field(default=False, description="Keep the entry itself as well as its variants.")


class EngineModel(BaseModel):
    """How a chess engine thinks (docs/engines.md): its clock, per entry or for all (``each``)."""

    model_config = ConfigDict(extra="forbid")

    tc: str | None = Field(
        default=None,
        description="Time control as cutechess/fastchess write it: '40/60' (moves/seconds, repeating), "
        "'10+0.1' (seconds + increment), '40/1:30+0.5'. Default 10+0.1 when no tc, st, nodes or depth.",
    )
    st: float | None = Field(default=None, gt=0, description="Seconds per move (UCI go movetime, xboard st).")
    nodes: int | None = Field(default=None, ge=1, description="Nodes per move (UCI go nodes).")
    depth: int | None = Field(default=None, ge=1, description="Plies per move (UCI go depth, xboard sd).")
    timemargin: int | None = Field(
        default=None,
        ge=0,
        le=60_000,
        description="Milliseconds an engine may overstep its clock before its flag falls (default 50).",
    )
    options: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Engine options (UCI setoption / xboard option): Hash, Threads..."
    )
    restart: bool | None = Field(
        default=None,
        description="on: a fresh engine process for every game (fastchess restart=on); off (the default, "
        "as fastchess): one engine kept alive across the games of its own match, told ucinewgame / new "
        "between them.",
    )

    @field_validator("restart", mode="before")
    @classmethod
    def _on_off(cls, v: object) -> object:
        # YAML reads on/off as booleans; anything else (a quoted "on" included) is checked here
        if isinstance(v, str) and v.strip().lower() in ("on", "off"):
            return v.strip().lower() == "on"
        if v is not None and not isinstance(v, bool):
            raise ValueError(f"restart is on or off, got {v!r}")
        return v

    @field_validator("tc")
    @classmethod
    def _tc(cls, v: str | None) -> str | None:
        if v is not None:
            TimeControl.parse(v)  # its ValueError says what a tc looks like
        return v

    def settings_dict(self) -> dict[str, Any]:
        """The keys set here, as ``EngineSettings.to_dict`` names them."""
        names = {
            "tc": "tc",
            "st": "st_s",
            "nodes": "nodes",
            "depth": "depth",
            "timemargin": "timemargin_ms",
            "restart": "restart",
        }
        d: dict[str, Any] = {
            names[k]: v for k, v in self.model_dump(exclude={"options"}).items() if v is not None
        }
        if self.options:
            d["options"] = dict(self.options)
        return d


class OpeningsModel(BaseModel):
    """Chess: an opening book whose positions become boards (docs/engines.md, "Openings")."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="An EPD (one position a line) or PGN book, relative to the config file.")
    order: Literal["random", "sequential"] = Field(
        default="sequential", description="Book order, or shuffled by the tournament seed (random)."
    )
    plies: int | None = Field(
        default=None, ge=0, description="PGN books: play this many plies of each line (default: all)."
    )
    start: int = Field(default=1, ge=1, description="The first opening to use (1-based, in book order).")
    count: int | None = Field(
        default=None, ge=1, description="How many openings to use (default: all from start)."
    )

    def load(self, base_dir: Path, seed: int, chess960: bool) -> list[Opening]:
        """The selected openings; ``BookError`` says what is wrong with the book."""
        book = read_book(base_dir / self.file, plies=self.plies, chess960=chess960)
        return select(book, order=self.order, start=self.start, count=self.count, seed=seed)


class ResignModel(BaseModel):
    """fastchess -resign: a side whose score stays this far below zero loses."""

    model_config = ConfigDict(extra="forbid")
    movecount: int = Field(
        ge=1, description="Consecutive moves of the losing side's score at -score or worse."
    )
    score: int = Field(ge=1, description="Centipawns below zero (a mate against it counts).")
    twosided: bool = Field(default=False, description="Only when the winning side's score agrees (>= score).")


class DrawModel(BaseModel):
    """fastchess -draw: a draw when both sides' scores stay near zero."""

    model_config = ConfigDict(extra="forbid")
    movenumber: int = Field(ge=0, description="Full moves played before a draw may be adjudicated.")
    movecount: int = Field(ge=1, description="Consecutive moves of each side's score within score of zero.")
    score: int = Field(ge=0, description="Centipawns from zero.")


class AdjudicationModel(BaseModel):
    """Chess: ending games from the engines' reported scores (docs/engines.md, "Adjudication")."""

    model_config = ConfigDict(extra="forbid")
    resign: ResignModel | None = Field(default=None, description="Adjudicate a loss (fastchess -resign).")
    draw: DrawModel | None = Field(default=None, description="Adjudicate a draw (fastchess -draw).")
    maxmoves: int | None = Field(
        default=None,
        ge=1,
        description="A draw once each side made this many moves (fastchess -maxmoves).",
    )

    def to_dict(self) -> dict[str, Any]:
        return Adjudication(
            ResignRule(**self.resign.model_dump()) if self.resign else None,
            DrawRule(**self.draw.model_dump()) if self.draw else None,
            self.maxmoves,
        ).to_dict()


class EntrySource(BaseModel):
    """Where entries come from: an entry directory or a glob of them."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(
        description="Entry directory or glob (relative to the config file); a glob keeps the "
        "directories holding an entry.yaml, sorted by path."
    )
    include: list[str] | None = Field(
        default=None,
        description="Only these of the directory's entries (its own name and its entry.yaml variants); "
        "default: all of them.",
    )
    variants: VariantsModel | None = Field(
        default=None, description="Make numbered variants of each included entry."
    )
    engine: EngineModel | None = Field(
        default=None,
        description="Chess engines: this entry's clock and options, over `each` (docs/engines.md).",
    )


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
        if self.elo1 <= self.elo0:
            raise ValueError(f"elo1 ({self.elo1}) must be above elo0 ({self.elo0})")
        if self.alpha + self.beta >= 1:
            raise ValueError(f"alpha + beta must be below 1, not {self.alpha} + {self.beta}")
        if (self.engine is None) != (self.baseline is None):
            raise ValueError("name both engine and baseline, or neither (then the stage's two entrants)")
        if self.engine is not None and self.engine == self.baseline:
            raise ValueError("the engine and the baseline must differ")
        return self


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


class TournamentConfig(BaseModel):
    """A whole contest: game, boards, entries, limits and stages."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN, description="Tournament name (the run directory is runs/<name>).")
    description: str = Field(default="", description="Free text shown in reports.")
    seed: int = Field(
        default=0,
        description="Seeds everything random (generated boards, per-match seeds): the same config "
        "and seed give the same matches, ids and boards.",
    )
    game: str = Field(
        description="The game: "
        + ", ".join(GAME_NAMES)
        + ", a name an installed plugin registers (entry-point group tourney.games), "
        "or an import path package.module:ClassName (docs/games.md)."
    )
    game_params: dict[str, Any] = Field(
        default_factory=dict,
        description="Game parameters, passed to the game class's constructor "
        "(boxing: max_box, the largest box side).",
    )
    sandbox: SandboxKind = Field(
        default="bwrap", description="'none' runs entries without namespaces: only for trusted entries."
    )
    sandbox_binds: list[str] = Field(
        default_factory=list,
        description="Read-only host paths added to every sandbox, e.g. a language runtime under /opt "
        "(absolute; never under /home, /root, /var, /srv, /mnt, /run, /tmp, /proc, /sys, /dev). "
        "Given to this run's own workers; remote workers add them with --sandbox-bind.",
    )
    limits: LimitsModel = Field(default_factory=LimitsModel, description="Per-move limits.")
    bound: BoundModel = Field(
        default_factory=BoundModel,
        description="When a game the rules have not ended is stopped and adjudicated (every stage).",
    )
    timing: TimingModel = Field(
        default_factory=TimingModel, description="Timing conditions: exclusive_cores (fair timing)."
    )
    each: EngineModel | None = Field(
        default=None,
        description="Chess engines: the clock and options of every engine (fastchess -each); an entry's "
        "own `engine:` overrides it key by key (docs/engines.md).",
    )
    boards: dict[str, BoardSpec] = Field(default_factory=dict, description="Named boards.")
    openings: OpeningsModel | None = Field(
        default=None,
        description="Chess: an opening book; its positions are the boards opening-001 ..., and a stage "
        "that lists the board 'openings' plays each of them as a game pair (docs/engines.md).",
    )
    adjudication: AdjudicationModel | None = Field(
        default=None,
        description="Chess: end games from the engines' reported scores: resign, draw, maxmoves "
        "(docs/engines.md); the coordinator accepts an adjudication only where the transcript's scores "
        "give it.",
    )
    entries: list[EntrySource] = Field(min_length=1, description="The tournament's entrants, in seed order.")
    seed_opponents: list[EntrySource] = Field(
        default_factory=list,
        description="Programs that play seeding/gauntlet games or serve as system-test references; "
        "never ranked.",
    )
    stages: list[StageModel] = Field(min_length=1, description="Stages, played in order.")

    _base_dir: Path = PrivateAttr(default_factory=Path.cwd)
    _config_path: Path | None = PrivateAttr(default=None)
    _entries: dict[str, EntrySpec] = PrivateAttr(default_factory=dict)
    _opponents: dict[str, EntrySpec] = PrivateAttr(default_factory=dict)
    _boards: BoardResolver | None = PrivateAttr(default=None)
    _warnings: list[ConfigProblem] = PrivateAttr(default_factory=list)  # set by load_config

    @field_validator("sandbox_binds")
    @classmethod
    def _sandbox_binds(cls, v: list[str]) -> list[str]:
        for path in v:
            problem = sandbox_bind_problem(path)
            if problem is not None:
                raise ValueError(problem)
        return [posixpath.normpath(p) for p in v]

    @field_validator("boards")
    @classmethod
    def _board_names(cls, v: dict[str, BoardSpec]) -> dict[str, BoardSpec]:
        for name in v:
            if not re.match(NAME_PATTERN, name):
                raise ValueError(f"board name {name!r} is not a valid name: expected {NAME_RULE}")
        return v

    # -- what the coordinator uses --------------------------------------
    def bind(
        self,
        *,
        base_dir: Path,
        entries: dict[str, EntrySpec],
        seed_opponents: dict[str, EntrySpec] | None = None,
        config_path: Path | None = None,
    ) -> TournamentConfig:
        """Attach what loading resolved (entry specs, base directory); tests bind synthetic entries."""
        self._base_dir = base_dir
        self._config_path = config_path
        self._entries = dict(entries)
        self._opponents = dict(seed_opponents or {})
        self._boards = None
        self._expand_openings()
        return self

    def _expand_openings(self) -> None:
        """The book's selected positions as boards, and ``openings`` in a stage's boards as their
        names (idempotent: a config bound again stays the same)."""
        if self.openings is None or not any(OPENINGS_BOARD in st.boards for st in self.stages):
            return
        chess960 = self.game_params.get("variant") == "chess960"
        chosen = self.openings.load(self._base_dir, self.seed, chess960)
        for o in chosen:
            self.boards.setdefault(o.name, BoardSpec(text=o.fen))
        names = [o.name for o in chosen]
        for st in self.stages:
            if OPENINGS_BOARD in st.boards:
                i = st.boards.index(OPENINGS_BOARD)
                st.boards = [*st.boards[:i], *names, *st.boards[i + 1 :]]

    @property
    def base_dir(self) -> Path:
        return self._base_dir

    @property
    def config_path(self) -> Path | None:
        return self._config_path

    @property
    def warnings(self) -> list[ConfigProblem]:
        """What ``load_config`` found that departs from a seed's rules without stopping the run."""
        return list(self._warnings)

    @property
    def limits_obj(self) -> Limits:
        return self.limits.to_limits()

    def entry_specs(self) -> dict[str, EntrySpec]:
        """The tournament's entrants, names unique, in config (= initial seed) order."""
        return dict(self._entries)

    def seed_opponent_specs(self) -> dict[str, EntrySpec]:
        return dict(self._opponents)

    def resolve_player(self, name: str) -> EntrySpec:
        """The entry behind any name a match can seat: an entrant, a seed opponent, or
        '<entrant>~mirror' (system-test self-play: the same program under a second name)."""
        if name in self._entries:
            return self._entries[name]
        if name in self._opponents:
            return self._opponents[name]
        if name.endswith(MIRROR_SUFFIX) and name[: -len(MIRROR_SUFFIX)] in self._entries:
            return replace(self._entries[name[: -len(MIRROR_SUFFIX)]], name=name)
        raise KeyError(f"no entry named {name!r} in this config")

    def player_refs(self, names: Sequence[str]) -> dict[str, EntryRef]:
        """``MatchSpec.entries`` for the players of a match."""
        return {n: self.resolve_player(n).ref() for n in dict.fromkeys(names)}

    def board_text(self, board_id: str) -> str:
        if self._boards is None:
            self._boards = BoardResolver(self.game, self.game_params, self.boards, self.seed, self._base_dir)
        return self._boards.text(board_id)

    def stage_names(self) -> list[str]:
        return [s.name for s in self.stages]

    def stage(self, name: str) -> AnyStage:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(name)

    def game_rules(self) -> Game[Any, Any]:
        return get_game(self.game, **self.game_params)


def json_schema() -> dict[str, Any]:
    """The JSON schema of tournament configs (``configs/schema.json``)."""
    return TournamentConfig.model_json_schema()
