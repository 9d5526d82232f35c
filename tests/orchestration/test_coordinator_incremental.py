"""The coordinator's incremental planning against the pure planner (issue 13, item 2).

A real coordinator, a real SQLite run store, every result re-judged; matches are
played at once in-process (``bench.instant``). The coordinator keeps the results
in memory and re-plans only when a result can change the plan; its final state
must be the one ``advance`` gives from the store's results from scratch, also
after a restart in the middle and with a match given up.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bench.instant import InstantDispatcher, instant_config
from runner.config import TournamentConfig
from runner.domain.match_values import MatchSpec, system_error_result
from runner.domain.stages.base import TournamentState
from runner.domain.stages.tournament import advance, standings_document
from runner.domain.wire import Finished
from runner.orchestration.coordinator import Coordinator, SessionOutcome
from runner.orchestration.dispatcher import InboxNote, Timing
from runner.report.progress import RunProgress
from runner.storage.store import RunStore

STAGES: dict[str, dict[str, Any]] = {
    "swiss": {"name": "sw", "planner": "swiss", "rounds": 5},
    "knockout": {"name": "ko", "planner": "knockout", "games_per_pairing": 2},
    "potm_elimination": {"name": "el", "planner": "potm_elimination", "k": 2},
}


def _run(
    config: TournamentConfig, store: RunStore, dispatcher: InstantDispatcher
) -> tuple[Coordinator, int, SessionOutcome]:
    coordinator = Coordinator(config, store, dispatcher, RunProgress(config.name, "quiet"), timing=Timing())
    replans = 0
    plan = coordinator.replan

    def counted() -> TournamentState:
        nonlocal replans
        replans += 1
        return plan()

    coordinator.replan = counted  # type: ignore[method-assign]
    outcome = coordinator.run()
    return coordinator, replans, outcome


def _doc(state: TournamentState) -> str:
    return json.dumps(
        {"doc": standings_document(state), "ids": [m.match_id for m in state.matches]}, sort_keys=True
    )


@pytest.mark.parametrize("kind", sorted(STAGES))
def test_the_coordinator_ends_where_the_pure_planner_does(kind: str, tmp_path: Path) -> None:
    config = instant_config(40, STAGES[kind])
    store = RunStore.create(tmp_path, {"name": config.name, "run_id": "t"})
    _, replans, outcome = _run(config, store, InstantDispatcher(batch=3))
    assert outcome.finished
    from_scratch = advance(config, store.official_results())
    assert _doc(outcome.state) == _doc(from_scratch)
    assert outcome.matches == len(from_scratch.matches)
    # one plan per round (and the final one), not one per batch of results
    rounds = sum(len({r.round for r in s.rounds}) for s in from_scratch.stages)
    assert replans <= rounds + 2, (replans, rounds)
    assert store.counts() == {"done": len(from_scratch.matches)}
    store.close()


class _Crash(Exception):
    pass


class _DiesAfter(InstantDispatcher):
    def __init__(self, polls: int) -> None:
        super().__init__(batch=2)
        self.polls = polls

    def poll(self, timeout: float) -> list[InboxNote]:
        self.polls -= 1
        if self.polls < 0:
            raise _Crash
        return super().poll(timeout)


def test_a_restarted_coordinator_reads_the_results_once_and_finishes_the_same(tmp_path: Path) -> None:
    config = instant_config(30, STAGES["swiss"])
    straight = RunStore.create(tmp_path / "straight", {"name": config.name, "run_id": "a"})
    _, _, whole = _run(config, straight, InstantDispatcher(batch=2))
    straight.close()

    store = RunStore.create(tmp_path / "resumed", {"name": config.name, "run_id": "b"})
    with pytest.raises(_Crash):
        _run(config, store, _DiesAfter(polls=20))  # 40 of the 75 matches, mid-round
    assert 0 < store.counts().get("done", 0) < len(whole.state.matches)
    store.requeue_in_flight("coordinator restarted")
    _, _, resumed = _run(config, store, InstantDispatcher(batch=2))
    assert resumed.finished
    assert _doc(resumed.state) == _doc(whole.state)
    store.close()


class _OneAlwaysFails(InstantDispatcher):
    """The worker's own failure (a ``system_error`` result) every time for the first match of
    round 2."""

    def __init__(self) -> None:
        super().__init__(batch=2)
        self.victim: MatchSpec | None = None

    def submit(self, spec: MatchSpec, attempt: int, *, refused_by: tuple[str, ...] = ()) -> None:
        if self.victim is None and spec.plan.round == 2:
            self.victim = spec
        super().submit(spec, attempt, refused_by=refused_by)

    def poll(self, timeout: float) -> list[InboxNote]:
        victim = self.victim
        return [
            Finished(n.match_id, n.attempt, system_error_result(victim, "boom", worker="instant"), "instant")
            if isinstance(n, Finished) and victim is not None and n.match_id == victim.match_id
            else n
            for n in super().poll(timeout)
        ]


def test_a_match_given_up_blocks_its_stage_and_the_run_stops(tmp_path: Path) -> None:
    config = instant_config(12, STAGES["swiss"])
    store = RunStore.create(tmp_path, {"name": config.name, "run_id": "t"})
    dispatcher = _OneAlwaysFails()
    _, _, outcome = _run(config, store, dispatcher)
    assert not outcome.finished
    assert dispatcher.victim is not None and outcome.failed == [dispatcher.victim.match_id]
    assert all(m.round <= 2 for m in outcome.state.matches)  # round 3 waits for the failed match
    assert _doc(outcome.state) == _doc(advance(config, store.official_results()))
    store.close()
