"""The schema of a tournament config: pydantic models, one per section (docs/config.md).

``TournamentSchema`` is the config as its file writes it; the stage models
(one per planner) are in ``runner.domain.stage_models``, and what the rest of
the runner reads, the schema bound to what loading found (``TournamentConfig``),
is in ``runner.config.bound_run``.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Discriminator, Field, Tag, field_validator

from runner.config.engine_models import AdjudicationModel, EngineModel, OpeningsModel
from runner.config.submission_rules import SubmissionsModel
from runner.domain.boards import BoardSpec
from runner.domain.entry_tree import DEFAULT_ENTRY_DEPTH, DEFAULT_ENTRY_FILES, DEFAULT_ENTRY_MB, EntryCaps
from runner.domain.games import GAME_NAMES
from runner.domain.match_values import DEFAULT_MAX_MOVES, GameBound, Limits
from runner.domain.names import ENTRY_NAME_PATTERN, NAME_PATTERN, NAME_RULE
from runner.domain.registry import SandboxKind, bind_path, sandbox_bind_problem
from runner.domain.stage_models import StageModel

# -- sections ----------------------------------------------------------------


class LimitsModel(BaseModel):
    """Resource limits per entry (``runner.domain.match_values.Limits``)."""

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
    # what an entry directory may hold (docs/config.md#what-an-entry-may-hold): checked when the
    # config is loaded (validate, run), from the listing alone; the match's limits never carry them
    entry_mb: int = Field(
        default=DEFAULT_ENTRY_MB,
        ge=1,
        le=1 << 20,
        description="The most an entry directory may hold, in MiB of its files' apparent size (a sparse "
        "file counts its holes): refused at validate, before a byte is read.",
    )
    entry_files: int = Field(
        default=DEFAULT_ENTRY_FILES,
        ge=1,
        le=10_000_000,
        description="The most files and directories (together) an entry directory may hold.",
    )
    entry_depth: int = Field(
        default=DEFAULT_ENTRY_DEPTH,
        ge=1,
        le=256,
        description="The deepest path in an entry directory, in components (a/b/c is 3).",
    )

    def to_limits(self) -> Limits:
        return Limits(**self.model_dump(exclude=set(ENTRY_CAP_FIELDS)))

    def entry_caps(self) -> EntryCaps:
        """The caps every entry directory of the config is loaded (and packed) under."""
        return EntryCaps.of(self.entry_mb, self.entry_files, self.entry_depth)


#: the ``limits`` keys that cap an entry directory, not a match (``LimitsModel.entry_caps``)
ENTRY_CAP_FIELDS = ("entry_mb", "entry_files", "entry_depth")


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
    straggler_factor: float = Field(
        default=3.0,
        ge=1.5,
        le=1000.0,
        description="When every match still in flight has run longer than this many times the median "
        "match time and a worker is idle, each is started a second time on another worker; the first "
        "valid result counts, the other is ignored (docs/fleet.md).",
    )
    verify_sample: float = Field(
        default=0.0,
        ge=0.0,
        le=1.0,
        description="This fraction of accepted matches (chosen by the run's seed and the match id, so a "
        "resumed run picks the same) is played again on another worker; the replay never changes the "
        "standings. For matches whose entries all say deterministic: true in entry.yaml, transcripts "
        "that differ flag what they follow as suspect: an entry across worker pairs, or a worker "
        "across entries (docs/fleet.md). The run ends once every replay is "
        "done or given up. Ignored by --inline.",
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


class SubmissionOrigin(BaseModel):
    """Which upload of which team an entry is: what the run's report names it by."""

    model_config = ConfigDict(extra="forbid")

    team: str = Field(pattern=ENTRY_NAME_PATTERN, description="The team (the entry's name).")
    version: int = Field(ge=1, description="The team's version number.")
    upload_sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="The sha256 of the upload's bytes.")
    entry_digest: str = Field(
        pattern=r"^[0-9a-f]{64}$",
        description="The digest of the entry it unpacked to (its code and entry.yaml).",
    )


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
    submission: SubmissionOrigin | None = Field(
        default=None,
        description="The submission this entry is (written by tourney freeze, and by tourney run for "
        "`entries: {from: submissions}`): the entry at `path` must be named after the team and have "
        "this digest. The report names it (docs/submissions.md).",
    )


class FromSubmissions(BaseModel):
    """``entries: {from: submissions}``: the entrants are each team's counting submission in the
    contest's store (``tourney serve``), resolved by ``tourney run`` (docs/submissions.md)."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    from_: Literal["submissions"] = Field(
        alias="from", description="'submissions': each team's counting version, by the submissions: rules."
    )


def _entries_kind(value: object) -> str:
    """A mapping is ``{from: ...}``, anything else a list (so a typo in one gets that one's error)."""
    return "from" if isinstance(value, dict | FromSubmissions) else "list"


EntriesModel = Annotated[
    Annotated[list[EntrySource], Tag("list")] | Annotated[FromSubmissions, Tag("from")],
    Discriminator(_entries_kind),
]

# -- the whole config --------------------------------------------------------


class TournamentSchema(BaseModel):
    """A whole contest as its config file writes it: game, boards, entries, limits and stages
    (``TournamentConfig`` adds what loading binds to it)."""

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
    entries: EntriesModel = Field(
        description="The tournament's entrants, in seed order; or {from: submissions}: each team's "
        "counting submission (tourney serve's store), resolved when tourney run starts."
    )
    seed_opponents: list[EntrySource] = Field(
        default_factory=list,
        description="Programs that play seeding/gauntlet games or serve as system-test references; "
        "never ranked.",
    )
    stages: list[StageModel] = Field(min_length=1, description="Stages, played in order.")
    submissions: SubmissionsModel | None = Field(
        default=None,
        description="The contest's submission rules for tourney serve: opens, deadline, layout, max_bytes, "
        "counts, house, registration (docs/submissions.md).",
    )

    @field_validator("entries")
    @classmethod
    def _some_entries(cls, v: list[EntrySource] | FromSubmissions) -> list[EntrySource] | FromSubmissions:
        if isinstance(v, list) and not v:
            raise ValueError("no entries: list at least one, or write {from: submissions}")
        return v

    @property
    def entries_from_submissions(self) -> bool:
        """``entries: {from: submissions}``: ``tourney run`` resolves the entrants from the store."""
        return isinstance(self.entries, FromSubmissions)

    def entry_sources(self) -> list[EntrySource]:
        """The entries as listed (none for ``{from: submissions}`` until it is resolved)."""
        return list(self.entries) if isinstance(self.entries, list) else []

    @field_validator("sandbox_binds")
    @classmethod
    def _sandbox_binds(cls, v: list[str]) -> list[str]:
        for path in v:
            problem = sandbox_bind_problem(path)
            if problem is not None:
                raise ValueError(problem)
        return [bind_path(p) for p in v]

    @field_validator("boards")
    @classmethod
    def _board_names(cls, v: dict[str, BoardSpec]) -> dict[str, BoardSpec]:
        for name in v:
            if not re.match(NAME_PATTERN, name):
                raise ValueError(f"board name {name!r} is not a valid name: expected {NAME_RULE}")
        return v
