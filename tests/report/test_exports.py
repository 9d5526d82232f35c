"""Exports parse back and carry the numbers and transcripts."""

from __future__ import annotations

import csv
import io
import json

from runner.report.exports import (
    game_records,
    matches_records,
    standings_csv,
    standings_json,
    write_games_jsonl,
)
from runner.report.model import ReportData


def test_standings_csv_has_one_row_per_entry_per_stage(pousse_data: ReportData) -> None:
    rows = list(csv.DictReader(io.StringIO(standings_csv(pousse_data))))
    expected = [(s.name, r) for s in pousse_data.stages for r in s.standings]
    assert len(rows) == len(expected)
    for row, (stage, r) in zip(rows, expected, strict=True):
        assert row["stage"] == stage
        assert row["entry"] == r.entry
        assert int(row["rank"]) == r.rank
        assert (int(row["games"]), int(row["wins"]), int(row["ties"]), int(row["losses"])) == (
            r.games,
            r.wins,
            r.ties,
            r.losses,
        )
        assert float(row["points"]) == r.points
        assert int(row["score"]) == r.score
        assert int(row["verdicts_against"]) == r.verdicts_against
        elo = pousse_data.stage_ratings(stage).elo[r.entry]
        assert float(row["elo"]) == round(elo.elo, 1)
        assert float(row["elo_ci95"]) == round(elo.ci95, 1)
        assert row["mu"] == ""  # two-player stage: no openskill
        assert float(row["extra_seed"]) == r.extra["seed"]


def test_standings_json_parses_back_with_ratings(boxing_data: ReportData) -> None:
    doc = json.loads(standings_json(boxing_data))
    assert doc["tournament"] == "boxing-demo" and doc["game"] == "boxing"
    assert doc["final_ranking"] == boxing_data.tournament.final_ranking
    (stage_doc,) = doc["stages"]
    stage = boxing_data.stages[0]
    assert stage_doc["name"] == stage.name and stage_doc["rating"] == "openskill"
    rows = stage_doc["standings"]
    assert [r["entry"] for r in rows] == [r.entry for r in stage.standings]
    assert rows[0]["wins"] == stage.standings[0].wins
    skill = boxing_data.stage_ratings(stage.name).skill
    assert all(r["ordinal"] == round(skill[r["entry"]].ordinal, 3) and "elo" not in r for r in rows)


def test_games_jsonl_holds_every_game_with_a_transcript_that_replays(pousse_data: ReportData) -> None:
    buf = io.StringIO()
    n = write_games_jsonl(pousse_data, buf)
    lines = buf.getvalue().splitlines()
    assert n == len(lines) == sum(len(m.games) for m in pousse_data.matches)
    game = pousse_data.game
    for line, (m, k, g) in zip(lines, pousse_data.games(), strict=True):
        rec = json.loads(line)
        assert (rec["match_id"], rec["game"], rec["stage"], rec["round"], rec["bracket"]) == (
            m.match_id,
            k,
            m.stage,
            m.round,
            m.bracket,
        )
        assert rec["board_id"] == m.board_id
        assert rec["order"] == g.order and rec["winner"] == g.winner and rec["scores"] == g.scores
        assert rec["verdict"]["kind"] == g.verdict.kind.value
        assert [mv["move"] for mv in rec["moves"]] == [mv.move for mv in g.moves]
        assert all(mv["player"] in g.order and mv["wall_ms"] >= 0 for mv in rec["moves"])
        # the transcript alone replays to the recorded result
        state = game.new_game(pousse_data.boards[rec["board_id"]], 2)
        for mv in rec["moves"]:
            state = game.play(state, game.parse_move(mv["move"]))
        if rec["verdict"]["kind"] == "normal":
            out = game.outcome(state)
            assert out is not None and rec["order"][out.winners[0]] == rec["winner"]


def test_match_records_list_plan_and_result(mnk_data: ReportData) -> None:
    recs = matches_records(mnk_data)
    assert len(recs) == len(mnk_data.matches)
    first = recs[0]
    assert set(first) >= {
        "match_id",
        "stage",
        "round",
        "bracket",
        "pairing",
        "board_id",
        "orders",
        "state",
        "attempt",
        "result",
    }
    assert first["result"]["games"][0]["moves"] == len(mnk_data.matches[0].games[0].moves)
    m = mnk_data.matches[0]
    assert first["result"]["match_winner"] in (*m.players, None)
    assert first["state"] == "done" and first["attempt"] == 1
    assert json.loads(json.dumps(recs)) == recs
    assert len(list(game_records(mnk_data))) == 6
