"""Entry directories (docs/config.md): ``entry.yaml``, variants, digest, packing.

The digest is the sha256 of the directory's contents (sorted relative paths
and bytes, plus the executable bit), so a rerun can prove it ran the same
code. Packing makes a deterministic tar.gz of the same files: that is the
artifact that travels to workers through Redis.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from runner.domain.entry_tree import EntryCaps, RefusedPath, check_root, read_named_file
from runner.domain.games import GAME_NAMES, game_names, is_game_reference
from runner.domain.match_values import EntryRef
from runner.domain.names import entry_name_problem
from runner.domain.packing import directory_digest as directory_digest  # its home before
from runner.domain.packing import entry_files as entry_files
from runner.domain.packing import pack_entry as pack_entry
from runner.domain.packing import unpack_entry as unpack_entry
from runner.domain.placeholders import build_problems, run_arg_problems
from runner.domain.registry import ENGINE_PROTOCOLS, PROTOCOL_NAMES
from runner.errors import UsageError

# the registries' names, under the names this module has always exported
PROTOCOLS = PROTOCOL_NAMES
GAMES = GAME_NAMES


class EntryError(UsageError, ValueError):
    """An entry directory that cannot be used, with the reason."""


class EntryPathRefused(EntryError):
    """An entry holding what entries may not hold (a link, fifo, device, hard link:
    ``runner.domain.entry_tree``); ``refused`` names the path, relative to the entry root."""

    def __init__(self, refused: RefusedPath) -> None:
        self.refused = refused
        super().__init__(str(refused))


class VariantModel(BaseModel):
    model_config = ConfigDict(extra="forbid")
    args: list[str] = Field(default_factory=list)


class EntryModel(BaseModel):
    """The schema of ``entry.yaml``."""

    model_config = ConfigDict(extra="forbid")
    name: str
    author: str | None = None
    game: str
    protocol: str
    build: str | None = None
    run: list[str] = Field(default_factory=list)
    #: a program of the system (``/usr/games/stockfish``) instead of ``run``: an absolute path,
    #: run in the sandbox like any entry (docs/engines.md)
    command: str | None = None
    #: a chess engine's options (UCI ``setoption`` / xboard ``option``); a config may override them
    options: dict[str, str | int | float | bool] = Field(default_factory=dict)
    variants: dict[str, VariantModel] = Field(default_factory=dict)
    #: the same code, board, seats and seed always give the same moves (no clock, no unseeded
    #: randomness): a verification replay that differs then flags a worker (docs/fleet.md)
    deterministic: bool = False
    #: chess engines: the node count ``<program> bench`` prints (OpenBench's bench), checked by the
    #: worker after the build; a build that prints another is refused (docs/engines.md, "Build checks")
    bench: int | None = Field(default=None, ge=1)

    @field_validator("name")
    @classmethod
    def _plain_name(cls, v: str) -> str:
        problem = entry_name_problem(v)
        if problem:
            raise ValueError(problem)
        return v

    @field_validator("variants")
    @classmethod
    def _plain_variant_names(cls, v: dict[str, VariantModel]) -> dict[str, VariantModel]:
        for vname in v:
            problem = entry_name_problem(vname, "variant name")
            if problem:
                raise ValueError(problem)
        return v

    @field_validator("protocol")
    @classmethod
    def _known_protocol(cls, v: str) -> str:
        if v not in PROTOCOLS:
            raise ValueError(f"unknown protocol {v!r}, expected one of {', '.join(PROTOCOLS)}")
        return v

    @field_validator("game")
    @classmethod
    def _known_game(cls, v: str) -> str:
        if not is_game_reference(v):
            known = ", ".join(game_names())
            raise ValueError(
                f"unknown game {v!r}, expected one of {known} or an import path package.module:Class"
            )
        return v

    @field_validator("command")
    @classmethod
    def _absolute_command(cls, v: str | None) -> str | None:
        if v is not None and not v.startswith("/"):
            raise ValueError(f"command must be an absolute path (like /usr/games/stockfish), got {v!r}")
        return v

    @model_validator(mode="after")
    def _one_program(self) -> EntryModel:
        if bool(self.run) == (self.command is not None):
            raise ValueError("name the program with exactly one of run: [argv...] or command: /absolute/path")
        return self

    def argv(self) -> list[str]:
        return list(self.run) if self.run else [str(self.command)]


@dataclass(frozen=True)
class EntrySpec:
    """One playable entry: an entry directory, or one variant of it."""

    name: str
    game: str
    protocol: str
    path: Path
    run: list[str]
    build: str | None
    digest: str
    args: list[str] = field(default_factory=list)
    author: str | None = None
    base_name: str = ""  # the entry.yaml name (variants share it)
    #: a chess engine's settings (``EngineSettings.to_dict`` form): entry.yaml's options, and
    #: what the config adds (``each:``, the entry's own line)
    engine: dict[str, Any] = field(default_factory=dict)
    #: ``deterministic: true`` in its entry.yaml (``runner.domain.verification``)
    deterministic: bool = False
    #: ``bench: NODES`` in its entry.yaml (``EntryRef.bench``)
    bench: int | None = None

    def ref(self) -> EntryRef:
        return EntryRef(
            name=self.name,
            digest=self.digest,
            protocol=self.protocol,
            run=list(self.run),
            build=self.build,
            args=list(self.args),
            engine=dict(self.engine),
            bench=self.bench,
        )


def read_entry_yaml(path: Path) -> EntryModel:
    f = path / "entry.yaml"
    if not f.is_file():
        raise EntryError(f"{path}: no entry.yaml (expected an entry directory, docs/config.md)")
    try:
        text = read_named_file(f).decode(errors="replace")
        raw: Any = yaml.safe_load(text)
    except RefusedPath as e:
        raise EntryPathRefused(e) from None
    except yaml.MarkedYAMLError as e:  # one located line, as a config's (runner.config.source_map)
        mark = e.problem_mark or e.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        raise EntryError(f"{f}:{line}:{col}: not valid YAML: {e.problem or e.context}") from None
    except yaml.YAMLError as e:
        raise EntryError(f"{f}:1:1: not valid YAML: {' '.join(str(e).split())}") from None
    if not isinstance(raw, dict):
        raise EntryError(f"{f}: expected a mapping with name, game, protocol, run")
    try:
        model = EntryModel.model_validate(raw)
    except ValidationError as e:
        first = e.errors()[0]
        loc = ".".join(str(x) for x in first["loc"])
        line, col = yaml_position(text, tuple(first["loc"]))
        msg = str(first["msg"]).removeprefix("Value error, ")
        raise EntryError(f"{f}:{line}:{col}: {loc}: {msg}") from e
    _check_placeholders(f, model)
    return model


def _check_placeholders(f: Path, model: EntryModel) -> None:
    """Refuse a placeholder the worker would not fill, at ``entry.yaml:line:col``."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    for i, arg in enumerate(model.run):
        found += [(("run", i), p) for p in run_arg_problems(arg)]
    for vname, v in model.variants.items():
        for i, arg in enumerate(v.args):
            found += [(("variants", vname, "args", i), p) for p in run_arg_problems(arg)]
    if model.build is not None:
        found += [(("build",), p) for p in build_problems(model.build)]
    if found:
        text = f.read_text()
        lines = []
        for loc, problem in found:
            line, col = yaml_position(text, loc)
            where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
            lines.append(f"{f}:{line}:{col}: {where}: {problem}")
        raise EntryError("\n".join(lines))


