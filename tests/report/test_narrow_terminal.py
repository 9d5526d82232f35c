"""The terminal at 80 columns (issue 38, item 5): the knockout rounds table and
`tourney matches RUN` show every entry name and every match id whole, and no row is
wrapped by the table or the terminal (names like lookahead, lookahead-f2 and
lookahead-quick were cut to "lookahead-…" and every listing line ran onto two lines).
"""

from __future__ import annotations

import io
import re
import sys

import pytest
from rich.console import Console

from runner.cli import main
from runner.commands import report as commands
from runner.report.brackets import bracket_rounds, is_bracket_stage
from runner.report.match_listing import listed_matches, listing_lines
from runner.report.model import ReportData
from runner.report.terminal import print_elimination_rounds
from tests.report.synth import mnk_knockout, pousse_tournament

LOOKAHEADS = (
    "lookahead",
    "lookahead-f2",
    "lookahead-quick",
    "lookahead-deep",
    "lookahead-defensive",
    "lookahead-attacking",
)


@pytest.fixture(scope="module")
def knockout() -> ReportData:
    return mnk_knockout(names=LOOKAHEADS[:4])


@pytest.fixture(scope="module")
def two_brackets() -> ReportData:
    """Round robin, a winners and losers bracket with a bye, and a final, among six lookaheads."""
    return pousse_tournament(entries=LOOKAHEADS)


def rounds_at(data: ReportData, width: int) -> str:
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    print_elimination_rounds(data, console)
    return console.export_text()


def table_bodies(text: str) -> list[list[str]]:
    """Each round table's body lines: from below its header rule to the next title or byes."""
    bodies: list[list[str]] = []
    body: list[str] | None = None
    for line in text.splitlines():
        if "━╇━" in line:
            body = []
            bodies.append(body)
        elif body is not None and "│" in line:
            body.append(line)
        else:
            body = None
    return bodies


@pytest.mark.parametrize("which", ["knockout", "two_brackets"])
def test_rounds_at_80_columns_show_every_name_and_id_whole_one_line_per_row(
    which: str, request: pytest.FixtureRequest
) -> None:
    data: ReportData = request.getfixturevalue(which)
    text = rounds_at(data, 80)
    assert "…" not in text
    assert all(len(line) <= 80 for line in text.splitlines())
    sections = [
        (stage, sec)
        for stage in data.stages
        if is_bracket_stage(stage)
        for rnd in bracket_rounds(data, stage)
        for sec in rnd.sections
    ]
    bodies = table_bodies(text)
    assert len(bodies) == len(sections)
    for (stage, sec), body in zip(sections, bodies, strict=True):
        # a line for each match and one for each of its players: no row took a second line
        assert len(body) == sum(1 + len(bm.match.players) for bm in sec.matches), body
        for bm in sec.matches:
            m = bm.match
            assert sum(m.match_id in line for line in body) == 1, m.match_id
            for p in m.players:
                seed = stage.entrants.index(p) + 1
                # the player's whole name, its seed, games won and outcome on one line
                won = m.game_wins()[p]
                pattern = rf"│\s+{re.escape(p)} \({seed}\)\s+│\s+{won}\s+│.*│ {re.escape(bm.outcome[p])}\s*$"
                assert any(re.search(pattern, line) for line in body), (p, body)


def test_rounds_keep_one_line_per_match_where_it_fits(knockout: ReportData) -> None:
    text = rounds_at(knockout, 160)
    stage = knockout.stages[0]
    for m in knockout.matches:
        pairing = " vs ".join(f"{p} ({stage.entrants.index(p) + 1})" for p in m.players)
        line = next(line for line in text.splitlines() if m.match_id in line)
        assert pairing in line and m.result_text() in line


def match_blocks(lines: list[str]) -> dict[str, list[str]]:
    """Each match's lines in the narrow listing: its own and the indented ones below it."""
    blocks: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in lines[1:]:
        first = line.split(" ", 1)[0]
        if re.fullmatch(r"[0-9a-f]{16}", first):
            current = blocks.setdefault(first, [])
            current.append(line)
        elif line.startswith(" ") and current is not None:
            current.append(line)
        else:  # a stage, round and bracket line
            current = None
    return blocks


def test_matches_listing_at_80_columns(two_brackets: ReportData) -> None:
    listed = listed_matches(two_brackets.matches)
    lines = listing_lines(listed, 80)
    assert all(len(line) <= 80 for line in lines), max(lines, key=len)
    blocks = match_blocks(lines)
    assert list(blocks) == [m.match_id for m in two_brackets.matches]  # every id whole, in plan order
    for m in two_brackets.matches:
        block = blocks[m.match_id]
        words = " ".join(block).split()
        for p in m.players:
            assert p in words, (p, block)  # whole, as a word of its own
        # the result on the id's line; a pairing that fits is on that line too
        assert f"  {m.result_text()}  " in block[0]
        x = next(x for x in listed if x.match is m)
        if not x.notes:
            assert len(block) == 1, block
            assert block[0].endswith(" vs ".join(m.players))
        else:
            assert all(v in " ".join(block) for v in m.verdicts())
    # each line under its stage, round and bracket
    assert "stage elimination, round 2, losers bracket" in lines
    assert sum(line.startswith("stage ") for line in lines) == 5


def test_matches_listing_cuts_a_long_pairing_between_names_only() -> None:
    data = mnk_knockout(
        names=("a-very-long-entry-name-number-one", "a-very-long-entry-name-number-two", "c", "d")
    )
    lines = listing_lines(listed_matches(data.matches), 60)
    assert all(len(line) <= 60 for line in lines)
    blocks = match_blocks(lines)
    for m in data.matches:
        words = " ".join(blocks[m.match_id]).split()
        assert all(p in words for p in m.players)


def test_matches_piped_keeps_every_column_one_line_per_match(
    two_brackets: ReportData, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(commands, "load_report_data", lambda run_dir: two_brackets)
    assert main(["matches", "RUN"]) == 0  # captured: not a terminal
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("match ") and lines[0].endswith("  state  att.  result")
    assert len(lines) == 1 + len(two_brackets.matches)
    assert max(map(len, lines)) > 80  # the full listing, for grep and awk


def test_matches_in_an_80_column_terminal(
    two_brackets: ReportData, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(commands, "load_report_data", lambda run_dir: two_brackets)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    monkeypatch.setenv("COLUMNS", "80")
    assert main(["matches", "RUN", "--stage", "elimination"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert all(len(line) <= 80 for line in lines)
    elimination = two_brackets.stage_matches("elimination")
    assert list(match_blocks(lines)) == [m.match_id for m in elimination]
