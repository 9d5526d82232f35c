"""The coordinator runs a round robin planned lazily (issue 13, item 3).

A real coordinator, a real SQLite run store, every result re-judged; matches are
played at once in-process (``bench.instant``). While it runs, the store and the
coordinator hold at most the window of unplayed matches (plus what the
dispatcher took in its last poll): never every pairing. The matches, in store
order, are the full enumeration's, and the run ends where the pure planner does,
also after a restart midway.
"""

from __future__ import annotations

import json
from itertools import combinations
from pathlib import Path

import pytest

from bench.instant import InstantDispatcher, instant_config
from runner.config import TournamentConfig
from runner.domain.stages import round_robin
from runner.domain.stages.base import TournamentState
from runner.domain.stages.tournament import advance, standings_document
from runner.orchestration.coordinator import Coordinator, SessionOutcome
from runner.orchestration.dispatcher import InboxNote, Timing
from runner.report.progress import ProgressSnapshot, RunProgress
from runner.storage.run_dir import ResumeRefused
from runner.storage.store import RunStore

WINDOW = 24
ENTRIES = 20  # 190 pairings, 380 matches on two boards: the window is a sixteenth of them
STAGE = {"name": "rr", "planner": "round_robin", "boards": ["ttt", "ttt2"]}


def _config(second_board: str = "3 3 3") -> TournamentConfig:
    cfg = instant_config(ENTRIES, STAGE)
    boards = dict(cfg.boards)
    boards["ttt2"] = boards["ttt"].model_copy(update={"text": second_board})
    return cfg.model_copy(update={"boards": boards})


class _Watching(InstantDispatcher):
    """Records, at every poll, how many matches the store holds unplayed and how many specs
    the coordinator keeps."""

    def __init__(self, store: RunStore, batch: int = 3, polls: int | None = None) -> None:
        super().__init__(batch=batch)
        self.store = store
        self.coordinator: Coordinator | None = None
        self.polls = polls
        self.most_unplayed = 0
        self.most_specs = 0
        self.progress: _Shown | None = None

    def poll(self, timeout: float) -> list[InboxNote]:
        counts = self.store.counts()
        unplayed = sum(n for state, n in counts.items() if state != "done")
        self.most_unplayed = max(self.most_unplayed, unplayed)
        if self.coordinator is not None:
            self.most_specs = max(self.most_specs, len(self.coordinator._specs))
        if self.polls is not None:
            self.polls -= 1
            if self.polls < 0:
                raise _Crash
        return super().poll(timeout)


class _Crash(Exception):
    pass


class _Shown(RunProgress):
    """The stage totals the progress line was given while the stage ran."""

    def __init__(self, name: str) -> None:
        super().__init__(name, "quiet")
        self.running_totals: set[int] = set()

    def update(self, snap: ProgressSnapshot) -> None:
        self.running_totals |= {s.total for s in snap.stages if s.status == "running"}
        super().update(snap)


def _run(
    config: TournamentConfig, store: RunStore, dispatcher: _Watching, *, resume: bool = False
) -> tuple[int, SessionOutcome]:
    progress = _Shown(config.name)
    dispatcher.progress = progress
    coordinator = Coordinator(config, store, dispatcher, progress, timing=Timing(), check_resume=resume)
    dispatcher.coordinator = coordinator
    replans = 0
    plan = coordinator.replan

    def counted() -> TournamentState:
        nonlocal replans
        replans += 1
        return plan()

    coordinator.replan = counted  # type: ignore[method-assign]
    return replans, coordinator.run()


def _doc(state: TournamentState) -> str:
    return json.dumps(
        {"doc": standings_document(state), "ids": [m.match_id for m in state.matches]}, sort_keys=True
    )


def _stored_order(store: RunStore) -> list[tuple[int, tuple[str, ...], str]]:
    return [(r.plan.pairing, r.plan.players, r.plan.board_id) for r in store.match_records()]


def _enumerated(config: TournamentConfig) -> list[tuple[int, tuple[str, ...], str]]:
    names = list(config.entry_specs())
    return [
        (k, pair, board)
        for k, (pair, board) in enumerate((p, b) for p in combinations(names, 2) for b in ("ttt", "ttt2"))
    ]


@pytest.fixture(autouse=True)
def _small_window(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(round_robin, "WINDOW", WINDOW)


def test_the_store_holds_only_the_window_and_the_run_ends_as_the_full_plan(tmp_path: Path) -> None:
    config = _config()
    store = RunStore.create(tmp_path, {"name": config.name, "run_id": "t"})
    dispatcher = _Watching(store)
    replans, outcome = _run(config, store, dispatcher)
    assert outcome.finished
    total = ENTRIES * (ENTRIES - 1)
    assert outcome.matches == total
    # planned ahead: the window, never every pairing; specs only for those
    assert WINDOW <= dispatcher.most_unplayed <= WINDOW
    assert dispatcher.most_specs <= WINDOW
    # the progress line counts every match the stage will have, not the window
    assert dispatcher.progress is not None and dispatcher.progress.running_totals == {total}
    # not re-planned per result: the first plan, and the last one once every match is in
    assert replans <= 3, replans
    assert _stored_order(store) == _enumerated(config)
    assert _doc(outcome.state) == _doc(advance(config, store.official_results()))
    store.close()


def test_a_restarted_coordinator_plans_the_same_window_and_finishes_the_same(tmp_path: Path) -> None:
    config = _config()
    straight = RunStore.create(tmp_path / "straight", {"name": config.name, "run_id": "a"})
    _, whole = _run(config, straight, _Watching(straight))
    straight.close()

    store = RunStore.create(tmp_path / "resumed", {"name": config.name, "run_id": "b"})
    with pytest.raises(_Crash):
        _run(config, store, _Watching(store, batch=2, polls=100))  # 200 of the 380 matches
    done = store.counts().get("done", 0)
    assert 0 < done < len(whole.state.matches)
    assert len(store.match_records()) == done + WINDOW  # only the window was planned ahead
    store.requeue_in_flight("coordinator restarted")
    with pytest.raises(ResumeRefused, match="board_text"):  # the stored matches are checked
        _run(_config(second_board="4 4 3"), store, _Watching(store), resume=True)
    resumed_dispatcher = _Watching(store)
    _, resumed = _run(config, store, resumed_dispatcher, resume=True)
    assert resumed.finished
    assert resumed_dispatcher.most_unplayed <= WINDOW
    assert _doc(resumed.state) == _doc(whole.state)
    assert _stored_order(store) == _enumerated(config)
    store.close()
