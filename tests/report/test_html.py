"""The HTML report: self-contained, complete, and its replays match the referee."""

from __future__ import annotations

import dataclasses
import json
import re
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import pytest

from runner.report import site
from runner.report.boards import grid_of
from runner.report.entry_view import replay_key
from runner.report.html import render_report
from runner.report.model import ReportData
from runner.report.replay import replay_game
from tests.report.synth import pousse_tournament


class Tables(HTMLParser):
    """Cell texts of every ``<table>`` row, grouped by the table's class."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[tuple[str, list[list[str]]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append((dict(attrs).get("class") or "", []))
        elif tag == "tr" and self.tables:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append("".join(self._cell).strip())
            self._cell = None
        elif tag == "tr" and self._row is not None:
            self.tables[-1][1].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def tables(page: str, cls: str) -> list[list[list[str]]]:
    p = Tables()
    p.feed(page)
    return [rows for c, rows in p.tables if cls in c.split()]


def replay_data(page: str) -> dict[str, Any]:
    m = re.search(r'<script type="application/json" id="replay-data">(.*?)</script>', page, re.S)
    assert m is not None
    doc: dict[str, Any] = json.loads(m.group(1))
    return doc


@pytest.fixture(scope="module")
def pousse_page(pousse_data: ReportData) -> str:
    return render_report(pousse_data, generated="2024-05-01 12:00:00 UTC")


def test_the_page_is_self_contained(pousse_page: str, boxing_data: ReportData) -> None:
    for page in (pousse_page, render_report(boxing_data)):
        assert "http://" not in page and "https://" not in page
        assert "<link" not in page and "@import" not in page
        for src in re.findall(r"""\bsrc\s*=\s*["']?([^"'\s>]*)""", page):
            assert src.startswith("data:"), src
        for url in re.findall(r"url\(([^)]*)\)", page):
            assert url.strip("'\"").startswith("data:"), url


def test_overview_names_tournament_game_counts_and_verdicts(
    pousse_page: str, pousse_data: ReportData
) -> None:
    assert "<h1>pousse-demo</h1>" in pousse_page
    assert "game <b>pousse</b>" in pousse_page and "sandbox <b>bwrap</b>" in pousse_page
    assert "started 2024-05-01T10:00:00Z" in pousse_page
    games = sum(len(m.games) for m in pousse_data.matches)
    assert f'<div class="n">{games}</div><div class="l">games</div>' in pousse_page
    verdict_rows = {r[0]: int(r[1]) for r in tables(pousse_page, "verdicts")[0][1:]}
    assert verdict_rows == dict(pousse_data.verdict_counts())
    assert 'id="sandbox-warning"' not in pousse_page


def test_sandbox_none_shows_a_warning(boxing_data: ReportData) -> None:
    page = render_report(boxing_data)
    assert 'id="sandbox-warning"' in page
    assert "Sandbox disabled" in page


def test_every_stage_standings_table_has_the_numbers(pousse_page: str, pousse_data: ReportData) -> None:
    standings = tables(pousse_page, "standings")
    assert len(standings) == len(pousse_data.stages)
    for rows, stage in zip(standings, pousse_data.stages, strict=True):
        ratings = pousse_data.stage_ratings(stage.name)
        header, body = rows[0], rows[1:]
        assert header[:9] == [
            "#",
            "entry",
            "games",
            "wins",
            "ties",
            "losses",
            "points",
            "score",
            "verdicts against",
        ]
        assert header[9] == "Elo ± 95%"
        for cells, r in zip(body, stage.standings, strict=True):
            assert cells[:9] == [
                str(r.rank),
                r.entry,
                str(r.games),
                str(r.wins),
                str(r.ties),
                str(r.losses),
                f"{r.points:g}",
                str(r.score),
                str(r.verdicts_against),
            ]
            assert cells[9] == ratings.label(r.entry)


def test_bracket_diagram_has_every_round_bracket_and_bye(pousse_page: str, pousse_data: ReportData) -> None:
    stage = pousse_data.stage("elimination")
    assert stage is not None
    section = pousse_page[pousse_page.index('id="stage-elimination"') : pousse_page.index('id="stage-final"')]
    assert '<div class="bracket">' in section
    rows = dict(
        re.findall(r'data-bracket="(\w*)">(.*?)(?=data-bracket=|<details class="matches")', section, re.S)
    )
    assert set(rows) == {"winners", "losers"}
    for row in rows.values():
        assert "Round 1" in row and "Round 2" in row  # rounds as columns in each bracket
    for info in stage.rounds:
        for mid in info.match_ids:
            assert f'href="#m-{mid}"' in section  # each match box links to its games
        for bye in info.byes:
            assert f'<div class="bye">bye: {bye}</div>' in section
    assert "drops to losers" in section
    # non-elimination stages draw no bracket
    assert pousse_page.count('<div class="bracket">') == 1


def test_every_match_is_listed_with_its_games(pousse_page: str, pousse_data: ReportData) -> None:
    for m in pousse_data.matches:
        assert f'id="m-{m.match_id}"' in pousse_page
        for k in range(1, len(m.games) + 1):
            assert f'data-key="{replay_key(m.match_id, k)}"' in pousse_page
    for v in (g.verdict for _, _, g in pousse_data.games()):
        if v.kind.value != "normal":
            assert f"{v.kind.value}: {v.player}" in pousse_page


@pytest.mark.parametrize("fixture", ["pousse_data", "boxing_data", "mnk_data"])
def test_replays_step_to_the_referees_positions(fixture: str, request: pytest.FixtureRequest) -> None:
    data: ReportData = request.getfixturevalue(fixture)
    replays = replay_data(render_report(data))
    assert len(replays) == sum(len(m.games) for m in data.matches)
    for m, k, g in data.games():
        r = replays[replay_key(m.match_id, k)]
        assert len(r["steps"]) == len(g.moves) and r["moves"] == len(g.moves)
        assert r["names"] == g.order
        referee = replay_game(data.game, data.boards[m.board_id], g)
        cells = list(r["start"])
        for step, state in zip(r["steps"], referee.states[1:], strict=True):
            changes = step[3]
            for i in range(0, len(changes), 3):
                start, length, ch = changes[i : i + 3]
                cells[start : start + length] = ch * length
            assert "".join(cells) == grid_of(data.game, state, len(g.order)).cells
        assert r["verdict"] == g.verdict.kind.value
        assert r["end"] == referee.ending()


def test_large_runs_embed_replays_for_the_last_stages_first(pousse_data: ReportData) -> None:
    page = render_report(pousse_data, replay_max_games=5)
    replays = replay_data(page)
    assert len(replays) == 5
    final_ids = {m.match_id for m in pousse_data.stage_matches("final")}
    assert {k.split(":")[0] for k in replays} <= final_ids
    assert "replays embedded for 5 of 12 games" in page
    assert "replays embedded for 0 of 30 games" in page  # seeding
    # a game without an embedded replay names the command that prints it
    m = pousse_data.stage_matches("seeding")[0]
    assert f"tourney replay RUN {m.match_id} --game 1" in page


def test_names_are_escaped_in_markup_and_in_replay_json() -> None:
    data = pousse_tournament()
    evil = "<script>alert(1)</script>"
    stage = data.stages[0]
    rows = [dataclasses.replace(stage.standings[0], entry=evil), *stage.standings[1:]]
    data.tournament.stages[0] = dataclasses.replace(stage, standings=rows)
    m = data.matches[0]
    g = m.games[0]
    renamed = dataclasses.replace(
        g,
        order=[evil, g.order[1]],
        moves=[
            dataclasses.replace(mv, player=evil if mv.player == g.order[0] else mv.player) for mv in g.moves
        ],
    )
    assert m.result is not None
    result = dataclasses.replace(m.result, games=[renamed, *m.games[1:]])
    data.matches[0] = dataclasses.replace(m, result=result)
    page = render_report(data)
    assert evil not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert page.count("</script>") == 2  # the replay JSON and the viewer code, nothing else
    assert evil in replay_data(page)[replay_key(m.match_id, 1)]["names"]


def test_write_report_writes_one_file(
    tmp_path: Path, mnk_data: ReportData, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(site, "load_report_data", lambda run_dir: mnk_data)
    out = tmp_path / "sub" / "report.html"
    site.write_report(tmp_path, out)
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert [p.name for p in out.parent.iterdir()] == ["report.html"]


def test_potm_elimination_bracket_from_the_real_planner(potm_data: ReportData) -> None:
    page = render_report(potm_data)
    stage = potm_data.stage("elimination")
    assert stage is not None and stage.status == "done"
    section = page[page.index('id="stage-elimination"') : page.index('id="stage-final"')]
    rows = dict(
        re.findall(r'data-bracket="(\w*)">(.*?)(?=data-bracket=|<details class="matches")', section, re.S)
    )
    assert set(rows) == {"winners", "losers"}
    for info in stage.rounds:
        row = rows[info.bracket]
        assert f"Round {info.round}" in row
        for mid in info.match_ids:
            assert f'href="#m-{mid}"' in row
        for bye in info.byes:
            assert f'<div class="bye">bye: {bye}</div>' in row
    assert any(info.byes for info in stage.rounds)  # 13 entrants: odd brackets
    # everyone who advanced shows up, in the final stage's standings
    final = tables(page, "standings")[-1]
    assert {r[1] for r in final[1:]} == set(stage.advancing)


def test_entry_panels_list_each_entrys_games_and_the_standings_link_to_them(potm_data: ReportData) -> None:
    from runner.report.entry_view import entry_anchor, entry_views

    page = render_report(potm_data)
    views = entry_views(potm_data, set())
    assert [v.entry for v in views] == potm_data.entries
    for v in views:
        games = [(m.match_id, k) for m, k, g in potm_data.games() if v.entry in g.order]
        assert [(g.match.match_id, g.number) for g in v.games] == games
        assert f'<details class="entry" id="{v.anchor}"' in page
        assert f'<a class="entry-link" href="#{v.anchor}">{v.entry}</a>' in page
    # anchors are ids: one per name, never shared, whatever characters a name holds
    names = ["a b", "a_b", "a.20.b", "a-b", "é", "a~1"]
    anchors = [entry_anchor(n) for n in names]
    assert len(set(anchors)) == len(names) and all(a.startswith("e-") and " " not in a for a in anchors)
