"""Machine-readable exports: standings (CSV, JSON), matches (JSON), games (JSON Lines).

Standings are one row per entry per stage with the numbers behind the rank
and the stage's rating; the CSV flattens ``extra`` tiebreak values into
``extra_<name>`` columns. Games are one JSON object per line, each with its
full move transcript, so a 30,000-game run streams out without building one
huge document.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TextIO

from runner.domain.stages.common import completed
from runner.domain.stages.places import place_labels
from runner.domain.stages.tournament import match_row, standings_document
from runner.domain.wire import to_builtins
from runner.report.disputes import dispute_fields
from runner.report.model import ReportData

STANDINGS_COLUMNS = [
    "stage",
    "planner",
    "stage_status",
    "rank",
    "place",  # the rank as the contest's rules give it: "=2" for a shared place
    "entry",
    "games",
    "wins",
    "ties",
    "losses",
    "points",
    "score",
    "verdicts_against",
    "status",
    "final_place",  # the entry's place in the final ranking ("=1": shared), the same on each of its rows
    "final_tie_rule",  # for a shared final place: the rule that left it tied
]
RATING_COLUMNS = ["elo", "elo_ci95", "mu", "sigma", "ordinal"]


def standings_records(data: ReportData) -> list[dict[str, Any]]:
    """One dict per entry per stage (stages without standings give none)."""
    out: list[dict[str, Any]] = []
    final = {p.entry: p for p in data.tournament.final_places}
    for stage in data.stages:
        ratings = data.stage_ratings(stage.name)
        labels = place_labels(stage.groups)
        for row in stage.standings:
            fp = final.get(row.entry)
            rec: dict[str, Any] = {
                "stage": stage.name,
                "planner": stage.planner,
                "stage_status": stage.status,
                **{k: v for k, v in row.to_dict().items() if k != "extra"},
                "place": labels.get(row.entry, str(row.rank)),
                "final_place": fp.label if fp is not None else None,
                "final_tie_rule": fp.tie_rule if fp is not None and fp.shared else None,
            }
            rec.update(dict.fromkeys(RATING_COLUMNS))
            rec.update(ratings.fields(row.entry))
            rec["extra"] = dict(row.extra)
            out.append(rec)
    return out


def standings_json(data: ReportData) -> str:
    """``runner.domain.stages.tournament.standings_document`` (every stage's state, rounds
    and standings) plus the run's name and game, and each stage's ratings
    merged into its standings rows."""
    doc: dict[str, Any] = {
        "tournament": data.name,
        "game": data.game_name,
        "sandbox": data.sandbox,
        **standings_document(data.tournament),
    }
    if data.submissions:  # which upload of which team each entry is (docs/submissions.md)
        doc["submissions"] = data.submissions
    for stage in doc["stages"]:
        ratings = data.stage_ratings(stage["name"])
        stage["rating"] = ratings.kind
        for row in stage["standings"]:
            row.update(ratings.fields(row["entry"]))
    return json.dumps(doc, indent=2)


def standings_csv(data: ReportData) -> str:
    records = standings_records(data)
    extra_keys = sorted({k for r in records for k in r["extra"]})
    columns = STANDINGS_COLUMNS + RATING_COLUMNS + [f"extra_{k}" for k in extra_keys]
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for r in records:
        row = {k: r.get(k) for k in STANDINGS_COLUMNS + RATING_COLUMNS}
        row.update({f"extra_{k}": r["extra"].get(k) for k in extra_keys})
        writer.writerow({k: "" if v is None else v for k, v in row.items()})
    return buf.getvalue()


def matches_records(data: ReportData, stage: str | None = None) -> list[dict[str, Any]]:
    """Each match's ``runner.domain.stages.tournament.match_row`` (plan, board, seat orders, games
    and the match winner by the stage's rules) plus what the store knows of it: state,
    attempt, worker, superseded and candidate results, and how the official result became official
    with every result it superseded (``runner.report.disputes``; nothing for a match not stored yet)."""
    results = data.results()
    out = []
    for m in data.matches:
        if stage is not None and m.stage != stage:
            continue
        row = match_row(m.plan, completed(results, m.plan), data.config)
        if m.stored:
            row.update(
                state=m.state,
                attempt=m.attempt,
                worker=m.worker,
                superseded=len(m.superseded),
                candidates=len(m.candidates),
                **dispute_fields(m, data.disputes),
            )
        out.append(row)
    return out


def game_records(data: ReportData) -> Iterator[dict[str, Any]]:
    """Every finished game with its transcript, plan order."""
    for m, k, g in data.games():
        yield {
            "match_id": m.match_id,
            "stage": m.stage,
            "round": m.round,
            "bracket": m.bracket,
            "pairing": m.pairing,
            "board_id": m.board_id,
            "game": k,
            "order": list(g.order),
            "winner": g.winner,
            "scores": dict(g.scores),
            "verdict": to_builtins(g.verdict),
            "reason": g.reason,
            "stopped_by": g.stopped_by,  # "" or the bound that stopped the game ("max_moves", "wall")
            # only the fields an export shows (not an engine's search), written out: a million moves
            "moves": [
                {"player": mv.player, "move": mv.move, "wall_ms": mv.wall_ms, "cpu_ms": mv.cpu_ms}
                for mv in g.moves
            ],
        }


def write_games_jsonl(data: ReportData, out: TextIO) -> int:
    """Write every game as one JSON line; returns how many."""
    n = 0
    for rec in game_records(data):
        out.write(json.dumps(rec, separators=(",", ":")) + "\n")
        n += 1
    return n


def write_games_jsonl_file(data: ReportData, path: Path) -> int:
    """``write_games_jsonl`` into ``path`` (via a temporary file and rename); returns how many."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        n = write_games_jsonl(data, f)
    tmp.replace(path)
    return n


def write_text(path: Path, text: str) -> None:
    """Write via a temporary file and rename, so a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
