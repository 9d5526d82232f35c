"""SPRT: two entries play colour-swapped game pairs until the sequential test decides
(docs/config.md, "sprt"; the math is ``runner.domain.sprt``).

Pair ``k`` is one match of two games, the engine first in game 1 and the baseline first in
game 2, on board ``k mod len(boards)`` of the stage (a per_round board: a fresh one per
pair, its "round" being k + 1). ``opening_of`` is the hook for games with opening books:
the pair's opening index, the same for both games of the pair.

The plan is a pure function of the results, so resume and audit work as for every stage:

- the *leading run* is the longest prefix 0..c-1 of pairs that all have a result. The LLR
  is tested on the leading run only, growing it one pair at a time in pair order, and the
  test stops at the first prefix whose LLR leaves its bounds (``decided_at``). Testing
  pairs in their planned order rather than in the order they finish keeps the decision
  independent of the workers' timing: short games (crashes, quick losses) finishing first
  cannot bias when the test stops, and the same results always give the same decision;
- while undecided, pairs c .. c+W-1 are planned (W: the stage's ``concurrency``, else the
  worker slots the coordinator reports), so W pairs are in flight whenever workers are
  free. Once decided, no further pair is planned: the plan ends where it ended when the
  deciding pair was still unplayed (decided_at - 1 + W), so the pairs in flight at that
  moment finish and are kept (their games count in the standings, not in the decision);
- a pair that has a result is always planned, wherever it lies, so a smaller W on resume
  (or ``tourney standings``, which plans with one slot) never drops a played pair.

The stage is done once decided (or ``max_pairs`` pairs lead without a decision) and every
planned pair has a result.

Cost: the coordinator plans a running stage again after new results (at most every half
second). Planning every pair from nothing each time cost about 2 s at 10,000 pairs on this
project's loaded machine (most of it building match ids and tallies), so the pairs folded
in by the last plan are kept (``PairFold``, by the stage's options and players) and only new
results are folded in; a result object that is no longer the one folded in (a rerun was
accepted, or another run's mapping) makes a fresh fold. The plan stays a function of the
results alone: the fold only remembers work already done.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.domain.match_values import MatchPlan
from runner.domain.scoring import Tally, rank_entries, tally_matches
from runner.domain.sprt import Pentanomial, SprtBounds, llr
from runner.domain.stage_models import SprtStage
from runner.domain.stages.base import RoundInfo
from runner.domain.stages.common import Results, StageContext, StageOutcome, completed, standing_rows
from runner.domain.stages.pair_stats import pair_points, penta_extras

#: how far past the planned pairs a played pair is still looked for (a resume with fewer
#: slots than the run that played it): the largest ``concurrency`` a config may set
LOOKAHEAD = 1024
#: a round lists its boards' ids up to this many; a per_round board has one per pair
ROUND_BOARDS_LISTED = 8


def opening_of(pair: int) -> int:
    """The opening a pair plays (both of its games): the pair's own index, for a game with an
    opening book to take modulo its size (chess: ``openings:``); unused by board games, whose
    boards rotate instead."""
    return pair


@dataclass(frozen=True)
class SprtReading:
    """Where the test stands: the LLR over the leading run, its bounds and the decision."""

    llr: float
    bounds: SprtBounds
    leading: Pentanomial  # the pairs the LLR is over
    decision: str  # "H1 accepted", "H0 accepted", "inconclusive at max_pairs", "" (running)
    decided_at: int | None  # pairs in the leading run when it was decided

    def line(self) -> str:
        return (
            f"LLR {self.llr:+.2f} in [{self.bounds.lower:.2f}, {self.bounds.upper:.2f}] "
            f"after {self.leading.pairs} pairs"
        )


class PairOrder:
    """Pair ``k`` as a match, computed from k alone (kept: the plan looks them up often)."""

    def __init__(self, ctx: StageContext, engine: str, baseline: str) -> None:
        self.stage = ctx.name
        self.ctx = ctx
        self.engine, self.baseline = engine, baseline
        self.boards = list(ctx.stage.boards)
        self._plans: dict[int, MatchPlan] = {}

    def match(self, k: int) -> MatchPlan:
        m = self._plans.get(k)
        if m is None:
            board = self.ctx.board_id(self.boards[k % len(self.boards)], k + 1)
            orders = ((self.engine, self.baseline), (self.baseline, self.engine))
            m = self._plans[k] = MatchPlan(self.stage, 1, "", k, (self.engine, self.baseline), board, orders)
        return m


class PairFold:
    """The played pairs of one stage folded in so far: the leading run's pentanomial and test,
    every played pair's points and the tallies. Planning again after a few more results only
    folds those in (module doc, "Cost"); a result that changed (an accepted rerun) starts a
    fresh fold, so the outcome is always what planning from nothing gives."""

    def __init__(self, st: SprtStage, order: PairOrder) -> None:
        self.st = st
        self.order = order
        self.bounds = SprtBounds.of(st.alpha, st.beta)
        self.folded: dict[int, object] = {}  # pair -> the results object folded in
        self.points: dict[int, float] = {}  # pair -> the engine's points in it
        self.tallies: dict[str, Tally] = {}
        tally_matches([], st.scoring, [order.engine, order.baseline], into=self.tallies)
        self.lead = 0  # pairs in the leading run
        self.reading = SprtReading(0.0, self.bounds, Pentanomial(), "", None)

    def still_valid(self, results: Results) -> bool:
        return all(results.get(self.order.match(k).match_id) is seen for k, seen in self.folded.items())

    def fold(self, k: int, results: Results) -> bool:
        """Fold pair ``k`` in if it has a result (True when it has)."""
        if k in self.folded:
            return True
        m = self.order.match(k)
        games = completed(results, m)
        if games is None:
            return False
        self.folded[k] = results.get(m.match_id)
        self.points[k] = pair_points(games, self.order.engine)
        tally_matches([(m.players, games)], self.st.scoring, into=self.tallies)
        return True

    def read_test(self, results: Results) -> None:
        """Grow the leading run pair by pair until a gap or a decision (module doc)."""
        st, cap = self.st, self.st.max_pairs
        while not self.reading.decision and (cap is None or self.lead < cap):
            if not self.fold(self.lead, results):
                return
            leading = self.reading.leading.add(self.points[self.lead])
            self.lead += 1
            value = llr(leading, st.elo0, st.elo1, st.model)
            decision = self.bounds.decision(value)
            verdict = f"{decision} accepted" if decision is not None else ""
            if not verdict and cap is not None and self.lead >= cap:
                verdict = "inconclusive at max_pairs"
            self.reading = SprtReading(value, self.bounds, leading, verdict, self.lead if verdict else None)


#: the folds of the stages planned lately, by everything their plan depends on but the results
_FOLDS: dict[tuple[object, ...], PairFold] = {}
FOLDS_KEPT = 16


def _fold_for(ctx: StageContext, st: SprtStage, engine: str, baseline: str, results: Results) -> PairFold:
    boards = tuple((b, spec.model_dump_json() if (spec := ctx.boards.get(b)) else "") for b in st.boards)
    key = (ctx.seed, st.model_dump_json(), engine, baseline, boards)
    fold = _FOLDS.get(key)
    if fold is None or not fold.still_valid(results):
        fold = PairFold(st, PairOrder(ctx, engine, baseline))
        while len(_FOLDS) >= FOLDS_KEPT:
            _FOLDS.pop(next(iter(_FOLDS)))
        _FOLDS[key] = fold
    return fold


def players(st: SprtStage, entrants: Sequence[str]) -> tuple[str, str]:
    """(engine, baseline): as named, else the stage's two entrants in seed order."""
    if st.engine is not None and st.baseline is not None:
        missing = [n for n in (st.engine, st.baseline) if n not in entrants]
        if missing:
            raise ValueError(f"stage {st.name!r}: {', '.join(missing)} did not reach this stage")
        return st.engine, st.baseline
    if len(entrants) != 2:
        raise ValueError(f"stage {st.name!r} needs exactly two entrants, not {len(entrants)}")
    return entrants[0], entrants[1]


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, SprtStage)
    engine, baseline = players(st, entrants)
    fold = _fold_for(ctx, st, engine, baseline, results)
    fold.read_test(results)
    reading, order = fold.reading, fold.order
    window = st.concurrency or max(ctx.slots, 1)
    end = fold.lead + window if reading.decided_at is None else reading.decided_at - 1 + window
    if st.max_pairs is not None:
        end = min(end, st.max_pairs)
    planned_pairs = list(range(end))
    # played pairs past the plan's end (planned with more slots before a resume) stay planned
    cap = st.max_pairs if st.max_pairs is not None else end + LOOKAHEAD
    planned_pairs += [k for k in range(end, min(end + LOOKAHEAD, cap)) if fold.fold(k, results)]
    planned = [order.match(k) for k in planned_pairs]
    played = [k for k in planned_pairs if fold.fold(k, results)]
    two = [engine, baseline]
    ranking = rank_entries(two, fold.tallies, st.rank_by)
    everything = Pentanomial.from_pair_points(fold.points[k] for k in played)
    extras = {engine: penta_extras(everything), baseline: penta_extras(everything.mirrored())}
    status = {engine: f"engine: {reading.decision or 'running'}", baseline: "baseline"}
    done = bool(reading.decision) and len(played) == len(planned)
    test = f"SPRT ({st.model} Elo, elo0={st.elo0:g}, elo1={st.elo1:g}, alpha={st.alpha:g}, beta={st.beta:g})"
    notes = [
        f"{test}: {reading.decision or 'running'}, {reading.line()}",
        f"{engine} vs {baseline}: {everything.pairs} pairs, {everything.games} games played; "
        f"pentanomial [LL, LD, DD+WL, WD, WW] = {everything}",
    ]
    boards = list(dict.fromkeys(m.board_id for m in planned))
    listed = ",".join(boards) if len(boards) <= ROUND_BOARDS_LISTED else ",".join(st.boards)
    return StageOutcome(
        matches=planned,
        rounds=[RoundInfo(1, "", tuple(m.match_id for m in planned), board_id=listed)],
        done=done,
        standings=standing_rows(ranking, fold.tallies, status=status, extra=extras),
        ranking=ranking,
        notes=notes,
        summary=f"SPRT {reading.decision or 'running'}: {reading.line()}",
    )
