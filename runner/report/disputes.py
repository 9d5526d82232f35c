"""How each official result became official, and what it superseded, as the report shows it.

``matches --json`` and the HTML page read these (``dispute_fields``), so a
result that replaced another is never shown without the one it replaced:
``official_result`` says played (attempt, worker, time) or accepted (candidate,
by whom, when, why, replacing which attempt, code choice); ``superseded_results``
lists every earlier official result with its own origin and score line;
``history`` is the match's reruns and accepts in time order.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from runner.domain.disputes import DisputeLog
from runner.domain.match_record import MatchRecord
from runner.domain.match_values import MatchResult


def result_line(m: MatchRecord, result: MatchResult) -> str:
    """``"2-0"``, ``"1-1 (1 draw)"`` for any result of ``m`` (not only the official one)."""
    return replace(m, result=result, state="done").result_text()


def official_origin(m: MatchRecord, log: DisputeLog) -> dict[str, Any] | None:
    if m.result is None or not m.stored:
        return None
    kept = [r for r in log.results.get(m.match_id, ()) if r.status == "official"]
    if kept:
        return log.origin(m.match_id, kept[-1].attempt)
    return {"how": "played", "attempt": m.attempt, "worker": m.worker, "at": m.finished_at}


def superseded_results(m: MatchRecord, log: DisputeLog) -> list[dict[str, Any]]:
    kept = log.superseded(m.match_id)
    if kept:
        return [
            {
                **log.origin(m.match_id, r.attempt),
                "result": result_line(m, r.result),
                "winners": [g.winner for g in r.result.games],
            }
            for r in kept
        ]
    # superseded before runs kept a dispute log: the results alone
    return [
        {"how": "unknown", "result": result_line(m, r), "winners": [g.winner for g in r.games]}
        for r in m.superseded
    ]


def dispute_fields(m: MatchRecord, log: DisputeLog) -> dict[str, Any]:
    """The history fields of one stored match (``matches --json``)."""
    return {
        "disputed": log.disputed(m.match_id) or bool(m.superseded),
        "official_result": official_origin(m, log),
        "superseded_results": superseded_results(m, log),
        "history": log.history(m.match_id),
    }


def origin_text(origin: dict[str, Any] | None) -> str:
    """One line for the HTML page and the terminal."""
    if origin is None:
        return ""
    if origin.get("how") != "accepted":
        return f"played: attempt {origin.get('attempt')} on {origin.get('worker') or '?'}"
    replaced = origin.get("replaces_attempt")
    code = {"adopt": "; code adopted", "keep": "; recorded code kept"}.get(str(origin.get("code_choice")), "")
    return (
        f"accepted candidate {origin.get('candidate')} (attempt {origin.get('attempt')}) "
        f"by {origin.get('by')}: {origin.get('reason')}"
        + (f"; replaced attempt {replaced}" if replaced is not None else "")
        + code
    )


__all__ = ["dispute_fields", "official_origin", "origin_text", "result_line", "superseded_results"]
