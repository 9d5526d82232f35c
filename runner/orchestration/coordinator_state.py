"""What the coordinator keeps while it runs, and the official results it holds in memory.

``runner.orchestration.coordinator.Coordinator`` is made of this state and the parts that act
on it, one module each: the loop and the plan (``coordinator``), the notes from the inbox
(``coordinator_inbox``), and the leases, stragglers and a broker that lost its data
(``coordinator_leases``). The results read from the store once and then kept up to date here
are what the planner is given (``coordinator``'s module doc says why).
"""

from __future__ import annotations

import time
from collections import Counter, deque
from collections.abc import Callable
from dataclasses import replace

from runner.config import TournamentConfig
from runner.domain.fair_share import Sharing
from runner.domain.match_values import GameRecord, MatchPlan, MatchSpec, VerdictKind
from runner.domain.progress import ProgressSink
from runner.domain.stages.base import PlanWindow, TournamentState
from runner.domain.stages.memo import StageMemo
from runner.domain.stages.tournament import match_spec
from runner.domain.wire import encode
from runner.orchestration.dispatcher import Dispatcher, Timing
from runner.orchestration.verification import Verifier
from runner.orchestration.workers_health import WorkersHealth
from runner.storage.store import DEFAULT_ATTEMPT_CAP, RunStore

ATTEMPT_CAP = DEFAULT_ATTEMPT_CAP


def limits_key(spec: MatchSpec) -> bytes:
    """What a worker's ceiling refuses a match for: its limits (and sandbox), as one key."""
    return encode((spec.limits, spec.sandbox))


