"""The run store's connection: its transactions, its meta table and its event log.

Every part of ``RunStore`` (``queries``, ``planning``, ``match_life``) writes through these:
one connection in autocommit mode, writes grouped by ``BEGIN IMMEDIATE`` transactions, and
an event row beside each change so the run's story can be read back (``RunStore.events``).
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any


class StoreConnection:
    """One open run store file; the base the store's parts share."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self._conn = conn

    def close(self) -> None:
        self._conn.close()

    @property
    def connection(self) -> sqlite3.Connection:
        """For the store's sibling modules (``runner.storage.disputes``) that own tables of their own."""
        return self._conn

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on any error), for the sibling modules."""
        return self._tx()

    @contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self._conn.execute("BEGIN IMMEDIATE")
        try:
            yield self._conn
        except BaseException:
            self._conn.execute("ROLLBACK")
            raise
        self._conn.execute("COMMIT")

    def meta(self) -> dict[str, Any]:
        return {r["key"]: json.loads(r["value"]) for r in self._conn.execute("SELECT key, value FROM meta")}

    def set_meta(self, **values: Any) -> None:
        with self._tx() as c:
            c.executemany(
                "INSERT INTO meta(key, value) VALUES(?, ?) ON CONFLICT(key) DO UPDATE SET "
                "value=excluded.value",
                [(k, json.dumps(v, sort_keys=True)) for k, v in values.items()],
            )

    def log(self, kind: str, match_id: str | None = None, detail: str = "") -> None:
        self._conn.execute(
            "INSERT INTO events(ts, kind, match_id, detail) VALUES(?, ?, ?, ?)",
            (time.time(), kind, match_id, detail),
        )

    @staticmethod
    def _log_in(c: sqlite3.Connection, kind: str, match_id: str | None, detail: str) -> None:
        c.execute(
            "INSERT INTO events(ts, kind, match_id, detail) VALUES(?, ?, ?, ?)",
            (time.time(), kind, match_id, detail),
        )
