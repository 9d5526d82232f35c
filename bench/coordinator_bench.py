"""The coordinator's CPU per match at 30 and at 1,000 entries (issue 13, item 2).

The coordinator (``runner.orchestration.coordinator.Coordinator``) runs in this
process on a fresh run store (real SQLite) with ``bench.instant.InstantDispatcher``:
matches finish as soon as they are polled (an entry that answers at once,
``sandbox: none``; no broker, no worker processes), so everything measured is
the coordinator's own work: planning, the store, re-judging transcripts
(constant per match), progress. Its CPU time (``time.process_time`` around
``Coordinator.run``, which is what ``Coordinator.cpu_s`` holds) minus the
dispatcher's own playing of the games, divided by the matches accepted.

Both sizes play the same stage kind (a swiss of ``ROUNDS`` rounds: at 1,000
entries a round robin would be 499,500 matches); the 30-entry tournament is
repeated with other seeds until it has played about as many matches as one
1,000-entry round, so both figures average over enough matches to be stable.

Printed: ``coordinator CPU per match, 1000 vs 30 entries: R`` (target R <= 1.5).
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.instant import InstantDispatcher, instant_config
from runner.orchestration.coordinator import Coordinator
from runner.orchestration.dispatcher import Timing
from runner.report.progress import RunProgress
from runner.storage.store import RunStore

ROUNDS = 8
SWISS: dict[str, Any] = {"name": "swiss", "planner": "swiss", "rounds": ROUNDS}


@dataclass(frozen=True)
class Session:
    entries: int
    matches: int
    cpu_s: float  # the coordinator's, the instant games' play taken out
    wall_s: float

    @property
    def cpu_per_match_ms(self) -> float:
        return 1000.0 * self.cpu_s / max(self.matches, 1)


class _TimedInstant(InstantDispatcher):
    """Counts the CPU the dispatcher spends playing games, which is not the coordinator's."""

    def __init__(self, batch: int) -> None:
        super().__init__(batch)
        self.play_cpu_s = 0.0
        self.store: RunStore | None = None

    def poll(self, timeout: float) -> list[Any]:
        t0 = time.process_time()
        notes = super().poll(timeout)
        self.play_cpu_s += time.process_time() - t0
        return notes


def run_session(
    entries: int,
    stage: dict[str, Any],
    *,
    seed: int = 13,
    batch: int = 4,
    dispatcher_type: type[_TimedInstant] = _TimedInstant,
) -> Session:
    """One tournament of instant matches to its end, in a temporary run directory
    (``dispatcher_type``: a ``_TimedInstant`` that also watches the store, given as ``.store``)."""
    config = instant_config(entries, stage, seed=seed)
    with tempfile.TemporaryDirectory(prefix="tourney-coord-bench-") as tmp:
        store = RunStore.create(Path(tmp), {"name": config.name, "run_id": "bench"})
        dispatcher = dispatcher_type(batch)
        dispatcher.store = store
        progress = RunProgress(config.name, "quiet")
        coordinator = Coordinator(config, store, dispatcher, progress, timing=Timing())
        t0 = time.perf_counter()
        with progress:
            outcome = coordinator.run()
        wall = time.perf_counter() - t0
        store.close()
    if not outcome.finished:
        raise RuntimeError(f"{entries} entries: the tournament did not finish")
    return Session(entries, outcome.matches, coordinator.cpu_s - dispatcher.play_cpu_s, wall)


def measure(small: int = 30, large: int = 1000, quick: bool = False) -> tuple[Session, Session]:
    """(small, large): the small one summed over repeats (module doc)."""
    stage = dict(SWISS)
    if quick:
        stage["rounds"] = 3
    big = run_session(large, stage)
    total_matches, total_cpu, total_wall, seed = 0, 0.0, 0.0, 100
    while total_matches < (large // 2 if not quick else large // 4):
        s = run_session(small, stage, seed=seed)
        total_matches += s.matches
        total_cpu += s.cpu_s
        total_wall += s.wall_s
        seed += 1
    return Session(small, total_matches, total_cpu, total_wall), big


def main(quick: bool = False) -> None:
    small, big = measure(quick=quick)
    for s in (small, big):
        print(
            f"  {s.entries} entries, swiss: {s.matches} matches, coordinator CPU {s.cpu_s:.2f}s "
            f"= {s.cpu_per_match_ms:.2f} ms/match (wall {s.wall_s:.1f}s)"
        )
    ratio = big.cpu_per_match_ms / small.cpu_per_match_ms
    print(f"coordinator CPU per match, {big.entries} vs {small.entries} entries: {ratio:.2f}", flush=True)


if __name__ == "__main__":
    import sys

    main("--quick" in sys.argv)
