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
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from runner.config import SprtStage
from runner.domain.contracts import MatchPlan
from runner.domain.scoring import rank_entries, tally_matches
from runner.domain.sprt import Pentanomial, SprtBounds, llr
from runner.domain.stages.base import RoundInfo
from runner.domain.stages.common import Results, StageContext, StageOutcome, completed, standing_rows
from runner.domain.stages.pair_stats import pair_extras, pair_points

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
    """Pair ``k`` as a match, computed from k alone (ids cached: the plan looks them up often)."""

    def __init__(self, ctx: StageContext, engine: str, baseline: str) -> None:
        self.stage = ctx.name
        self.ctx = ctx
        self.engine, self.baseline = engine, baseline
        self.boards = list(ctx.stage.boards)
        self.match = lru_cache(maxsize=4 * LOOKAHEAD)(self._match)

    def _match(self, k: int) -> MatchPlan:
        board = self.ctx.board_id(self.boards[k % len(self.boards)], k + 1)
        orders = ((self.engine, self.baseline), (self.baseline, self.engine))
        return MatchPlan(self.stage, 1, "", k, (self.engine, self.baseline), board, orders)


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


def read_test(st: SprtStage, order: PairOrder, results: Results) -> tuple[SprtReading, int]:
    """The test's reading and the length of the leading run (module doc)."""
    bounds = SprtBounds.of(st.alpha, st.beta)
    cap = st.max_pairs
    leading = Pentanomial()
    value = 0.0
    c = 0
    while cap is None or c < cap:
        games = completed(results, order.match(c))
        if games is None:
            break
        leading = leading.add(pair_points(games, order.engine))
        c += 1
        value = llr(leading, st.elo0, st.elo1, st.model)
        decision = bounds.decision(value)
        if decision is not None:
            return SprtReading(value, bounds, leading, f"{decision} accepted", c), c
    if cap is not None and c >= cap:
        return SprtReading(value, bounds, leading, "inconclusive at max_pairs", c), c
    return SprtReading(value, bounds, leading, "", None), c


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, SprtStage)
    engine, baseline = players(st, entrants)
    order = PairOrder(ctx, engine, baseline)
    window = st.concurrency or max(ctx.slots, 1)
    reading, lead = read_test(st, order, results)
    end = lead + window if reading.decided_at is None else reading.decided_at - 1 + window
    if st.max_pairs is not None:
        end = min(end, st.max_pairs)
    planned = [order.match(k) for k in range(end)]
    # played pairs past the plan's end (planned with more slots before a resume) stay planned
    cap = st.max_pairs if st.max_pairs is not None else end + LOOKAHEAD
    planned += [m for k in range(end, min(end + LOOKAHEAD, cap)) if completed(results, m := order.match(k))]
    played = [(m, g) for m in planned if (g := completed(results, m)) is not None]
    two = [engine, baseline]
    tallies = tally_matches([(m.players, g) for m, g in played], st.scoring, two)
    ranking = rank_entries(two, tallies, st.rank_by)
    extras = pair_extras([(m.players, g) for m, g in played], two)
    status = {engine: f"engine: {reading.decision or 'running'}", baseline: "baseline"}
    done = bool(reading.decision) and len(played) == len(planned)
    everything = Pentanomial.from_pair_points(pair_points(g, engine) for _, g in played)
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
        standings=standing_rows(ranking, tallies, status=status, extra=extras),
        ranking=ranking,
        notes=notes,
        summary=f"SPRT {reading.decision or 'running'}: {reading.line()}",
    )
