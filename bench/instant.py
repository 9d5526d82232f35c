"""Instant matches for measuring the coordinator alone (issue 13, items 2 and 3).

``InstantDispatcher`` is a ``Dispatcher`` whose "workers" answer at once: every
game is played in this process with the game's pure rules, each move a legal
move picked by a generator seeded with the match id and the game number (an
entry that answers at once, varied enough that matches are won, lost and
drawn). Results are complete ``MatchResult``s with real transcripts, so the
coordinator re-judges them (``runner.domain.verify``) as it does real ones.

``poll`` hands back at most ``batch`` matches per call, as a couple of fast
workers would between two looks at the inbox: the coordinator's per-pass
costs are paid about once per ``batch`` matches at every size.

``instant_config`` builds a tournament of ``n`` fake entries (no processes:
``sandbox: none``) on 3x3 tic-tac-toe (mnk ``3 3 3``) with one stage.
"""

from __future__ import annotations

import collections
import random
import time
from pathlib import Path
from typing import Any

from runner.config import TournamentConfig
from runner.domain.entries import EntrySpec
from runner.domain.fair_share import Sharing
from runner.domain.games import get_game
from runner.domain.match_values import GameRecord, MatchResult, MatchSpec, MoveRecord, Verdict, VerdictKind
from runner.domain.wire import Finished, LiveMatch, Started
from runner.orchestration.dispatcher import DispatchObserver, InboxNote

WORKER = "instant"
NORMAL = Verdict(VerdictKind.NORMAL, None, "")


def instant_entry(name: str) -> EntrySpec:
    return EntrySpec(
        name=name,
        game="mnk",
        protocol="mnk",
        path=Path("/nonexistent") / name,
        run=["./a.out"],
        build=None,
        digest="0" * 64,
        base_name=name,
    )


def instant_config(n: int, stage: dict[str, Any], *, seed: int = 13) -> TournamentConfig:
    """One stage (``stage``: its config mapping, boards default ``[ttt]``) over ``n`` entries."""
    data: dict[str, Any] = {
        "name": f"instant-{n}",
        "seed": seed,
        "game": "mnk",
        "sandbox": "none",
        "boards": {"ttt": {"text": "3 3 3"}},
        "entries": [{"path": "unused"}],
        "stages": [{"boards": ["ttt"], **stage}],
    }
    cfg = TournamentConfig.model_validate(data)
    names = [f"e{i:05d}" for i in range(1, n + 1)]
    return cfg.bind(base_dir=Path("."), entries={nm: instant_entry(nm) for nm in names})


def play_instantly(spec: MatchSpec) -> MatchResult:
    """Every game of ``spec`` played with moves drawn from the legal ones (see the module doc)."""
    rules = get_game(spec.game, **spec.game_params)
    games: list[GameRecord] = []
    for number, order in enumerate(spec.orders):
        rng = random.Random(f"{spec.match_id}/{number}")
        state = rules.new_game(spec.board_text, len(order))
        moves: list[MoveRecord] = []
        while (outcome := rules.outcome(state)) is None:
            seat = rules.to_move(state)
            move = rng.choice(rules.legal_moves(state))
            moves.append(MoveRecord(order[seat], rules.format_move(move), 0.0))
            state = rules.play(state, move)
        winner = order[outcome.winners[0]] if len(outcome.winners) == 1 else None
        scores = {name: 0 for name in order}
        for seat, score in enumerate(outcome.scores):
            scores[order[seat]] += score
        games.append(GameRecord(list(order), winner, scores, NORMAL, moves, outcome.reason))
    # the code it played, as a worker names it (a result of other code is refused)
    digests = {name: ref.digest for name, ref in spec.entries.items()}
    return MatchResult(spec.match_id, games, worker=WORKER, digests=digests)


class InstantDispatcher:
    """A ``Dispatcher`` whose matches finish as soon as they are polled (module doc)."""

    def __init__(self, batch: int = 4) -> None:
        self.batch = batch
        self._queue: collections.deque[tuple[MatchSpec, int]] = collections.deque()
        self.submitted = 0

    def observe(self, observer: DispatchObserver) -> None:
        pass  # a match is over when polled, and there is no broker to wait for

    def submit(self, spec: MatchSpec, attempt: int, *, refused_by: tuple[str, ...] = ()) -> None:
        self._queue.append((spec, attempt))
        self.submitted += 1

    def submit_copy(self, spec: MatchSpec, attempt: int, avoid: str, *, verification: bool = False) -> None:
        pass  # nothing straggles: a match is over when polled

    @property
    def replays_elsewhere(self) -> bool:
        return False

    def verification_alive(self, match_id: str, attempt: int) -> bool | None:
        return None

    def forget_verification(self, match_id: str) -> None:
        pass

    @property
    def fleet_dir(self) -> Path | None:
        return None

    def want(self, match_id: str, attempt: int) -> None:
        pass

    def wake(self) -> None:
        pass  # its poll waits at most 1 ms

    def poll(self, timeout: float) -> list[InboxNote]:
        if not self._queue:
            time.sleep(min(timeout, 0.001))
            return []
        notes: list[InboxNote] = []
        for _ in range(min(self.batch, len(self._queue))):
            spec, attempt = self._queue.popleft()
            notes.append(Started(spec.match_id, attempt, WORKER))
            notes.append(Finished(spec.match_id, attempt, play_instantly(spec), WORKER))
        return notes

    def forget(self, match_id: str) -> None:
        pass

    def quarantine(self, worker: str, reason: str, *, every_run: bool = False) -> None:
        pass

    def lift_quarantine(self, worker: str) -> None:
        pass

    @property
    def results_name_their_run(self) -> bool:
        return False  # played in this process, for the run that submitted them

    def present(self) -> set[str] | None:
        return None

    def mark_alive(self) -> None:
        pass

    def lost_its_data(self) -> bool:
        return False

    def alive(self, match_id: str, attempt: int) -> bool | None:
        return True

    def execution_alive(self, execution: str) -> bool | None:
        return None  # its notes are its own

    def queue_empty(self) -> bool | None:
        return not self._queue

    def healthy_for(self) -> float:
        return float("inf")

    def down_for(self) -> float | None:
        return None

    @property
    def patience_s(self) -> float:
        return 0.0

    def workers(self) -> int:
        return 1

    def processes(self) -> dict[str, int]:
        return {"instant": 1}  # one worker: a straggler never gets a copy

    def share(self, demand: int, *, local: int = 0) -> Sharing | None:
        return None  # no queue shared with other runs

    def live(self) -> list[LiveMatch]:
        return []  # nothing is ever seen in progress: a match is over when polled

    def forget_run(self) -> None:
        pass

    def close(self) -> None:
        self._queue.clear()
