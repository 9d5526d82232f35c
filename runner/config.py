"""Tournament configs: pydantic models, a YAML loader that locates every error.

``load_config(path)`` returns a ``TournamentConfig`` or raises ``ConfigError``
holding every problem found, each as ``file:line:col: message`` (schema
errors with a did-you-mean for unknown keys, and the checks the schema alone
cannot make: entry directories, games and protocols, boards, references
between sections, stages that cannot happen). ``tourney validate`` prints
them and exits 2; nothing runs.

Paths in a config (entries, seed opponents, board files) are relative to the
directory that holds the config file, so ``configs/potm94.yaml`` names its
entries ``../entries/boxing/...``. ``load_config(path, base_dir=...)`` loads a
copy stored elsewhere (a run directory's frozen ``config.yaml``) against the
original directory.

The reference for every field is docs/config.md; ``python -m runner.config
--schema`` writes the JSON schema (configs/schema.json).
"""

from __future__ import annotations

import argparse
import difflib
import glob
import json
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    TypeAdapter,
    ValidationError,
    field_validator,
)

from runner.boards import (
    DEFAULT_BOARD,
    NAME_PATTERN,
    BoardResolver,
    BoardSpec,
    board_source_text,
    generate_board,
)
from runner.contracts import EntryRef, Limits
from runner.entries import EntryError, EntrySpec, load_entry
from runner.games import GAME_NAMES, get_game
from runner.games.base import BoardError, Game
from runner.scoring import MatchKey, RankKey, ScoringModel, potm_scoring

# Which games each entry protocol can carry. Mirrors ``workers.protocols``'
# ``games`` class attributes: the coordinator side may not import workers.
PROTOCOL_GAMES: dict[str, frozenset[str]] = {
    "potm-arena": frozenset({"boxing"}),
    "icfp98": frozenset({"pousse"}),
    "mnk": frozenset({"mnk", "gomoku"}),
    "gomocup": frozenset({"mnk", "gomoku"}),
}
MIRROR_SUFFIX = "~mirror"  # system_test self-play: the second seat's name


# -- errors ------------------------------------------------------------------


@dataclass(frozen=True)
class ConfigProblem:
    file: str
    line: int  # 1-based
    col: int  # 1-based
    message: str

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}: {self.message}"


