"""Failed matches are counted as failed, never as done (store counts, progress line, report view)."""

from __future__ import annotations

from pathlib import Path

from runner.domain.match_record import MatchRecord
from runner.domain.match_values import MatchPlan
from runner.report.progress import ProgressSnapshot, StageProgress, plain_line
from runner.storage.store import RunStore
from tests.store.test_store import error_result, plan, result


def test_store_counts_a_failed_match_apart(tmp_path: Path) -> None:
    with RunStore.create(tmp_path / "run", {"name": "t", "run_id": "r1"}) as store:
        plan(store, "m1", "m2")
        for mid in ("m1", "m2"):
            store.dispatch(mid)
        store.accept("m1", 1, result("m1"), attempt_cap=1)
        assert store.accept("m2", 1, error_result("m2"), attempt_cap=1).status == "failed"
        assert store.stage_counts() == {"rr": (1, 2)}
        assert store.counts().get("failed") == 1


def test_progress_line_shows_failed_matches_and_quarantined_workers() -> None:
    snap = ProgressSnapshot(
        stages=[StageProgress("rr", 5, 45, "running")],
        games_done=10,
        moves_done=100,
        elapsed_s=3.0,
        failed=40,
        quarantined=("broken-1",),
    )
    line = plain_line(snap, None, None)
    assert "matches 5/45" in line and "FAILED 40" in line and "quarantined broken-1" in line


def test_a_failed_match_view_is_not_finished() -> None:
    plan = MatchPlan("rr", 0, "", 0, ("a", "b"), "b", (("a", "b"),), match_id="m")
    view = MatchRecord(plan, state="failed", result=error_result("m"))
    assert view.games and view.failed and not view.finished
