"""The contest's run, live on the submission server (docs/submissions.md, "The run, live").

While ``tourney run`` plays the teams' counting versions, the server reads the run's store
(``runs/<name>`` beside it, or ``tourney serve --run-dir``) and shows it: ``/run`` is the
run's report (``runner.report``: standings, brackets, every finished game with its replay)
rendered from the store as it stands, and ``/api/run`` says the same as JSON (the state,
matches done of planned, each stage's standings, every finished game). The page polls: every
2 s it asks ``/api/run/version`` and reloads itself when a result was accepted since it was
rendered (no server-sent events: a page per accepted result is what a reader sees either way,
and polling passes every proxy unchanged), and stops once the run is finished.

Reading is by polling the store too: a cheap query (matches per state, the last accepted
result's time, the run's ``finished`` mark) says whether anything changed; the report's data
and page are made again only then, once, whatever the number of readers.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.config import ConfigError
from runner.report.html import render_report
from runner.report.loader import load_report_data
from runner.report.model import ReportData
from runner.storage.store import STORE_FILE, StoreError

log = logging.getLogger("tourney.serve")

#: how often the live page asks whether the run moved
POLL_S = 2.0
#: a standings row as ``/api/run`` gives it
STANDING_KEYS = ("rank", "entry", "games", "wins", "ties", "losses", "points")


@dataclass(frozen=True)
class RunVersion:
    """What changes when a result is accepted (or the run starts or ends)."""

    exists: bool
    finished: bool
    done: int
    total: int
    last: float

    @property
    def key(self) -> str:
        return f"{int(self.exists)}.{int(self.finished)}.{self.done}.{self.total}.{self.last:.6f}"

    @property
    def state(self) -> str:
        return "none" if not self.exists else "finished" if self.finished else "playing"


class LiveRun:
    """The run at ``run_dir``, read from its store as it is played (thread-safe)."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self._lock = threading.Lock()
        self._made: tuple[str, ReportData, str] | None = None

    def version(self) -> RunVersion:
        store = self.run_dir / STORE_FILE
        if not store.is_file():
            return RunVersion(False, False, 0, 0, 0.0)
        # read-only and brief: the coordinator owns the store; WAL lets us read beside it
        db = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=10.0)
        try:
            done, total, last = db.execute(
                "SELECT COALESCE(SUM(state = 'done'), 0), COUNT(*), COALESCE(MAX(finished_at), 0) "
                "FROM matches WHERE state != 'obsolete'"
            ).fetchone()
            row = db.execute("SELECT value FROM meta WHERE key = 'finished'").fetchone()
        except sqlite3.OperationalError:  # created this instant: its tables are not there yet
            return RunVersion(True, False, 0, 0, 0.0)
        finally:
            db.close()
        finished = row is not None and json.loads(row[0]) is not None
        return RunVersion(True, finished, int(done), int(total), float(last))

    def _current(self) -> tuple[RunVersion, ReportData | None, str]:
        version = self.version()
        if not version.exists:
            return version, None, ""
        with self._lock:
            if self._made is None or self._made[0] != version.key:
                try:
                    data = load_report_data(self.run_dir)
                except (StoreError, ConfigError, OSError, sqlite3.Error) as e:
                    # a run directory being created this instant (its config, its record, its store)
                    log.info("live run: %s not readable yet: %s", self.run_dir, e)
                    return RunVersion(True, False, 0, 0, 0.0), None, ""
                now = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
                self._made = (
                    version.key,
                    data,
                    render_report(data, generated=f"{now}, live: {version.state}"),
                )
            _, data, page = self._made
        return version, data, page

    def page(self) -> tuple[RunVersion, str]:
        """The report as the store stands, and the version it shows ("" when there is no run)."""
        version, _, page = self._current()
        return version, page

    def summary(self) -> dict[str, Any]:
        """``/api/run``: the state, matches done of planned, each stage's standings, every
        finished game (players, winner, verdict, moves), the final ranking once there is one."""
        version, data, _ = self._current()
        out: dict[str, Any] = {
            "state": version.state,
            "version": version.key,
            "matches": {"done": version.done, "planned": version.total},
        }
        if data is None:
            return out
        out["name"] = data.name
        out["stages"] = [
            {
                "name": st.name,
                "status": st.status,
                "standings": [
                    {
                        k: row.to_dict()[k]
                        for k in ("rank", "entry", "games", "wins", "ties", "losses", "points")
                    }
                    for row in st.standings
                ],
            }
            for st in data.stages
        ]
        out["games"] = [
            {
                "match": m.match_id,
                "stage": m.stage,
                "round": m.round,
                "game": k,
                "players": list(g.order),
                "winner": g.winner,
                "verdict": g.verdict.kind.value,
                "moves": len(g.moves),
            }
            for m, k, g in data.games()
        ]
        out["final_ranking"] = list(data.tournament.final_ranking)
        return out


def live_script(version: str) -> str:
    """What the live page adds to the report: it reloads when the run moved (polling)."""
    return (
        '<script>/* live: docs/submissions.md, "The run, live" */(function () {\n'
        f"  var shown = {json.dumps(version)}, every = {int(POLL_S * 1000)};\n"
        "  function ask() {\n"
        "    fetch('/api/run/version', {cache: 'no-store'}).then(function (r) { return r.json(); })\n"
        "      .then(function (j) { if (j.version !== shown) { location.reload(); }"
        " else if (j.state !== 'finished') { setTimeout(ask, every); } })\n"
        "      .catch(function () { setTimeout(ask, every); });\n"
        "  }\n"
        "  setTimeout(ask, every);\n"
        "})();</script>\n"
    )