class ConfigError(ValueError):
    """A config that cannot be used; ``problems`` lists every reason with its location."""

    def __init__(self, problems: Sequence[ConfigProblem]) -> None:
        self.problems = list(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


# -- models ------------------------------------------------------------------


class LimitsModel(BaseModel):
    """Resource limits per entry (``runner.contracts.Limits``)."""

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

    def to_limits(self) -> Limits:
        return Limits(**self.model_dump())


class VariantsModel(BaseModel):
    """Entries made in the config from one entry directory, differing by argv."""

    model_config = ConfigDict(extra="forbid")

    count: int = Field(ge=1, le=10000, description="How many variants.")
    prefix: str | None = Field(
        default=None,
        description="Name prefix; names are '<prefix>-<i>' (i zero-padded). Default: the entry's name.",
    )
    start: int = Field(default=1, ge=0, description="The first i.")
    args: list[str] = Field(
        default_factory=list, description="Extra argv appended to the entry's; '{i}' is replaced by i."
    )
    keep_original: bool = Field(default=False, description="Keep the entry itself as well as its variants.")


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


class AdvanceTop(BaseModel):
    model_config = ConfigDict(extra="forbid")
    top: int = Field(ge=1, description="The N best of the stage's standings advance.")


Advance = Literal["all", "survivors"] | AdvanceTop


class StageBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str = Field(pattern=NAME_PATTERN, description="Unique stage name (letters, digits, '-', '_').")
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
        default=["wins", "score"],
        min_length=1,
        description="How a match is won: the first key on which the two differ; equal on all is a tie.",
    )
    stall_rounds: int = Field(
        default=3,
        ge=1,
        description="A bracket that still has to shrink but produced no loser in this many consecutive "
        "rounds (tied matches) is cut to its size by seed.",
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
    """Seed 002 stage 2: N-player games on each board, one per each of the N! seat orders."""

    planner: Literal["permutations"] = Field(description="Which planner runs the stage.")
    games_per_order: int = Field(default=1, ge=1, description="Games per seat order on each board.")
    max_entrants: int = Field(
        default=6,
        ge=2,
        le=8,
        description="More entrants than this (N! games) and the stage is skipped with a note.",
    )
    rank_by: list[RankKey] = Field(
        default=["wins", "score"], min_length=1, description="Default: wins, then score (seed 002)."
    )


class KnockoutStage(TwoPlayerStage):
    """Single elimination, standard seeding (1 v N ...), byes to top seeds; a tie goes to the better seed."""

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


AnyStage = (
    SystemTestStage
    | SeedingStage
    | GauntletStage
    | EliminationStage
    | RoundRobinStage
    | PermutationsStage
    | KnockoutStage
    | SwissStage
)
StageModel = Annotated[AnyStage, Field(discriminator="planner")]
PLANNERS: tuple[str, ...] = (
    "system_test",
    "seeding",
    "gauntlet",
    "potm_elimination",
    "round_robin",
    "permutations",
    "knockout",
    "swiss",
)
_STAGE_ADAPTER: TypeAdapter[AnyStage] = TypeAdapter(StageModel)


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
    game: str = Field(description="The game: " + ", ".join(GAME_NAMES) + ".")
    game_params: dict[str, Any] = Field(
        default_factory=dict, description="Game parameters (boxing: max_box, the largest box side)."
    )
    sandbox: Literal["bwrap", "none"] = Field(
        default="bwrap", description="'none' runs entries without namespaces: only for trusted entries."
    )
    limits: LimitsModel = Field(default_factory=LimitsModel, description="Per-move limits.")
    boards: dict[str, BoardSpec] = Field(default_factory=dict, description="Named boards.")
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

    @field_validator("boards")
    @classmethod
    def _board_names(cls, v: dict[str, BoardSpec]) -> dict[str, BoardSpec]:
        for name in v:
            if not re.match(NAME_PATTERN, name):
                raise ValueError(f"board name {name!r} may only hold letters, digits, '-' and '_'")
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
        return self

    @property
    def base_dir(self) -> Path:
        return self._base_dir

    @property
    def config_path(self) -> Path | None:
        return self._config_path

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


# -- YAML with positions -------------------------------------------------------

Loc = tuple[str | int, ...]


class SourceMap:
    """Line/column (1-based) of every node of a YAML document, keyed by its path."""

    def __init__(self, file: str) -> None:
        self.file = file
        self.values: dict[Loc, tuple[int, int]] = {(): (1, 1)}
        self.keys: dict[Loc, tuple[int, int]] = {}

    def resolve(self, loc: Sequence[str | int]) -> tuple[Loc, list[str | int]]:
        """The deepest path of ``loc`` present in the document and the parts that were not.

        Parts missing from the document are skipped rather than ending the walk,
        because pydantic inserts the tag of a discriminated union into ``loc``.
        """
        path: Loc = ()
        missing: list[str | int] = []
        for part in loc:
            if (*path, part) in self.values:
                path = (*path, part)
            else:
                missing.append(part)
        return path, missing

    def position(self, loc: Sequence[str | int], *, key: bool = False) -> tuple[int, int]:
        path, _ = self.resolve(loc)
        if key and path in self.keys:
            return self.keys[path]
        return self.values.get(path, (1, 1))


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


def parse_yaml(text: str, file: str) -> tuple[Any, SourceMap, list[ConfigProblem]]:
    """The document's data, its source map, and problems (syntax errors, duplicate keys)."""
    smap = SourceMap(file)
    problems: list[ConfigProblem] = []
    loader = yaml.SafeLoader(text)
    try:
        node = loader.get_single_node()
        data = loader.construct_document(node) if node is not None else None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problems.append(ConfigProblem(file, line, col, f"not valid YAML: {e.problem or e}"))
        return None, smap, problems
    except yaml.YAMLError as e:
        problems.append(ConfigProblem(file, 1, 1, f"not valid YAML: {e}"))
        return None, smap, problems
    finally:
        loader.dispose()
    if node is not None:
        smap.values[()] = _mark(node)
        _walk(node, (), smap, problems)
    return data, smap, problems


def _walk(node: yaml.Node, path: Loc, smap: SourceMap, problems: list[ConfigProblem]) -> None:
    if isinstance(node, yaml.MappingNode):
        first: dict[str, tuple[int, int]] = {}
        for knode, vnode in node.value:
            key = knode.value if isinstance(knode, yaml.ScalarNode) else str(knode.value)
            if key in first:
                line, col = _mark(knode)
                problems.append(
                    ConfigProblem(
                        smap.file,
                        line,
                        col,
                        f"{_dotted((*path, key))}: duplicate key (first at line {first[key][0]})",
                    )
                )
            first[key] = _mark(knode)
            child = (*path, key)
            smap.keys[child] = _mark(knode)
            smap.values[child] = _mark(vnode)
            _walk(vnode, child, smap, problems)
    elif isinstance(node, yaml.SequenceNode):
        for i, vnode in enumerate(node.value):
            child = (*path, i)
            smap.values[child] = _mark(vnode)
            _walk(vnode, child, smap, problems)


def _dotted(loc: Sequence[str | int]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or "(top level)"


def _names(names: Sequence[str], most: int = 3) -> str:
    """'entry 'a'' or 'entries 'a', 'b', 'c' and 4 more'."""
    shown = ", ".join(repr(n) for n in names[:most])
    more = f" and {len(names) - most} more" if len(names) > most else ""
    return f"entry {shown}" if len(names) == 1 else f"entries {shown}{more}"


def _did_you_mean(word: str, choices: Sequence[str]) -> str:
    by_lower = {c.lower(): c for c in choices}
    close = difflib.get_close_matches(word.lower(), list(by_lower), n=1, cutoff=0.6)
    return f" (did you mean {by_lower[close[0]]!r}?)" if close else ""


# -- schema errors -------------------------------------------------------------


def _models_in(annotation: Any) -> list[type[BaseModel]]:
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    out: list[type[BaseModel]] = []
    for arg in get_args(annotation):
        out.extend(_models_in(arg))
    return out


def _keys_at(loc: Sequence[str | int]) -> list[str]:
    """The keys a mapping at ``loc`` may hold (for did-you-mean on unknown keys)."""
    candidates: list[type[BaseModel]] = [TournamentConfig]
    for part in loc:
        if isinstance(part, int):
            continue
        inner = [
            m2
            for m in candidates
            if part in m.model_fields
            for m2 in _models_in(m.model_fields[part].annotation)
        ]
        if inner:
            candidates = inner
            continue
        tagged = [
            m
            for m in candidates
            if "planner" in m.model_fields and part in get_args(m.model_fields["planner"].annotation)
        ]
        if tagged:
            candidates = tagged
        # otherwise a dict key (a board name): the models stay the same
    return sorted({k for m in candidates for k in m.model_fields})


def _schema_problem(err: Any, smap: SourceMap) -> ConfigProblem:
    loc: list[str | int] = list(err["loc"])
    kind = err["type"]
    ctx = err.get("ctx") or {}
    if kind == "extra_forbidden":
        key = str(loc[-1])
        line, col = smap.position(loc, key=True)
        where, _ = smap.resolve(loc[:-1])
        msg = f"unknown key {key!r}{_did_you_mean(key, _keys_at(loc[:-1]))}"
        return ConfigProblem(smap.file, line, col, f"{_dotted(where)}: {msg}")
    if kind in ("missing", "union_tag_not_found"):
        key = str(ctx.get("discriminator", loc[-1] if loc else "")).strip("'")
        where, _ = smap.resolve(loc if kind == "union_tag_not_found" else loc[:-1])
        line, col = smap.position(where, key=True)
        return ConfigProblem(smap.file, line, col, f"{_dotted(where)}: missing required key {key!r}")
    where, _ = smap.resolve(loc)
    line, col = smap.position(where)
    if kind == "union_tag_invalid":
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected_tags", "")))
        tag = str(ctx.get("tag", ""))
        msg = f"unknown planner {tag!r}{_did_you_mean(tag, expected)}; expected one of {', '.join(expected)}"
        line, col = smap.position((*where, "planner"))
        return ConfigProblem(smap.file, line, col, f"{_dotted((*where, 'planner'))}: {msg}")
    if kind == "literal_error":
        expected = re.findall(r"'([^']*)'", str(ctx.get("expected", "")))
        got = err.get("input")
        hint = _did_you_mean(str(got), expected)
        msg = f"{got!r} is not allowed{hint}; expected one of {', '.join(expected)}"
        return ConfigProblem(smap.file, line, col, f"{_dotted(where)}: {msg}")
    msg = str(err["msg"]).removeprefix("Value error, ")
    got = err.get("input")
    if isinstance(got, str | int | float | bool) and kind not in ("value_error", "assertion_error"):
        msg += f" (got {got!r})"
    return ConfigProblem(smap.file, line, col, f"{_dotted(where)}: {msg}")


# -- checks beyond the schema --------------------------------------------------


class _Checker:
    """The checks that need the file system, the game registry, or several sections at once.

    Works on whatever parts of the document passed the schema, so one broken
    stage does not hide a missing entry directory elsewhere.
    """

    def __init__(self, data: dict[str, Any], smap: SourceMap, base_dir: Path) -> None:
        self.data = data
        self.smap = smap
        self.base_dir = base_dir
        self.problems: list[ConfigProblem] = []
        self.entries: dict[str, EntrySpec] = {}
        self.opponents: dict[str, EntrySpec] = {}
        self._dirs: dict[Path, list[EntrySpec]] = {}
        self._name_at: dict[str, Loc] = {}

    def add(self, loc: Sequence[str | int], message: str, *, key: bool = False) -> None:
        line, col = self.smap.position(loc, key=key)
        where, _ = self.smap.resolve(loc)
        self.problems.append(ConfigProblem(self.smap.file, line, col, f"{_dotted(where)}: {message}"))

    def _parsed(self, section: str, parse: Any) -> Iterator[tuple[int | str, Any]]:
        """The items of a section that pass the schema once their faulty keys are dropped.

        The schema pass has already reported those keys; dropping them (their
        defaults apply) lets the checks below still look at the rest.
        """
        raw = self.data.get(section)
        items: Any = raw.items() if isinstance(raw, dict) else enumerate(raw) if isinstance(raw, list) else []
        for key, value in items:
            for _attempt in range(2):
                try:
                    yield key, parse(value)
                    break
                except ValidationError as e:
                    if not isinstance(value, dict):
                        break
                    bad = {str(part) for err in e.errors() for part in err["loc"][:2] if part in value}
                    bad -= {"name", "planner", "path"}
                    if not bad:
                        break
                    value = {k: v for k, v in value.items() if k not in bad}
                except ValueError:
                    break

    def run(self) -> None:
        game = self._check_game()
        boards = {str(k): v for k, v in self._parsed("boards", BoardSpec.model_validate)}
        self._check_boards(game, boards)
        for i, src in self._parsed("entries", EntrySource.model_validate):
            self._expand(("entries", i), src, self.entries)
        for i, src in self._parsed("seed_opponents", EntrySource.model_validate):
            self._expand(("seed_opponents", i), src, self.opponents)
        stages = list(self._parsed("stages", _STAGE_ADAPTER.validate_python))
        self._check_stages(game, boards, stages)

    def _check_game(self) -> Game[Any, Any] | None:
        name = self.data.get("game")
        if not isinstance(name, str):
            return None
        if name not in GAME_NAMES:
            self.add(
                ("game",),
                f"unknown game {name!r}{_did_you_mean(name, GAME_NAMES)}; known: {', '.join(GAME_NAMES)}",
            )
            return None
        params = self.data.get("game_params") or {}
        if not isinstance(params, dict):
            return None
        try:
            return get_game(name, **params)
        except (ValueError, TypeError) as e:
            self.add(("game_params",), str(e))
            return get_game(name)

    def _check_boards(self, game: Game[Any, Any] | None, boards: dict[str, BoardSpec]) -> None:
        seed = self.data.get("seed", 0)
        seed = seed if isinstance(seed, int) else 0
        for name, spec in boards.items():
            field = "file" if spec.file is not None else "text" if spec.text is not None else "generate"
            loc = ("boards", name, field)
            try:
                text = board_source_text(spec, self.base_dir)
            except OSError as e:
                self.add(loc, f"board {name!r}: cannot read {spec.file}: {e.strerror or e}")
                continue
            if game is None:
                continue
            try:
                if text is None:
                    text = generate_board(game, spec, seed, name, "validate", 1)
                game.validate_board(text)
            except (BoardError, ValueError, TypeError) as e:
                self.add(loc, f"board {name!r}: {e}")

    def _entry_dirs(self, loc: Loc, pattern: str) -> list[Path]:
        full = self.base_dir / pattern
        if glob.has_magic(pattern):
            found = [Path(p) for p in sorted(glob.glob(str(full)))]
            dirs = [p for p in found if (p / "entry.yaml").is_file()]
            if not dirs:
                self.add(
                    loc,
                    f"no entry directory (holding entry.yaml) matches {pattern!r} (looked in {full.parent})",
                )
            return dirs
        if not full.is_dir():
            self.add(loc, f"missing entry directory {pattern!r} (resolved to {full.resolve()})")
            return []
        return [full]

    def _load_dir(self, loc: Loc, path: Path) -> list[EntrySpec]:
        path = path.resolve()
        if path not in self._dirs:
            try:
                self._dirs[path] = load_entry(path)
            except EntryError as e:
                self.add(loc, str(e))
                self._dirs[path] = []
        return self._dirs[path]

    def _expand(self, loc: Loc, src: EntrySource, into: dict[str, EntrySpec]) -> None:
        specs: list[EntrySpec] = []
        for d in self._entry_dirs((*loc, "path"), src.path):
            specs.extend(self._load_dir((*loc, "path"), d))
        if src.include is not None and specs:
            names = [s.name for s in specs]
            for j, want in enumerate(src.include):
                if want not in names:
                    self.add(
                        (*loc, "include", j), f"no entry {want!r} in {src.path}{_did_you_mean(want, names)}"
                    )
            specs = [s for s in specs if s.name in src.include]
        if src.variants is not None:
            v = src.variants
            width = len(str(v.start + v.count - 1))
            made: list[EntrySpec] = []
            for s in specs:
                if v.keep_original:
                    made.append(s)
                for i in range(v.start, v.start + v.count):
                    extra = [a.replace("{i}", str(i)) for a in v.args]
                    made.append(
                        replace(s, name=f"{v.prefix or s.name}-{i:0{width}d}", args=[*s.args, *extra])
                    )
            specs = made
        game = self.data.get("game")
        wrong_game = [s.name for s in specs if game in GAME_NAMES and s.game != game]
        if wrong_game:
            self.add(
                (*loc, "path"),
                f"{_names(wrong_game)} play {specs[0].game}, but this tournament's game is {game}",
            )
        wrong_protocol = [
            s.name
            for s in specs
            if game in GAME_NAMES and s.game == game and game not in PROTOCOL_GAMES[s.protocol]
        ]
        if wrong_protocol:
            self.add(
                (*loc, "path"), f"{_names(wrong_protocol)}: protocol {specs[0].protocol} cannot carry {game}"
            )
        for s in specs:
            if s.name in wrong_game or s.name in wrong_protocol:
                continue
            if "~" in s.name:
                self.add((*loc, "path"), f"entry name {s.name!r}: '~' is reserved (system-test mirrors)")
                continue
            if s.name in self._name_at:
                self.add(loc, f"entry name {s.name!r} is already used by {_dotted(self._name_at[s.name])}")
                continue
            self._name_at[s.name] = loc
            into[s.name] = s

    def _check_stages(
        self,
        game: Game[Any, Any] | None,
        boards: dict[str, BoardSpec],
        stages: list[tuple[int | str, AnyStage]],
    ) -> None:
        defined = [*boards, DEFAULT_BOARD]
        raw_boards = self.data.get("boards")
        board_names = set(raw_boards) if isinstance(raw_boards, dict) else set()
        opponents = list(self.opponents)
        raw_stages = self.data.get("stages")
        complete = isinstance(raw_stages, list) and len(stages) == len(raw_stages)
        # upper bound of the entrants that can reach each stage ("a final of 8 from 5 entries")
        count: int | None = len(self.entries) if self.entries and complete else None
        seen: dict[str, Loc] = {}
        for pos, (i, st) in enumerate(stages):
            loc: Loc = ("stages", i)
            if st.name in seen:
                self.add(
                    (*loc, "name"), f"stage name {st.name!r} is already used by {_dotted(seen[st.name])}"
                )
            seen.setdefault(st.name, loc)
            for j, b in enumerate(st.boards):
                if b not in defined and b not in board_names:
                    self.add((*loc, "boards", j), f"undefined board {b!r}{_did_you_mean(b, defined)}")
            if pos == 0 and st.when != "always":
                self.add((*loc, "when"), "the first stage has no ranking before it to be tied")
            names: list[str] = []
            if isinstance(st, SeedingStage | GauntletStage):
                names = st.opponents if st.opponents is not None else opponents
                if not names and not self.data.get("seed_opponents"):
                    self.add(loc, f"planner {st.planner} needs seed_opponents (none are defined)")
                for j, o in enumerate(st.opponents or []):
                    if o not in self.opponents and self.data.get("seed_opponents") is not None:
                        self.add(
                            (*loc, "opponents", j), f"no seed opponent {o!r}{_did_you_mean(o, opponents)}"
                        )
            if (
                isinstance(st, SystemTestStage)
                and st.reference is not None
                and st.reference not in self.opponents
            ):
                self.add(
                    (*loc, "reference"),
                    f"no seed opponent {st.reference!r}{_did_you_mean(st.reference, opponents)}",
                )
            if isinstance(st, EliminationStage):
                self._check_elimination_boards(loc, st, boards)
            if isinstance(st, PermutationsStage) and game is not None and st.max_entrants > game.max_players:
                self.add(
                    (*loc, "max_entrants"), f"{game.name} takes at most {game.max_players} players in a game"
                )
            if count is not None:
                count = self._check_count(loc, st, count)

    def _check_elimination_boards(self, loc: Loc, st: EliminationStage, boards: dict[str, BoardSpec]) -> None:
        specs = [boards.get(b) for b in st.boards]
        if len(specs) == 1 and specs[0] is not None and specs[0].per_round:
            return
        if any(s is not None and s.per_round for s in specs):
            self.add((*loc, "boards"), "a per_round board must be the stage's only board")
        elif st.max_rounds is None or len(st.boards) < st.max_rounds:
            self.add(
                (*loc, "boards"),
                "every elimination round needs a different board: name one generated board with "
                "per_round: true, or list at least max_rounds fixed boards",
            )
        elif len(set(st.boards)) != len(st.boards):
            self.add((*loc, "boards"), "the boards must all differ (one per round)")

    def _check_count(self, loc: Loc, st: AnyStage, n: int) -> int:
        """Check the stage can happen with at most ``n`` entrants; the bound after it."""
        if st.when == "tied_for_first":
            return n  # a tiebreak reorders, it does not change who is left
        if n < 1 or (n < 2 and not isinstance(st, SystemTestStage)):
            self.add(loc, f"stage {st.name!r} can have at most {n} entrant(s); it needs at least 2")
            return n
        out = n
        if isinstance(st, EliminationStage):
            if n <= 2 * st.k:
                self.add(
                    (*loc, "k"),
                    f"at most {n} entrants reach stage {st.name!r}: with k={st.k} the winners bracket "
                    f"stops at {2 * st.k}, so no round would be played; lower k or drop the stage",
                )
            out = min(n, 3 * st.k)
        if isinstance(st, KnockoutStage) and st.advance == "survivors":
            out = 1
        if isinstance(st, SwissStage) and st.rounds > n - 1:
            self.add(
                (*loc, "rounds"),
                f"{st.rounds} rounds without repeats need at least {st.rounds + 1} entrants; "
                f"at most {n} reach this stage",
            )
        if isinstance(st, PermutationsStage) and n > st.max_entrants:
            self.add(loc, f"up to {n} entrants would play {n}! orders; max_entrants is {st.max_entrants}")
        if isinstance(st.advance, AdvanceTop):
            if st.advance.top > out:
                self.add(
                    (*loc, "advance", "top"),
                    f"cannot advance the top {st.advance.top}: "
                    f"at most {out} entrant(s) come out of stage {st.name!r}",
                )
            out = min(out, st.advance.top)
        return out


# -- loading -------------------------------------------------------------------


def load_config_text(text: str, *, file: str = "<config>", base_dir: Path | None = None) -> TournamentConfig:
    """Parse and check a config held in memory; relative paths resolve against ``base_dir``."""
    base = (base_dir or Path.cwd()).resolve()
    data, smap, problems = parse_yaml(text, file)
    if not problems and not isinstance(data, dict):
        problems.append(
            ConfigProblem(file, 1, 1, "a config must be a mapping (name, game, entries, stages ...)")
        )
    if problems:
        raise ConfigError(problems)
    assert isinstance(data, dict)
    config: TournamentConfig | None = None
    try:
        config = TournamentConfig.model_validate(data)
    except ValidationError as e:
        problems.extend(_schema_problem(err, smap) for err in e.errors())
    checker = _Checker(data, smap, base)
    checker.run()
    problems.extend(checker.problems)
    if problems or config is None:
        problems.sort(key=lambda p: (p.line, p.col))
        raise ConfigError(problems)
    return config.bind(
        base_dir=base,
        entries=checker.entries,
        seed_opponents=checker.opponents,
        config_path=Path(file) if file != "<config>" else None,
    )


def load_config(path: str | Path, *, base_dir: Path | None = None) -> TournamentConfig:
    """Load and check ``path``; relative paths inside resolve against its directory (or ``base_dir``)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise ConfigError([ConfigProblem(str(path), 1, 1, f"cannot read config: {e.strerror or e}")]) from e
    config = load_config_text(text, file=str(path), base_dir=base_dir or p.resolve().parent)
    config._config_path = p.resolve()
    return config


def describe(config: TournamentConfig) -> list[str]:
    """One line per stage, for ``tourney validate``."""
    lines = []
    for i, st in enumerate(config.stages, 1):
        adv = st.advance if isinstance(st.advance, str) else f"top {st.advance.top}"
        cond = "" if st.when == "always" else f", only when {st.when.replace('_', ' ')}"
        lines.append(f"  {i}. {st.name}: {st.planner} on {', '.join(st.boards)}; advance {adv}{cond}")
    return lines


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as e:
        for p in e.problems:
            print(p)
        print(f"{len(e.problems)} problem(s) in {args.config}", file=sys.stderr)
        return 2
    print(f"OK: {config.name}: {len(config.entry_specs())} entries, {len(config.stages)} stages")
    if config.seed_opponent_specs():
        print(f"  seed opponents: {', '.join(config.seed_opponent_specs())}")
    for line in describe(config):
        print(line)
    return 0


def json_schema() -> dict[str, Any]:
    return TournamentConfig.model_json_schema()


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m runner.config")
    p.add_argument("--schema", action="store_true", help="print the JSON schema of tournament configs")
    p.add_argument("config", nargs="?", help="validate this config (as tourney validate)")
    args = p.parse_args(argv)
    if args.schema:
        print(json.dumps(json_schema(), indent=2, sort_keys=False))
        return 0
    if args.config:
        return cmd_validate(args)
    p.print_usage()
    return 2


if __name__ == "__main__":
    sys.exit(main())