class CoordinatorState:
    """The coordinator's state and what every part of it uses: match specs, the official
    results in memory, giving a match up (``Coordinator`` is the whole)."""

    def __init__(
        self,
        config: TournamentConfig,
        store: RunStore,
        dispatcher: Dispatcher,
        progress: ProgressSink,
        *,
        timing: Timing | None = None,
        attempt_cap: int = ATTEMPT_CAP,
        check_resume: bool = False,
        republish: Callable[[], None] | None = None,
        on_accepted: Callable[[MatchSpec, list[GameRecord]], None] | None = None,
        on_tick: Callable[[], None] | None = None,
        slots: int = 1,
    ) -> None:
        self.config = config
        #: matches this run's workers play at once: planners that keep every worker busy
        #: plan that many ahead (``StageContext.slots``; the sprt stage)
        self.slots = slots
        #: told each result accepted in this session, with its spec (``tourney run`` replays
        #: them for the report meanwhile: ``runner.report.replay_memo``); must return at once
        self.on_accepted = on_accepted
        self.store = store
        self.dispatcher = dispatcher
        self.progress = progress
        self.timing = timing or Timing.from_env()
        self.attempt_cap = attempt_cap
        self.check_resume = check_resume
        self.republish = republish
        #: called on every pass of the loop (``tourney run``: restart a dead local worker)
        self.on_tick = on_tick
        self._specs: dict[str, MatchSpec] = {}
        self._queue_empty_since: float | None = None
        self._last_sweep = 0.0
        self._last_republish = time.monotonic()
        self._last_data_check = 0.0
        self._last_progress = 0.0
        self._broker_down = False  # the broker's outage was said (``_note_broker``)
        self._counts_cache: tuple[dict[str, tuple[int, int]], dict[str, int]] | None = None
        self._counts_next = 0.0
        self._state: TournamentState | None = None
        #: the official results, read from the store once and then kept up to date here
        #: (None: read them again at the next replan)
        self._results: dict[str, list[GameRecord]] | None = None
        self._memo = StageMemo()
        #: the running stage's lazy plan, fed each official result (``TournamentState.window``)
        self._window: PlanWindow | None = None
        self._games = self._moves = 0  # over the official results, for progress
        self._verdicts = Counter[str]()
        self._session = Counter[str]()
        # a quarantine stands across sessions (resume): the workers' records are kept in the store
        self.health = WorkersHealth.from_summary(store.meta().get("workers") or {})
        #: claimed worker -> notes no enrolled key signed (or a revoked one)
        self.rejected_notes = Counter[str]()
        #: key id a refused note's signature names ("unsigned" for none) -> notes, and the worker
        #: names those notes claimed: a taker nobody enrolled is named in the summary and report
        self.rejected_keys: dict[str, dict[str, object]] = dict(store.meta().get("rejected_keys") or {})
        #: (worker, reason) of every refusal already reported (each is said once)
        self._refusals: set[tuple[str, str]] = set()
        #: limits (``limits_key``) -> worker -> the ceiling it refused them for (``_check_servable``)
        self._ceiling_refusals: dict[bytes, dict[str, str]] = {}
        #: match -> when (monotonic) its current attempt started, for the median match time
        self._started_mono: dict[str, float] = {}
        #: how long accepted matches took in this session, by match kind (stage and board:
        #: ``stragglers.match_kind``; the last 1,000 of each)
        self._durations: dict[str, deque[float]] = {}
        #: matches a second copy was sent for (``_stragglers``)
        self._copied: set[str] = set()
        self._last_straggler_check = 0.0
        #: this run's share of its organiser's workers, as last asked (None: not shared)
        self._sharing: Sharing | None = None
        #: match -> when it may be dispatched again (after a hand-back by an ignored worker)
        self._held: dict[str, float] = {}
        #: (worker, match, attempt) -> when (monotonic) a ``started`` note without a heartbeat
        #: counts against its key unless that key's result for the attempt came (docs/fleet.md)
        self._unproven: dict[tuple[str, str, int], float] = {}
        #: attempts an untrusted key's note named while queued (the sweeper never charges them)
        self._untrusted_marked: set[tuple[str, int]] = set()
        #: match -> attempts of it an untrusted key's note sent straight back to the queue
        self._untrusted_quick = Counter[str]()
        #: (event kind, worker) -> events of that kind about that worker (floods are counted)
        self._limited = Counter[tuple[str, str]]()
        #: results must name this run (a result of another run is refused: docs/fleet.md)
        self.run_id = str(store.meta().get("run_id", ""))
        #: replays of sampled accepted matches on a second worker (``timing.verify_sample``)
        self.verifier = Verifier(
            config, store, dispatcher, self.health, progress, self.timing, run_id=self.run_id,
            quarantine=self._quarantine,
        )  # fmt: skip
        #: CPU seconds this process spent re-judging results (runner.domain.verify), and in total
        self.verify_cpu_s = 0.0
        self.cpu_s = 0.0

    # -- planning -------------------------------------------------------------------
    def _spec(self, pm: MatchPlan) -> MatchSpec:
        spec = self._specs.get(pm.match_id)
        if spec is None:
            spec = self._specs[pm.match_id] = match_spec(self.config, pm)
        return spec

    # -- the official results, in memory ------------------------------------------------
    def _official_results(self) -> dict[str, list[GameRecord]]:
        if self._results is None:
            self._window = None  # it reads the mapping being replaced: the next plan makes another
            self._results = {}
            self._games = self._moves = 0
            self._verdicts.clear()
            for match_id, games in self.store.iter_official_results():
                self._set_official(match_id, games)
        return self._results

    def _set_official(self, match_id: str, games: list[GameRecord]) -> None:
        """``games`` is now the official result of ``match_id`` (a new list object: the memo
        tells a changed result by identity)."""
        if self._results is None:
            return  # read from the store in full at the next replan
        for sign, rs in ((-1, self._results.get(match_id, [])), (1, games)):
            self._games += sign * len(rs)
            for g in rs:
                self._moves += sign * len(g.moves)  # 0 for the kept ones: see below
                if g.verdict.kind is not VerdictKind.NORMAL:
                    self._verdicts[g.verdict.kind.value] += sign
        # kept without transcripts: planners read who won, scores and verdicts, never the moves,
        # which were most of the memory a played match held (6.5 -> 1.4 KB at 3x3 tic-tac-toe;
        # far more in long games). A result is replaced only for a match given up, whose
        # system_error games have no moves, so the moves counter stays right.
        self._results[match_id] = [replace(g, moves=[], stderr={}) for g in games]
        if self._window is not None:
            # a lazily planned stage (round robin) plans its next matches from this result alone
            fresh = self._window.on_result(match_id, games)
            if fresh:
                self.store.add_planned([self._spec(pm) for pm in fresh])

    def _quarantine(self, worker: str, *, every_run: bool = False) -> None:
        """Quarantine ``worker`` and hand back what it holds: the inbox part's (``InboxHandling``)."""
        raise NotImplementedError

    def _hand_back(self, match_id: str, attempt: int, why: str, *, ignored_worker: bool = False) -> None:
        """Re-dispatch an attempt uncharged (bounded): the inbox part's (``InboxHandling``)."""
        raise NotImplementedError

    def _unplayed_starts(self) -> None:
        """Count ``started`` notes nobody played against their keys: the inbox part's."""
        raise NotImplementedError

    def _failed(self, match_id: str) -> None:
        """The store gave ``match_id`` up: it holds a ``system_error`` result now."""
        self._forget(match_id)
        games = self.store.official_games(match_id)
        if games is not None:
            self._set_official(match_id, games)

    def _forget(self, match_id: str) -> None:
        self.dispatcher.forget(match_id)
        self._specs.pop(match_id, None)  # read from the store again if a late result needs it

    def _lost(self, match_id: str, status: str, detail: str) -> None:
        if status == "failed":
            self._failed(match_id)
            self.progress.log(f"match {match_id} FAILED: {detail}")
        elif status == "retry":
            self.progress.log(f"match {match_id}: re-dispatching ({detail})")
