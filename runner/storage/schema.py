"""The run store's file: its name, its tables and how a connection to it is opened.

Tables::

    meta     key -> JSON value (name, config_path, config_digest, run_id, created, finished, ...)
    matches  one row per planned match: the MatchSpec (JSON; it holds the whole
             MatchPlan), a few plan fields as columns for queries (written from the
             plan, read back only for specs stored before the plan travelled in
             them), and its life: state, attempt, failures, lease_expires, worker, times
    results  every result ever received that mattered: (match_id, attempt,
             status official|superseded|candidate|rejected, result JSON)
    boards   board_id -> board text
    events   an append-only log: dispatches, starts, accepted and ignored
             results, requeues, failures, reruns
    candidates, acceptances
             rerun candidates and who accepted which (``runner.storage.disputes``,
             which ``tourney rerun`` and ``tourney accept`` use; created on first use)
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from runner.errors import RunHalted

STORE_FILE = "tournament.sqlite"
SCHEMA_VERSION = 1

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS matches (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    stage TEXT NOT NULL,
    round INTEGER NOT NULL,
    bracket TEXT NOT NULL,
    pairing INTEGER NOT NULL,
    players TEXT NOT NULL,
    board_id TEXT NOT NULL,
    orders TEXT NOT NULL,
    spec TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    attempt INTEGER NOT NULL DEFAULT 0,
    failures INTEGER NOT NULL DEFAULT 0,
    lease_expires REAL,
    worker TEXT NOT NULL DEFAULT '',
    execution TEXT NOT NULL DEFAULT '',
    dispatched_at REAL,
    started_at REAL,
    finished_at REAL,
    updated_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS matches_state ON matches(state);
CREATE INDEX IF NOT EXISTS matches_seq ON matches(seq);
CREATE TABLE IF NOT EXISTS results (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    match_id TEXT NOT NULL REFERENCES matches(id),
    attempt INTEGER NOT NULL,
    status TEXT NOT NULL,
    worker TEXT NOT NULL DEFAULT '',
    result TEXT NOT NULL,
    received_at REAL NOT NULL,
    accepted_at REAL
);
CREATE INDEX IF NOT EXISTS results_match ON results(match_id);
CREATE TABLE IF NOT EXISTS boards (id TEXT PRIMARY KEY, text TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    ts REAL NOT NULL,
    kind TEXT NOT NULL,
    match_id TEXT,
    detail TEXT NOT NULL DEFAULT ''
);
"""


class StoreError(RunHalted, RuntimeError):
    """The run store cannot be opened or used (not a run directory, newer schema, ...)."""


def connect(path: Path) -> sqlite3.Connection:
    # autocommit mode; writes group themselves in ``StoreConnection.transaction``
    conn = sqlite3.connect(str(path), isolation_level=None, timeout=30.0, check_same_thread=False)
    conn.row_factory = sqlite3.Row
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn
