"""The run directory (docs/architecture.md): layout, the frozen config, the resume guard.

    runs/<name>/
      config.yaml        frozen copy of the config; its digest guards resume
      resolved.json      the entries (names, digests, protocols, argv, variants) and board
                         texts it resolved to: reading the run needs no entries tree
      tournament.sqlite  the run store (runner.storage.store), the source of truth
      artifacts/         packed entries, <digest>.tar.gz (also pushed to Redis)
      report.html        written at the end of every run
      report-data/       its match pages and replays, for a run of over 1,000 matches
      logs/              coordinator and local worker logs
      redis/             the embedded Redis (config, append-only file; disposable)
      workers/<n>/       local workers' build caches

The frozen copy keeps the config's text; ``resolved.json`` (``runner.storage.resolved``)
keeps what it resolved to (entries with their digests, board texts), so every
command that reads a run works from the run directory alone, even once the
entries tree has moved. Resuming resolves the config again against the
original config's directory (``config_dir`` in the store's meta) and checks
the entries still have their recorded digests.

Resuming (``tourney run`` on an existing run directory) requires the same
config digest, and that every match the store already holds is planned
exactly as stored (same board, seats, seed, entry digests, limits): entry
code that changed under a run would otherwise mix two versions in one
tournament.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import yaml

from runner.config import TournamentConfig, load_config
from runner.errors import UsageError
from runner.storage.resolved import RESOLVED_FILE, kept_per_match, read_resolved, run_config, write_resolved
from runner.storage.store import STORE_FILE, RunStore, StoreError

FROZEN_CONFIG = "config.yaml"


class ResumeRefused(UsageError, RuntimeError):
    """The run directory holds a different tournament (or is busy)."""


@dataclass(frozen=True)
class RunDir:
    path: Path

    @property
    def config(self) -> Path:
        return self.path / FROZEN_CONFIG

    @property
    def resolved(self) -> Path:
        return self.path / RESOLVED_FILE

    @property
    def store(self) -> Path:
        return self.path / STORE_FILE

    @property
    def artifacts(self) -> Path:
        return self.path / "artifacts"

    @property
    def logs(self) -> Path:
        return self.path / "logs"

    @property
    def redis(self) -> Path:
        return self.path / "redis"

    @property
    def workers(self) -> Path:
        return self.path / "workers"

    @property
    def report(self) -> Path:
        return self.path / "report.html"

    @property
    def standings_json(self) -> Path:
        """Each stage's standings and the final ranking, written at the end of every run."""
        return self.path / "standings.json"

    @property
    def games_jsonl(self) -> Path:
        """Every game with its transcript, one JSON line each, written at the end of every run."""
        return self.path / "games.jsonl"

    def exists(self) -> bool:
        return self.store.is_file()


def run_dir_problem(path: Path) -> str | None:
    """Why ``path`` cannot be a run directory (it, or a directory above it, is a file or a
    device), or None; said before anything is made, in one line."""
    for p in (path, *path.parents):
        if p.exists() and not p.is_dir():
            what = "a file" if p.is_file() else "not a directory (a device or a socket)"
            if p == path:
                return f"{path} is {what}; give a directory: a new one, or a run's to resume it"
            return f"{path}: {p} is {what}, so nothing can be made under it; give a directory"
        if p.is_dir():
            if not os.access(p, os.W_OK | os.X_OK) and p != path:
                return f"{path}: cannot create it in {p} (permission denied)"
            break
    return None


def default_run_dir(config: TournamentConfig) -> Path:
    return Path("runs") / config.name


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def create_run(rd: RunDir, config_path: Path, config: TournamentConfig, run_id: str) -> RunStore:
    """A new run: freeze the config and create the store."""
    rd.path.mkdir(mode=0o700, parents=True, exist_ok=True)
    rd.path.chmod(0o700)
    for d in (rd.artifacts, rd.logs):
        d.mkdir(exist_ok=True)
    data = config_path.read_bytes()
    rd.config.write_bytes(data)
    write_resolved(rd.path, config)
    return RunStore.create(
        rd.path,
        {
            "name": config.name,
            "run_id": run_id,
            "config_path": str(config_path.resolve()),
            "config_dir": str(config.base_dir),
            "config_digest": hashlib.sha256(data).hexdigest(),
            "created": time.time(),
            "finished": None,
            "sandbox": config.sandbox,
            "game": config.game,
            "entries": {n: s.digest for n, s in config.entry_specs().items()},
            "seed_opponents": {n: s.digest for n, s in config.seed_opponent_specs().items()},
        },
    )


#: differing keys a refused resume names before "and N more"
SHOWN_CHANGES = 5


