"""What the organiser reads in the terminal: standings, rounds, ranking, replays."""

from __future__ import annotations

import dataclasses
import io
import re

import pytest
from rich.console import Console

from runner.domain.stages.base import StandingRow
from runner.report.brackets import bracket_rounds
from runner.report.model import ReportData
from runner.report.replay import replay_game
from runner.report.terminal import (
    print_elimination_rounds,
    print_final_ranking,
    print_replay,
    print_stage_standings,
    print_summary,
)
from tests.report.synth import pousse_tournament


def record(fn: object, data: ReportData, *args: object) -> str:
    console = Console(width=220, record=True, color_system=None, file=io.StringIO())
    assert callable(fn)
    fn(data, *args, console) if args else fn(data, console)
    return console.export_text()


def test_standings_table_shows_the_numbers_of_every_row(pousse_data: ReportData) -> None:
    text = record(print_stage_standings, pousse_data)
    for stage in pousse_data.stages:
        assert f"Stage {stage.name} ({stage.planner})" in text
        ratings = pousse_data.stage_ratings(stage.name)
        for r in stage.standings:
            numbers = [
                r.rank,
                r.games,
                r.wins,
                r.ties,
                r.losses,
                f"{r.points:g}",
                r.score,
                r.verdicts_against,
            ]
            pattern = (
                r"\s+│\s+".join(re.escape(str(x)) for x in numbers[:1]) + r"\s+│\s+" + re.escape(r.entry)
            )
            pattern += r"\s+│\s+" + r"\s+│\s+".join(re.escape(str(x)) for x in numbers[1:])
            assert re.search(pattern, text), f"row of {r.entry} in {stage.name} not found"
            assert ratings.label(r.entry) in text
    assert "Elo ± 95%" in text


def test_openskill_column_for_multiplayer_stages(boxing_data: ReportData) -> None:
    text = record(print_stage_standings, boxing_data)
    assert "openskill mu ± sigma (ordinal)" in text
    assert "Elo" not in text


def test_elimination_rounds_list_pairings_results_and_byes_per_bracket(pousse_data: ReportData) -> None:
    text = record(print_elimination_rounds, pousse_data)
    stage = pousse_data.stage("elimination")
    assert stage is not None
    rounds = bracket_rounds(pousse_data, stage)
    assert [r.round for r in rounds] == [1, 2]
    assert "Round 1, winners bracket" in text
    assert "Round 2, winners bracket" in text
    assert "Round 2, losers bracket" in text
    for rnd in rounds:
        for sec in rnd.sections:
            for bm in sec.matches:
                assert bm.match.match_id in text
                assert " vs ".join(f"{p} ({stage.entrants.index(p) + 1})" for p in bm.match.players) in text
                assert bm.match.result_text() in text
            for bye in sec.byes:
                assert f"bye: {bye} ({stage.entrants.index(bye) + 1})" in text
    # round 1 losers drop to the losers bracket
    assert "drops to losers" in text
    # seeding and final are not elimination stages
    assert "Stage final" not in text


def test_knockout_rounds_say_who_advances(mnk_data: ReportData) -> None:
    text = record(print_elimination_rounds, mnk_data)
    assert "Round 1, bracket" in text and "Round 2, bracket" in text
    final = mnk_data.matches[-1]
    assert final.leaders()[0] + " advances" in text


def test_final_ranking_in_order_with_overall_ratings(pousse_data: ReportData) -> None:
    text = record(print_final_ranking, pousse_data)
    ranking = pousse_data.tournament.final_ranking
    positions = [text.index(f" {e} ") for e in ranking]
    assert positions == sorted(positions)
    assert "(all games)" in text


def test_unfinished_tournament_says_so() -> None:
    from tests.report.synth import pousse_tournament

    data = pousse_tournament(finished=False)
    text = record(print_summary, data)
    assert "Tournament not finished" in text
    assert "Stage final (round_robin): running: no standings yet (0/6 matches done)" in text


def test_replay_prints_every_position_with_player_time_and_verdict(boxing_data: ReportData) -> None:
    m, k, g = next((m, k, g) for m, k, g in boxing_data.games() if g.verdict.kind.value != "normal")
    text = record(print_replay, boxing_data, m, k)
    replay = replay_game(boxing_data.game, boxing_data.boards[m.board_id], g)
    assert not replay.stopped
    for step in replay.steps:
        mv = step.record
        line = f"move {step.number}/{len(g.moves)}: {mv.player} ({step.mark}) plays {mv.move}"
        assert f"{line}  [{mv.wall_ms:.1f} ms]" in text
    last = boxing_data.game.render(replay.states[-1])
    assert last.rstrip("\n") in text
    assert f"verdict {g.verdict.kind.value} against {g.verdict.player}" in text
    assert "forfeited and left the rotation" in text  # the charged seat left, the others played on


def test_entry_names_are_printed_literally(pousse_data: ReportData) -> None:
    stage = pousse_data.stages[0]
    odd = dataclasses.replace(stage.standings[0], entry="[bold]x[/bold]")
    rows: list[StandingRow] = [odd, *stage.standings[1:]]
    data = dataclasses.replace(pousse_data)
    data.tournament = dataclasses.replace(
        pousse_data.tournament, stages=[dataclasses.replace(stage, standings=rows)]
    )
    text = record(print_stage_standings, data)
    assert "[bold]x[/bold]" in text


#: 1998-style entry names, the longest 27 characters: at 80 columns the old table cut them all
LONG_NAMES = (
    "Bit Bucket Brigade Pousse",
    "Team Cannonball (v3 final)",
    "Judge Dredd's Last Stand II",
    "pousse-minimax-alphabeta",
    "LambdaCats",
    "random",
)


@pytest.mark.parametrize("width", [60, 80, 120])
def test_standings_keep_every_entry_name_whole_at_any_width_from_60(width: int) -> None:
    data = pousse_tournament(entries=LONG_NAMES)
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    print_stage_standings(data, console)
    print_final_ranking(data, console)
    text = console.export_text()
    assert max(len(line) for line in text.splitlines()) <= width
    stages = [s for s in data.stages if s.standings]
    assert len(stages) >= 2
    for stage in stages:
        for r in stage.standings:
            # the whole name on one line of its row, with the points beside it
            assert re.search(rf"│ {re.escape(r.entry)}\s+│.*\b{re.escape(_points(r.points))}\b", text), (
                width,
                r.entry,
            )
    assert text.count("Judge Dredd's Last Stand II") >= len(stages) + 1  # and in the final ranking


def test_narrow_standings_drop_the_tiebreaks_and_counts_first() -> None:
    data = pousse_tournament(entries=LONG_NAMES)
    wide = Console(width=200, record=True, color_system=None, file=io.StringIO())
    narrow = Console(width=60, record=True, color_system=None, file=io.StringIO())
    print_stage_standings(data, wide)
    print_stage_standings(data, narrow)
    wide_text, narrow_text = wide.export_text(), narrow.export_text()
    assert {"verdicts", "Elo ± 95%", "seed", "score"} <= _headers(wide_text)
    assert _headers(narrow_text) & {"verdicts", "Elo ± 95%", "seed", "score"} == set()
    assert {"#", "entry", "points"} <= _headers(narrow_text)


def _headers(text: str) -> set[str]:
    """The header cells of every table in ``text`` (the lines between ┃ bars)."""
    return {c.strip() for line in text.splitlines() if line.startswith("┃") for c in line.split("┃")} - {""}


def _points(x: float) -> str:
    return f"{x:g}"
