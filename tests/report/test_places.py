"""Shared final places reach the terminal, the HTML report and the exports as '=N' with their rule;
ratings sit beside the contest's ranking, titled as ratings."""

from __future__ import annotations

import csv
import io
import json
from dataclasses import replace

import pytest
from rich.console import Console

from runner.domain.stages.places import Place
from runner.report.exports import standings_csv, standings_json
from runner.report.html import render_report
from runner.report.model import ReportData
from runner.report.terminal import print_final_ranking

RULE = "tied on wins, head_to_head in stage phase2; no later rule of this contest separates them"


@pytest.fixture
def shared(pousse_data: ReportData) -> ReportData:
    order = pousse_data.tournament.final_ranking
    places = [Place(1, order[0], True, "phase2", {"wins": 3.0}, RULE)]
    places.append(Place(1, order[1], True, "phase2", {"wins": 3.0}, RULE))
    places += [Place(i, e, False, "phase2", {"wins": 1.0}) for i, e in enumerate(order[2:], 3)]
    return replace(pousse_data, tournament=replace(pousse_data.tournament, final_places=places))


def test_terminal_marks_the_shared_place_and_its_rule(shared: ReportData) -> None:
    console = Console(record=True, width=200)
    print_final_ranking(shared, console)
    text = console.export_text()
    order = shared.tournament.final_ranking
    assert any(
        line.split("│")[1].strip() == "=1" and order[1] in line for line in text.splitlines() if "│" in line
    )
    assert f"=1 shared by {order[0]}, {order[1]}: {RULE}" in text
    assert "rating: Elo ± 95% (all games)" in text
    assert "phase2: wins 3" in text


def test_exports_carry_the_shared_place(shared: ReportData) -> None:
    rows = list(csv.DictReader(io.StringIO(standings_csv(shared))))
    first = shared.tournament.final_ranking[0]
    mine = [r for r in rows if r["entry"] == first]
    assert mine and all(r["final_place"] == "=1" and r["final_tie_rule"] == RULE for r in mine)
    doc = json.loads(standings_json(shared))
    assert [p["label"] for p in doc["final_places"][:3]] == ["=1", "=1", "3"]
    assert doc["final_places"][0]["tie_rule"] == RULE


def test_html_report_marks_the_shared_place(shared: ReportData) -> None:
    html = render_report(shared)
    assert '<td class="num">=1</td>' in html
    assert RULE in html
