"""``resolved.json``: what a run's config resolved to, kept in the run directory.

A config names entries by path and glob and boards by file; resolving it
reads the entries tree (every ``entry.yaml``, every file hashed) and the board
files. A run records the result beside its frozen ``config.yaml``::

    {"format": 1,
     "entries":        [{"name", "game", "protocol", "path", "run", "build", "digest",
                         "args", "author", "base_name"}, ...],   # in seed order
     "seed_opponents": [...],
     "boards":         {"<name>": "<text>", ...},              # every fixed board
     "openings_per_match": K}                                  # a chess book's grouping

so that reading the run later (``report``, ``matches``, ``standings``,
``replay``, ``rerun``) needs neither the entries tree nor the board files:
``run_config`` parses the frozen config and binds these entries and boards
instead of walking and hashing the tree again. A report of an old run keeps
working after its entry directories have moved, and costs no hashing.
``path`` says where an entry was when the run started (``rerun`` looks
there for changed code); the code itself is in ``artifacts/<digest>.tar.gz``.

Boards made per round are generated from the seed and need no record; the
texts of every board the run has planned are also in the store.

``openings_per_match`` is the number of book openings a match the run planned with
(``openings.per_match`` resolved, docs/config.md): reading the run, or resuming it, plans with
that number again (``kept_per_match``), whatever the config's default says by then. A run
recorded before the key was kept began when the default was one opening a match.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from runner.config import ConfigError, ConfigProblem, TournamentConfig
from runner.domain.boards import BoardSpec
from runner.domain.entries import EntrySpec

RESOLVED_FILE = "resolved.json"
FORMAT = 1


@dataclass(frozen=True)
class ResolvedRun:
    """The entries (in seed order), seed opponents and fixed board texts a config resolved to."""

    entries: dict[str, EntrySpec]
    seed_opponents: dict[str, EntrySpec]
    boards: dict[str, str]
    #: the openings a match the run planned with; None: not recorded (module doc)
    openings_per_match: int | None = None

    @classmethod
    def of(cls, config: TournamentConfig) -> ResolvedRun:
        boards = {name: config.board_text(name) for name, spec in config.boards.items() if not spec.per_round}
        return cls(config.entry_specs(), config.seed_opponent_specs(), boards, config.openings_per_match)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "format": FORMAT,
            "entries": [_entry_dict(e) for e in self.entries.values()],
            "seed_opponents": [_entry_dict(e) for e in self.seed_opponents.values()],
            "boards": dict(self.boards),
        }
        if self.openings_per_match is not None:
            d["openings_per_match"] = self.openings_per_match
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> ResolvedRun:
        if d.get("format") != FORMAT:
            raise ValueError(f"format {d.get('format')!r}, this tourney reads {FORMAT}")
        entries = [_entry(e) for e in d["entries"]]
        opponents = [_entry(e) for e in d["seed_opponents"]]
        return cls(
            {e.name: e for e in entries},
            {e.name: e for e in opponents},
            {str(k): str(v) for k, v in d["boards"].items()},
            int(d["openings_per_match"]) if d.get("openings_per_match") is not None else None,
        )


def kept_per_match(resolved: ResolvedRun | None, config: TournamentConfig) -> None:
    """Plan ``config``'s book openings as the run recorded in ``resolved`` began them (module
    doc): its recorded number a match, or, for a run that kept none (``resolved`` None or
    without the key), what the config said then: its own number, or one a match for ``auto``,
    the default then."""
    if config.openings is None or config.openings_per_match is None:
        return
    if resolved is not None and resolved.openings_per_match is not None:
        config.regroup_openings(resolved.openings_per_match)
    elif config.openings.per_match == "auto":
        config.regroup_openings(1)


def _entry_dict(e: EntrySpec) -> dict[str, Any]:
    d = asdict(e)
    d["path"] = str(e.path)
    return d


def _entry(d: dict[str, Any]) -> EntrySpec:
    return EntrySpec(**{**d, "path": Path(d["path"])})


def write_resolved(run_dir: Path, config: TournamentConfig) -> Path:
    """Record what ``config`` resolved to (atomically: a reader never sees half a file)."""
    path = run_dir / RESOLVED_FILE
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(ResolvedRun.of(config).to_dict(), indent=1) + "\n", encoding="utf-8")
    tmp.replace(path)
    return path


def read_resolved(run_dir: Path) -> ResolvedRun | None:
    """The run's record, or None for a run started before runs kept one."""
    path = run_dir / RESOLVED_FILE
    if not path.is_file():
        return None
    try:
        return ResolvedRun.from_dict(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConfigError([ConfigProblem(str(path), 1, 1, f"unreadable run record: {e}")]) from e


def run_config(frozen: Path, resolved: ResolvedRun, base_dir: Path) -> TournamentConfig:
    """The frozen config bound to the recorded entries and boards, without the entries tree.

    The frozen text was checked in full when the run started (and its digest
    guards resume), so only its schema is checked again here; ``file:`` boards
    read their recorded text.
    """
    try:
        data = yaml.safe_load(frozen.read_text(encoding="utf-8"))
        config = TournamentConfig.model_validate(data)
    except (OSError, yaml.YAMLError, ValidationError) as e:
        raise ConfigError([ConfigProblem(str(frozen), 1, 1, f"cannot read the frozen config: {e}")]) from e
    recorded = resolved.boards
    boards = {
        name: BoardSpec(text=recorded[name]) if spec.file is not None and name in recorded else spec
        for name, spec in config.boards.items()
    }
    config = config.model_copy(update={"boards": boards})
    config.bind(
        base_dir=base_dir,
        entries=resolved.entries,
        seed_opponents=resolved.seed_opponents,
        config_path=frozen,
    )
    kept_per_match(resolved, config)
    return config


__all__ = ["RESOLVED_FILE", "ResolvedRun", "kept_per_match", "read_resolved", "run_config", "write_resolved"]