def _flat(value: Any, at: str = "") -> dict[str, Any]:
    """A parsed YAML document as ``dotted.key[0]`` -> leaf value."""
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(_flat(v, f"{at}.{k}" if at else str(k)))
        return out
    if isinstance(value, list) and value:
        out = {}
        for i, v in enumerate(value):
            out.update(_flat(v, f"{at}[{i}]"))
        return out
    return {at or "(the whole file)": value}


def config_changes(frozen: Path, config_path: Path) -> list[str]:
    """What differs between a run's frozen config and ``config_path``, by content, not bytes
    (comments, quoting and layout are no change): ``key: old -> new`` per differing key; a
    frozen copy that cannot be read or parsed counts as differing as a whole."""
    try:
        old = _flat(yaml.safe_load(frozen.read_text(encoding="utf-8")))
        new = _flat(yaml.safe_load(config_path.read_text(encoding="utf-8")))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        return [f"the whole file (the frozen copy cannot be read: {e})"]
    missing = object()
    changes = []
    for key in sorted(old.keys() | new.keys()):
        a, b = old.get(key, missing), new.get(key, missing)
        if a != b:
            before = "(absent)" if a is missing else json.dumps(a)
            after = "(absent)" if b is missing else json.dumps(b)
            changes.append(f"{key}: {before} -> {after}")
    return changes


def open_for_resume(rd: RunDir, config_path: Path, config: TournamentConfig) -> RunStore:
    """The existing run's store if ``config_path`` is the same config with the same entry
    code; else ``ResumeRefused`` saying what differs."""
    try:
        store = RunStore.open(rd.path)
    except StoreError as e:
        raise ResumeRefused(str(e)) from e
    meta = store.meta()
    want = str(meta.get("config_digest", ""))
    got = file_digest(config_path)
    differs = config_changes(rd.config, config_path) if want != got else []
    if differs:
        store.close()
        shown = "; ".join(differs[:SHOWN_CHANGES]) + (
            f"; and {len(differs) - SHOWN_CHANGES} more" if len(differs) > SHOWN_CHANGES else ""
        )
        raise ResumeRefused(
            f"{rd.path} holds a run of another config: {config_path} differs from the run's frozen copy "
            f"{rd.config} in {shown}; restore those values (or copy {rd.config} back), or start a new "
            "run with --run-dir DIR"
        )
    now = {n: s.digest for n, s in [*config.entry_specs().items(), *config.seed_opponent_specs().items()]}
    recorded = {**meta.get("entries", {}), **meta.get("seed_opponents", {})}
    for name, digest in recorded.items():
        if name in now and now[name] != digest:
            store.close()
            raise ResumeRefused(
                f"entry {name!r} changed since this run started (digest {digest[:12]} -> {now[name][:12]}); "
                "restore it, or start a new run with --run-dir"
            )
    resolved = read_resolved(rd.path)
    # the matches the run began with: its book's grouping as recorded, whatever today's default
    kept_per_match(resolved, config)
    if resolved is None:  # a run started before runs recorded what they resolved to
        write_resolved(rd.path, config)
    return store


def load_run_config(run_dir: Path) -> TournamentConfig:
    """The run's frozen config with the entries and boards it resolved to when the run
    started (``resolved.json``): no entries tree needed, nothing hashed again. A run
    without that record resolves the frozen config against the original config's
    directory, as it was run."""
    rd = RunDir(Path(run_dir))
    resolved = read_resolved(rd.path)
    if resolved is None:
        return live_run_config(rd.path)
    return run_config(rd.config, resolved, _config_dir(rd))


def live_run_config(run_dir: Path) -> TournamentConfig:
    """The run's frozen config resolved against the entries tree as it is now
    (every entry read and hashed again), its book's openings grouped as the run began them."""
    rd = RunDir(Path(run_dir))
    config = load_config(rd.config, base_dir=_config_dir(rd))
    kept_per_match(read_resolved(rd.path), config)
    return config


def _config_dir(rd: RunDir) -> Path:
    """Where the run's config lived: relative paths in the frozen copy resolve against it."""
    with RunStore.open(rd.path) as store:
        meta = store.meta()
    return Path(str(meta.get("config_dir") or Path(str(meta.get("config_path", rd.config))).parent))


@contextlib.contextmanager
def coordinator_lock(rd: RunDir) -> Iterator[None]:
    """One coordinator per run directory; the kernel drops the lock if it is killed."""
    try:
        rd.path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(
            run_dir_problem(rd.path) or f"{rd.path}: cannot create the run directory: {e.strerror or e}"
        ) from None
    # results, artifacts and the broker's files: nobody else's business
    rd.path.chmod(0o700)
    f: IO[str] = open(rd.path / ".coordinator.lock", "a+")  # noqa: SIM115 (held for the whole run)
    try:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "?"
            raise ResumeRefused(f"{rd.path} is in use by another coordinator (pid {holder})") from None
        f.seek(0)
        f.truncate()
        f.write(str(os.getpid()))
        f.flush()
        yield
    finally:
        f.close()