def yaml_position(text: str, loc: tuple[str | int, ...]) -> tuple[int, int]:
    """Line and column (1-based) of the value at ``loc`` in a YAML document (as deep as it goes)."""
    node: yaml.Node | None = yaml.compose(text, Loader=yaml.SafeLoader)
    best = (1, 1)
    for part in loc:
        if node is None:
            break
        best = (node.start_mark.line + 1, node.start_mark.column + 1)
        if isinstance(node, yaml.MappingNode):
            node = next((v for k, v in node.value if getattr(k, "value", None) == part), None)
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int) and part < len(node.value):
            node = node.value[part]
        else:
            node = None
    if node is not None:
        best = (node.start_mark.line + 1, node.start_mark.column + 1)
    return best


def load_entry(path: Path, *, include_base: bool = True, caps: EntryCaps | None = None) -> list[EntrySpec]:
    """The entries an entry directory provides: itself and each variant. ``EntryPathRefused``
    for an entry that is, or holds, a link, fifo, socket, device or hard link, or that passes
    ``caps`` (default ``EntryCaps()``: a config's ``limits.entry_mb`` and friends; docs/config.md)."""
    try:
        check_root(path)  # before resolving, which would follow it
        # walks it all (its listing against the caps first), so a link or an oversized file is
        # refused before entry.yaml is read; read_entry_yaml says what is missing when it is not
        # a directory
        digest = directory_digest(path, caps or EntryCaps()) if path.is_dir() else ""
    except RefusedPath as e:
        raise EntryPathRefused(e) from None
    except OSError as e:
        raise EntryError(f"{path}: cannot read the entry: {e}") from None
    path = path.resolve()
    model = read_entry_yaml(path)
    base = EntrySpec(
        name=model.name,
        game=model.game,
        protocol=model.protocol,
        path=path,
        run=model.argv(),
        build=model.build,
        digest=digest,
        author=model.author,
        base_name=model.name,
        engine=engine_defaults(model),
        deterministic=model.deterministic,
        bench=model.bench,
    )
    out = [base] if include_base or not model.variants else []
    # a variant is the base program with its own name and extra arguments
    for vname, v in model.variants.items():
        out.append(replace(base, name=vname, run=model.argv(), args=list(v.args)))
    return out


def engine_defaults(model: EntryModel) -> dict[str, Any]:
    """What an engine entry brings of its settings: its options (the clock is the config's)."""
    if model.protocol not in ENGINE_PROTOCOLS or not model.options:
        return {}
    return {"options": dict(model.options)}
