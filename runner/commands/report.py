"""``tourney matches | standings | replay | report``: reading a run directory.

Each handler loads the run once (``load_report_data``) and hands it to a
renderer. They only read: a run in progress can be inspected while the
coordinator writes (the store is SQLite in WAL mode). Exit codes: 0 done,
2 the run directory, stage, match or game asked for does not exist (a ``UsageError``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

from rich.text import Text

from runner.config import ConfigError
from runner.domain.inert import inert
from runner.errors import UsageError
from runner.report.entry_notes import stderr_notes, warning_lines
from runner.report.exports import (
    matches_records,
    standings_csv,
    standings_json,
    write_games_jsonl_file,
    write_text,
)
from runner.report.loader import load_report_data
from runner.report.match_listing import listed_matches, listing_lines
from runner.report.model import ReportData
from runner.report.terminal import (
    make_console,
    print_final_ranking,
    print_replay,
    print_stage_standings,
    print_workers,
)
from runner.storage.store import RunStore, StoreError
from runner.storage.verifications import Verifications


def _load(args: argparse.Namespace) -> ReportData:
    run_dir = Path(args.run_dir)
    if run_dir.exists() and not run_dir.is_dir():
        raise UsageError(f"{run_dir} is a file, not a run directory (give the directory `tourney run` made)")
    try:
        return load_report_data(run_dir)
    except (FileNotFoundError, StoreError, ConfigError) as e:
        raise UsageError(str(e)) from e


@contextlib.contextmanager
def _writing(option: str, path: str) -> Iterator[None]:
    """An output file that cannot be written is the user's to fix: one line, exit 2."""
    try:
        yield
    except OSError as e:
        blocker = next((p for p in Path(path).parents if p.exists() and not p.is_dir()), None)
        why = f"{blocker} is not a directory" if blocker is not None else (e.strerror or str(e))
        raise UsageError(f"{option} {path}: cannot write it: {why}") from None


# -- matches --------------------------------------------------------------------


def cmd_matches(args: argparse.Namespace) -> int:
    data = _load(args)
    stage = getattr(args, "stage", None)
    if stage and data.stage(stage) is None:
        known = ", ".join(s.name for s in data.stages)
        raise UsageError(f"no stage {stage!r} (stages: {known})")
    replays = {}
    if data.run_dir is not None:
        with RunStore.open(data.run_dir) as store:
            replays = Verifications(store).by_match()  # timing.verify_sample (docs/fleet.md)
    if args.json:
        records = matches_records(data, stage)
        for row in records:
            v = replays.get(str(row.get("match_id")))
            if v is not None:
                row["verification"] = {
                    "state": v.state, "played_by": v.played_by, "verifier": v.verifier, "detail": v.detail,
                }  # fmt: skip
        print(json.dumps(records, indent=2))
        return 0
    verified = {mid: v.text() for mid, v in replays.items()}
    listed = listed_matches(data.matches, stage, verified)
    # names, verdicts and stderr writers come from entries (and older runs' stores): inert
    lines = listing_lines(listed, _terminal_width())
    sys.stdout.write("".join(inert(line, one_line=True) + "\n" for line in lines))
    # on stderr: the listing stays one row per match for grep and awk
    for line in warning_lines(stderr_notes(data, stage), args.run_dir):
        print(inert(line), file=sys.stderr)
    return 0


def _terminal_width() -> int | None:
    """The terminal's width when stdout is one (the listing then fits it); piped: None, every
    column on one line per match."""
    return shutil.get_terminal_size().columns if sys.stdout.isatty() else None


# -- standings ------------------------------------------------------------------


def cmd_standings(args: argparse.Namespace) -> int:
    data = _load(args)
    if getattr(args, "csv", None):
        with _writing("--csv", args.csv):
            write_text(Path(args.csv), standings_csv(data))
    if args.json:
        print(standings_json(data))
    else:
        console = make_console()
        print_stage_standings(data, console)
        print_workers(data, console)
        print_final_ranking(data, console)
        if getattr(args, "csv", None):
            console.print(Text(f"wrote {args.csv}"))
    return 0


# -- replay ---------------------------------------------------------------------


def cmd_replay(args: argparse.Namespace) -> int:
    data = _load(args)
    try:
        match = data.find_match(args.match_id)
    except KeyError as e:
        raise UsageError(str(e.args[0])) from e
    if not match.games:
        raise UsageError(f"match {match.match_id} has no result yet (state {match.state})")
    k = int(getattr(args, "game", 1) or 1)
    if not 1 <= k <= len(match.games):
        raise UsageError(f"match {match.match_id} has games 1..{len(match.games)}, not {k}")
    print_replay(data, match, k, make_console())
    return 0


# -- report ---------------------------------------------------------------------


def cmd_report(args: argparse.Namespace) -> int:
    # local: jinja2 and the HTML writer; `tourney matches`, `standings` and `replay` start without them
    from runner.report.site import layout_named, write_html_report

    data = _load(args)
    html = getattr(args, "html", None)
    csv_path = getattr(args, "csv", None)
    json_path = getattr(args, "json", None)
    jsonl = getattr(args, "games_jsonl", None)
    if not any((html, csv_path, json_path, jsonl)):
        html = str(Path(args.run_dir) / "report.html")
    written = []
    if html:
        layout = layout_named(getattr(args, "layout", None) or "auto")
        with _writing("--html", html):
            written += [str(p) for p in write_html_report(data, Path(html), layout=layout)]
    if csv_path:
        with _writing("--csv", csv_path):
            write_text(Path(csv_path), standings_csv(data))
        written.append(csv_path)
    if json_path:
        with _writing("--json", json_path):
            write_text(Path(json_path), standings_json(data))
        written.append(json_path)
    if jsonl:
        with _writing("--games-jsonl", jsonl):
            n = write_games_jsonl_file(data, Path(jsonl))
        written.append(f"{jsonl} ({n} games)")
    for w in written:
        print(f"wrote {w}")
    return 0
