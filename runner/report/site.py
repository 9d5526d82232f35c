"""Writing the HTML report: one self-contained page, or for a large run a page plus data files.

A run of up to ``SPLIT_ABOVE_MATCHES`` matches gets the single file of
``runner.report.html``: everything inline, mailable. Above that one page
would be tens of megabytes (8.6 MB and ~210k elements at 4,950 matches), so
the report is split::

    report.html          overview, final ranking, every stage's standings and bracket
    report-data/         next to it, named after it (<stem>-data/)
      matches-S-P.js     page P of stage S's match list (PAGE_SIZE matches, rendered HTML)
      replays-S-P.js     the replays of that page's games (when it has any)
      index-S.js         stage S's matches (id, label, page) for the search box
      standings-S.js     stage S's whole standings table, when it has over STANDINGS_ROWS rows
      bracket-S.js       stage S's whole bracket, when it has over BRACKET_BOXES boxes
      final.js           the whole final ranking, when it is longer than the page shows
      entry-e-NAME.js    one entry's panel: all its games (runner.report.entry_view)

The page holds the first ``STANDINGS_ROWS`` rows of each stage's standings
and of the final ranking (and of the verdicts by entry), the first
``SHARED_LINES`` shared-place notes, and the last rounds of each bracket
(``BRACKET_BOXES``), so a 10,000-entry field opens as quickly as a small one;
"show all" buttons load the rest. It loads nothing until asked: opening a stage's match list loads its
first page, the pager and the search box load others, a bracket box loads
the page holding its match, a replay button that page's replays. Data files
are scripts that hand their payload to ``tourneyReport.loaded(name, payload)``
and are loaded by inserting ``<script src>`` elements: browsers refuse
``fetch()`` of ``file://`` URLs, and the report must work offline from the
run directory.

Both layouts render a match row with the same macro
(``templates/_match_row.html.j2``), so a match looks the same in either.
In the split layout replays are not in the page, so a larger budget applies
(``SPLIT_REPLAY_*``): replaying every game of a 100,000-game run through the
referee would take minutes; the rest print with ``tourney replay``.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from runner.domain.stages.places import place_labels
from runner.report.brackets import BracketRound
from runner.report.entry_view import entry_views
from runner.report.exports import write_text
from runner.report.html import (
    StageView,
    environment,
    render_page,
    render_report,
    run_dir_label,
    select_replays,
    stage_views,
)
from runner.report.loader import load_report_data
from runner.report.model import ReportData
from runner.report.replay_memo import ReplayMemo
from runner.report.terminal import final_places_of, shared_place_lines

#: above this many matches the report is a page plus data files
SPLIT_ABOVE_MATCHES = 1_000
#: matches per page of a stage's match list
PAGE_SIZE = 100
#: standings rows in the page per stage; a larger field's full table is a data file ("show all")
STANDINGS_ROWS = 200
#: shared-place notes under the final ranking in the page (a large field ties often)
SHARED_LINES = 20
#: bracket boxes drawn in the page per stage: the last rounds that fit (at least the last round);
#: the whole bracket is a data file ("show all rounds")
BRACKET_BOXES = 256
#: replays cost about a millisecond per game to compute: 10,000 keeps a 50,000-match report
#: within a minute (the single page: 3,000)
SPLIT_REPLAY_BUDGET_CHARS = 40_000_000
SPLIT_REPLAY_MAX_GAMES = 10_000
#: a file in every data directory this module writes: only such a directory is ever replaced or removed
MARKER = ".tourney-report-data"

Layout = Literal["auto", "single", "split"]


@dataclass(frozen=True)
class SplitLayout:
    """Where a split report's data lives and how its match lists are paged (read by the template)."""

    data_dir: str  # relative to the page: its URL prefix
    page_size: int
    pages: dict[str, int] = field(default_factory=dict)  # stage name -> number of pages
    page_of: dict[str, int] = field(default_factory=dict)  # match id -> its 1-based page in its stage
    standings_rows: int = STANDINGS_ROWS
    bracket_boxes: int = BRACKET_BOXES
    shared_lines: int = SHARED_LINES
    stage_pos: dict[str, int] = field(default_factory=dict)  # stage name -> its index (data file names)

    @classmethod
    def of(
        cls,
        stages: Iterable[StageView],
        data_dir: str,
        page_size: int = PAGE_SIZE,
        standings_rows: int = STANDINGS_ROWS,
        bracket_boxes: int = BRACKET_BOXES,
    ) -> SplitLayout:
        pages: dict[str, int] = {}
        page_of: dict[str, int] = {}
        stage_pos: dict[str, int] = {}
        for sv in stages:
            stage_pos[sv.stage.name] = len(stage_pos)
            pages[sv.stage.name] = -(-len(sv.matches) // page_size)
            for i, row in enumerate(sv.matches):
                page_of[row.match.match_id] = i // page_size + 1
        return cls(data_dir, page_size, pages, page_of, standings_rows, bracket_boxes, stage_pos=stage_pos)

    def bracket_rounds(self, sv: StageView) -> list[BracketRound]:
        """The rounds of ``sv``'s bracket drawn in the page: the last ones, within ``bracket_boxes``."""
        shown: list[BracketRound] = []
        boxes = 0
        for rnd in reversed(sv.brackets):
            boxes += sum(len(sec.matches) + len(sec.byes) for sec in rnd.sections)
            if shown and boxes > self.bracket_boxes:
                break
            shown.insert(0, rnd)
        return shown


def layout_named(name: str) -> Layout:
    """``auto``, ``single`` or ``split`` (the command line's ``--layout``); ``ValueError`` otherwise."""
    for known in ("auto", "single", "split"):
        if name == known:
            return known
    raise ValueError(f"unknown report layout {name!r} (auto, single, split)")


def data_dir_for(out: Path) -> Path:
    """The data directory of the page ``out``: ``report.html`` -> ``report-data/``."""
    return out.with_name(f"{out.stem}-data")


def choose_layout(data: ReportData, layout: Layout = "auto") -> Literal["single", "split"]:
    if layout != "auto":
        return layout
    return "split" if len(data.matches) > SPLIT_ABOVE_MATCHES else "single"


def write_html_report(
    data: ReportData,
    out: Path,
    *,
    layout: Layout = "auto",
    page_size: int = PAGE_SIZE,
    standings_rows: int = STANDINGS_ROWS,
    bracket_boxes: int = BRACKET_BOXES,
    generated: str | None = None,
    ahead: ReplayMemo | None = None,
) -> list[Path]:
    """Write the report to ``out`` (and its data directory when split); return the paths written.
    ``ahead``: replays computed while the run played (``runner.report.replay_memo``).

    A data directory left by an earlier split report of ``out`` is removed when
    the report is now a single page, so the two never disagree.
    """
    out = Path(out)
    data_dir = data_dir_for(out)
    if choose_layout(data, layout) == "single":
        write_text(out, render_report(data, generated=generated, ahead=ahead))
        _remove_data_dir(data_dir)
        return [out]
    replays = select_replays(data, SPLIT_REPLAY_BUDGET_CHARS, SPLIT_REPLAY_MAX_GAMES, ahead)
    stages = stage_views(data, set(replays))
    split = SplitLayout.of(stages, data_dir.name, page_size, standings_rows, bracket_boxes)
    staging = data_dir.with_name(f"{data_dir.name}.new-{os.getpid()}")
    _remove_data_dir(staging)
    staging.mkdir(parents=True)
    (staging / MARKER).write_text("written by tourney report; replaced with the report\n")
    try:
        _write_data_files(data, stages, replays, split, staging)
        _swap_in(staging, data_dir)
    finally:
        _remove_data_dir(staging)  # left only by a failure: the old data stays in place
    write_text(out, render_page(data, replays, stages, layout=split, generated=generated))
    return [out, data_dir]


def _write_data_files(
    data: ReportData,
    stages: list[StageView],
    replays: dict[str, dict[str, Any]],
    split: SplitLayout,
    into: Path,
) -> None:
    env = environment()
    row_macro = env.get_template("_match_row.html.j2").module.match_row  # type: ignore[attr-defined]
    standings_macro = env.get_template("_standings_row.html.j2").module.standings_row  # type: ignore[attr-defined]
    bracket_macro = env.get_template("_bracket.html.j2").module.bracket  # type: ignore[attr-defined]
    final = env.get_template("_final_row.html.j2").module
    entry_macro = env.get_template("_entry_panel.html.j2").module.entry_panel  # type: ignore[attr-defined]
    run_dir = run_dir_label(data)
    places = final_places_of(data)
    shared = shared_place_lines(places)
    if len(places) > split.standings_rows or len(shared) > split.shared_lines:
        overall = data.overall_ratings
        rows_html = "".join(str(final.final_row(p, overall)) for p in places)  # type: ignore[attr-defined]
        shared_html = "".join(str(final.shared_place_line(line)) for line in shared)  # type: ignore[attr-defined]
        _write_chunk(into, "final", {"rows": rows_html, "shared": shared_html})
    for si, sv in enumerate(stages):
        if len(split.bracket_rounds(sv)) < len(sv.brackets):
            _write_chunk(into, f"bracket-{si}", str(bracket_macro(sv, sv.brackets, split)))
        if len(sv.stage.standings) > split.standings_rows:
            labels = place_labels(sv.stage.groups)
            rows_html = "".join(str(standings_macro(r, sv, labels)) for r in sv.stage.standings)
            _write_chunk(into, f"standings-{si}", rows_html)
        index: list[list[object]] = []
        for p in range(split.pages[sv.stage.name]):
            rows = sv.matches[p * split.page_size : (p + 1) * split.page_size]
            page = p + 1
            html = "".join(str(row_macro(row, run_dir, data.disputes)) for row in rows)
            _write_chunk(into, f"matches-{si}-{page}", html)
            page_replays = {
                g.key: replays[g.key] for row in rows for g in row.games if g.embedded and g.key in replays
            }
            if page_replays:
                _write_chunk(into, f"replays-{si}-{page}", page_replays)
            for row in rows:
                m = row.match
                label = f"R{m.round}{' ' + m.bracket if m.bracket else ''} #{m.pairing + 1}: " + " vs ".join(
                    m.players
                )
                index.append([m.match_id, label, page])
        _write_chunk(into, f"index-{si}", index)
    for ev in entry_views(data, set(replays)):
        _write_chunk(into, f"entry-{ev.anchor}", str(entry_macro(ev, run_dir, split, True)))


def _write_chunk(into: Path, name: str, payload: object) -> None:
    """``name.js``: a script handing ``payload`` to the page (JSON is valid JavaScript;
    ``ensure_ascii`` also escapes U+2028/2029, which JavaScript strings cannot hold raw)."""
    text = json.dumps(payload, separators=(",", ":"), ensure_ascii=True)
    (into / f"{name}.js").write_text(f"tourneyReport.loaded({json.dumps(name)},{text});\n", encoding="utf-8")


def _swap_in(staging: Path, data_dir: Path) -> None:
    """Replace ``data_dir`` with ``staging`` (a reader sees the old or the new set, briefly neither)."""
    old = data_dir.with_name(f"{data_dir.name}.old-{os.getpid()}")
    if data_dir.exists():
        if not (data_dir / MARKER).exists():
            raise FileExistsError(f"{data_dir} exists and is not a report's data directory; not replacing it")
        data_dir.rename(old)
    staging.rename(data_dir)
    _remove_data_dir(old)


def _remove_data_dir(path: Path) -> None:
    """Remove a data directory this module wrote (it holds ``MARKER``); anything else is left alone."""
    if path.is_dir() and (path / MARKER).is_file():
        shutil.rmtree(path)


__all__ = [
    "PAGE_SIZE",
    "SPLIT_ABOVE_MATCHES",
    "SplitLayout",
    "choose_layout",
    "data_dir_for",
    "layout_named",
    "write_html_report",
]


def write_report(run_dir: Path, out: Path) -> None:
    """Load ``run_dir`` and write its report to ``out`` (atomically): one page, or for a
    large run a page plus its data files (``write_html_report``)."""
    write_html_report(load_report_data(run_dir), Path(out))
