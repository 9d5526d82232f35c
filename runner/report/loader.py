"""Reading a run directory into a ``ReportData``.

The tournament state is not stored: it is ``advance(config, results)`` over
the frozen config and the store's official results, the same pure function
the coordinator plans with, so the report always agrees with what the
coordinator would do next. The store adds each match's life (state, attempt,
worker, superseded and candidate results).
"""

from __future__ import annotations

import contextlib
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from runner.domain.match_record import MatchRecord
from runner.domain.stages.tournament import advance
from runner.report.model import ReportData
from runner.storage.disputes import dispute_log
from runner.storage.run_dir import load_run_config
from runner.storage.store import RunStore


def _when(value: Any) -> Any:
    """Epoch seconds as an ISO time (UTC); anything else unchanged."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(float(value), UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    return value


def load(run_dir: Path) -> ReportData:
    if not run_dir.is_dir():
        raise FileNotFoundError(f"{run_dir}: no such run directory")
    with RunStore.open(run_dir) as store:
        meta = store.meta()
        stored = {r.match_id: r for r in store.match_records()}
        boards = store.board_texts()
        disputes = dispute_log(store)
    config = load_run_config(run_dir)
    results = {mid: list(r.games) for mid, r in stored.items() if r.games}
    state = advance(config, results)
    matches = []
    for pm in state.matches:
        matches.append(stored.get(pm.match_id) or MatchRecord.planned(pm))
        if pm.board_id not in boards:
            with contextlib.suppress(KeyError, ValueError):  # unknown to the config: the replay says so
                boards[pm.board_id] = config.board_text(pm.board_id)
    meta = {k: _when(v) if k in ("created", "finished", "updated") else v for k, v in meta.items()}
    meta.setdefault("sandbox", config.sandbox)
    meta.setdefault("name", config.name)
    if config.description:
        meta.setdefault("description", config.description)
    return ReportData(
        name=config.name,
        game_name=config.game,
        tournament=state,
        matches=matches,
        boards=boards,
        game_params=dict(config.game_params),
        meta=meta,
        run_dir=run_dir,
        config=config,
        disputes=disputes,
    )


def load_report_data(run_dir: Path | str) -> ReportData:
    """Read a run directory into a ``ReportData`` (raises ``FileNotFoundError``)."""
    return load(Path(run_dir))
