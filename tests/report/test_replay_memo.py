"""Replays computed while a run plays (runner.report.replay_memo): the page is the same."""

from __future__ import annotations

import dataclasses

from runner.report.html import game_replay_doc, render_report
from runner.report.model import ReportData
from runner.report.replay_memo import ReplayMemo, ReplayWarmer, memo_key

GENERATED = "2024-05-01 12:00:00 UTC"


def warmed(data: ReportData) -> ReplayMemo:
    """What ``tourney run``'s warmer holds once every result of ``data`` was accepted."""
    warmer = ReplayWarmer(ReplayMemo())
    for m in data.matches:
        if m.games:
            warmer.add(data.game_name, data.game_params, data.boards.get(m.board_id, ""), m.games)
    return warmer.close(30.0)


def test_a_report_with_replays_computed_ahead_is_the_same_page(
    pousse_data: ReportData, boxing_data: ReportData, mnk_data: ReportData
) -> None:
    for data in (pousse_data, boxing_data, mnk_data):
        memo = warmed(data)
        games = sum(len(m.games) for m in data.matches)
        assert len(memo) == min(games, memo.max_docs)
        page = render_report(data, generated=GENERATED, ahead=memo)
        assert memo.hits > 0 and memo.misses == 0
        assert page == render_report(data, generated=GENERATED)


def test_a_document_is_used_only_for_the_record_it_was_made_from(mnk_data: ReportData) -> None:
    """The key covers the game, its parameters, the board and the whole record: a record that
    differs in anything (here one move's time) is computed afresh, never taken from the memo."""
    m = next(m for m in mnk_data.matches if m.games and m.games[0].moves)
    record = m.games[0]
    board = mnk_data.boards.get(m.board_id, "")
    key = memo_key(mnk_data.game_name, mnk_data.game_params, board, record)
    memo = ReplayMemo()
    memo.put(key, {"planted": True})
    slower = dataclasses.replace(record.moves[0], wall_ms=record.moves[0].wall_ms + 1.0)
    changed = dataclasses.replace(record, moves=[slower, *record.moves[1:]])
    for other in (
        memo_key(mnk_data.game_name, mnk_data.game_params, board, changed),
        memo_key(mnk_data.game_name, {**mnk_data.game_params, "x": 1}, board, record),
        memo_key(mnk_data.game_name, mnk_data.game_params, board + "\n", record),
        memo_key("another-game", mnk_data.game_params, board, record),
    ):
        assert memo.get(other) is None
    assert memo.get(key) == {"planted": True}
    assert game_replay_doc(mnk_data.game, board, record) != {"planted": True}


def test_the_memo_keeps_the_latest_documents_within_its_limits() -> None:
    memo = ReplayMemo(max_docs=3, max_chars=10_000)
    keys = [("g", "{}", "b", str(i).encode()) for i in range(5)]
    for i, key in enumerate(keys):
        memo.put(key, {"i": i})
    assert len(memo) == 3
    assert memo.get(keys[0]) is None and memo.get(keys[1]) is None
    assert [memo.get(k) for k in keys[2:]] == [{"i": 2}, {"i": 3}, {"i": 4}]
    small = ReplayMemo(max_docs=100, max_chars=40)
    for key in keys:
        small.put(key, {"pad": "x" * 8})  # 18 characters of JSON each: two fit
    assert len(small) == 2 and small.get(keys[4]) is not None


def test_a_result_that_cannot_be_replayed_leaves_nothing_and_the_warmer_goes_on(
    mnk_data: ReportData,
) -> None:
    m = next(m for m in mnk_data.matches if m.games)
    board = mnk_data.boards.get(m.board_id, "")
    warmer = ReplayWarmer(ReplayMemo())
    warmer.add("no-such-game", {}, board, m.games)  # logged, skipped
    warmer.add(mnk_data.game_name, mnk_data.game_params, board, m.games)
    memo = warmer.close(30.0)
    assert len(memo) == len(m.games)


def test_a_warmer_stops_taking_results_beyond_its_limit(mnk_data: ReportData) -> None:
    m = next(m for m in mnk_data.matches if len(m.games) >= 2)
    board = mnk_data.boards.get(m.board_id, "")
    warmer = ReplayWarmer(ReplayMemo(), max_warmed=len(m.games) + 1)
    warmer.add(mnk_data.game_name, mnk_data.game_params, board, m.games)
    warmer.add(mnk_data.game_name, mnk_data.game_params, board, m.games)  # over the limit: dropped
    assert warmer.handed == len(m.games)
    assert len(warmer.close(30.0)) == len(m.games)
