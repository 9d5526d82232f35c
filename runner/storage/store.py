"""The run store: one SQLite file per run, the single source of truth (docs/architecture.md).

Redis only delivers work; everything a run knows lives here, so the
coordinator can be killed at any moment and resumed from this file alone.
SQLite runs in WAL mode: the coordinator is the only writer, while report
commands read concurrently.

``RunStore`` is the one class callers use; it is composed of parts, one idea each:

* ``runner.storage.schema``: the file, its tables (listed there) and how it is opened;
* ``runner.storage.connection``: transactions, the meta table and the event log;
* ``runner.storage.queries``: everything the store answers (read only);
* ``runner.storage.planning``: keeping the stored matches equal to the plan;
* ``runner.storage.match_life``: a match's states and the rules of accepting a result
  (listed there);
* ``runner.storage.rows``: a stored row read back as domain values.

READ API (used by ``runner.report``; kept stable):

* ``RunStore.open(run_dir) -> RunStore``: an existing run; ``StoreError`` otherwise.
* ``store.meta() -> dict[str, Any]``
* ``store.official_results() -> dict[match_id, list[GameRecord]]``: the current
  official result per live (not obsolete) match, failed matches included.
* ``store.match_records() -> list[MatchRecord]`` in plan order (``runner.domain.match_record``:
  the plan, the spec, the match's life and every kept result; ``match_rows`` is the old name).
* ``store.match_record(match_id) -> MatchRecord | None``
* ``store.events() -> list[Event]``
* ``store.board_texts() -> dict[board_id, text]``
* ``runner.storage.run_dir.load_run_config(run_dir) -> TournamentConfig`` (the frozen config).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from runner.storage.match_life import DEFAULT_ATTEMPT_CAP, Accepted, MatchLife, MatchState, failed_result
from runner.storage.planning import PlanSync, StorePlanning
from runner.storage.queries import IN_FLIGHT, Event, InFlight, StoreQueries
from runner.storage.schema import SCHEMA, SCHEMA_VERSION, STORE_FILE, StoreError, connect

__all__ = [
    "DEFAULT_ATTEMPT_CAP",
    "IN_FLIGHT",
    "SCHEMA_VERSION",
    "STORE_FILE",
    "Accepted",
    "Event",
    "InFlight",
    "MatchState",
    "PlanSync",
    "RunStore",
    "StoreError",
    "failed_result",
]


class RunStore(MatchLife, StorePlanning, StoreQueries):
    """A run's SQLite store. ``create`` a new one or ``open`` an existing one."""

    @classmethod
    def create(cls, run_dir: Path, meta: dict[str, Any]) -> RunStore:
        run_dir.mkdir(parents=True, exist_ok=True)
        path = run_dir / STORE_FILE
        if path.exists():
            raise StoreError(f"{path} already exists")
        store = cls(path, connect(path))
        store._conn.executescript(SCHEMA)
        store.set_meta(schema_version=SCHEMA_VERSION, **meta)
        return store

    @classmethod
    def open(cls, run_dir: Path) -> RunStore:
        path = Path(run_dir) / STORE_FILE
        if not path.is_file():
            raise StoreError(
                f"{run_dir}: not a run directory (no {STORE_FILE}); start one with `tourney run`"
            )
        try:
            store = cls(path, connect(path))
        except sqlite3.DatabaseError as e:
            raise StoreError(f"{path}: not a tourney run store ({e})") from e
        try:
            version = store.meta().get("schema_version")
        except sqlite3.DatabaseError as e:
            store.close()
            raise StoreError(f"{path}: not a tourney run store ({e})") from e
        if version != SCHEMA_VERSION:
            store.close()
            raise StoreError(f"{path}: store schema {version!r}, this tourney reads {SCHEMA_VERSION}")
        return store

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
