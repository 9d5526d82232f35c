"""What the server answers, as data: a submission as the API and the pages show it (its team's
own view: no other team's data), and the smoke game's moves (docs/submissions.md)."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

from runner.submissions.store import Submission


def iso_time(ts: float | None) -> str:
    if ts is None:
        return ""
    return dt.datetime.fromtimestamp(ts, dt.UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def submission_json(sub: Submission, counts: bool, base: str = "") -> dict[str, Any]:
    """A submission as the API answers it (its team's own view: no other team's data)."""
    return {
        "team": sub.team,
        "version": sub.version,
        "received": iso_time(sub.received),
        "size": sub.size,
        "upload_name": sub.upload_name,
        "upload_sha256": sub.upload_digest,
        "entry_digest": sub.entry_digest,
        "state": sub.state,
        "failure": sub.failure,
        "first_error": sub.first_error,
        "counts": counts,
        "chosen": sub.chosen,
        "steps": [
            {"step": s.step, "status": s.status, "detail": s.detail, "at": iso_time(s.at)} for s in sub.steps
        ],
        "id": sub.id,
        "url": f"{base}/team/v/{sub.version}",
        "api_url": f"{base}/api/submissions/{sub.version}",
        "build_log_url": f"{base}/team/v/{sub.version}/build-log" if sub.build_log else None,
    }


def smoke_moves(sub: Submission) -> list[dict[str, Any]]:
    """The smoke game's moves (a replay as a list), from the stored result."""
    if not sub.result:
        return []
    games = json.loads(sub.result).get("games") or []
    if not games:
        return []
    return [
        {"n": i, "player": m.get("player", ""), "move": m.get("move", ""), "ms": round(m.get("wall_ms", 0.0))}
        for i, m in enumerate(games[0].get("moves") or [], 1)
    ]
