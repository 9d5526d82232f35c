"""The run directory (DESIGN §4.5): layout, the frozen config, the resume guard.

    runs/<name>/
      config.yaml        frozen copy of the config; its digest guards resume
      tournament.sqlite  the run store (runner.store), the source of truth
      artifacts/         packed entries, <digest>.tar.gz (also pushed to Redis)
      report.html        written at the end of every run
      logs/              coordinator and local worker logs
      redis/             the embedded Redis (config, append-only file; disposable)
      workers/<n>/       local workers' build caches

The frozen copy keeps the config's text; relative paths in it (entries,
boards) still resolve against the original config's directory, recorded in
the store's meta as ``config_dir`` (``load_config(..., base_dir=...)``).

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
import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from runner.config import TournamentConfig, load_config
from runner.store import STORE_FILE, RunStore, StoreError

FROZEN_CONFIG = "config.yaml"


class ResumeRefused(RuntimeError):
    """The run directory holds a different tournament (or is busy)."""


@dataclass(frozen=True)
class RunDir:
    path: Path

    @property
    def config(self) -> Path:
        return self.path / FROZEN_CONFIG

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

    def exists(self) -> bool:
        return self.store.is_file()


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
    if want != got:
        store.close()
        raise ResumeRefused(
            f"{rd.path} holds a run of a different config (frozen config digest {want[:12]}, "
            f"{config_path} has {got[:12]}); use --run-dir to start a new run, or restore the config"
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
    return store


def load_run_config(run_dir: Path) -> TournamentConfig:
    """The run's frozen config, resolved against the original config's directory."""
    rd = RunDir(Path(run_dir))
    with RunStore.open(rd.path) as store:
        meta = store.meta()
    base = Path(str(meta.get("config_dir") or Path(str(meta.get("config_path", rd.config))).parent))
    return load_config(rd.config, base_dir=base)


@contextlib.contextmanager
def coordinator_lock(rd: RunDir) -> Iterator[None]:
    """One coordinator per run directory; the kernel drops the lock if it is killed."""
    rd.path.mkdir(parents=True, exist_ok=True)
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
