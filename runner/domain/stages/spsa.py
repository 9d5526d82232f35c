"""SPSA: one engine tunes its options from game pairs of θ + c·Δ against θ - c·Δ
(docs/config.md, "spsa"; the gains and the update rule are ``runner.domain.spsa``).

The tuning's N game pairs (``pairs``) are played ``batch`` at a time. An *iteration* is one
batch: its pairs all start from the same θ, are all planned at once (so every worker plays
one: fishtest's "many pairs per request"), and θ moves once every one of them has a result,
pair by pair in pair order with fishtest's update (so the order in which the workers finish
changes nothing). Then the next iteration is planned from the new θ. Pair ``j`` (0-based,
over the whole tuning) is gain step ``k = j + 1``, whatever the batch.

Pair ``j`` is one match of two games, colours swapped, between two seats of the tuned engine:
``<engine>~plus`` plays θ + c_k·flip and ``<engine>~minus`` θ - c_k·flip, each value clipped to
the option's range and rounded stochastically to a whole number (``runner.domain.spsa``). The
match carries those values (``MatchPlan.seat_options``; ``match_spec`` lays them over the
entry's options, so the worker sends them with ``setoption``), and its id depends on them: a
result played with other values is never taken for this pair. The pair's board is board
``j mod len(boards)`` of the stage (a per_round board: a fresh one per pair), or opening
``j`` of the book.

Everything random, each pair's signs (``flip``) and its rounding, is drawn from the run's seed,
the stage and ``j`` (``StageContext.rng``): the plan is a function of the results alone. A
crashed run resumed, ``tourney standings`` and the report all replay the same θ from the same
stored results; an accepted rerun that changes a pair's result changes θ from there on, and
the later pairs are planned afresh with their new values.

Cost: an iteration's plan is kept with the θ it left (``TuningFold``, by the stage's options
and players), so planning again after a batch folds in that batch only; a result object that
is no longer the one folded in (an accepted rerun) starts a fresh fold, as in the sprt stage.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from runner.domain.match_values import GameRecord, MatchPlan, SeatOption
from runner.domain.scoring import Tally, effective_winner, rank_entries, tally_matches
from runner.domain.spsa import (
    Gains,
    Step,
    TunedParam,
    TuningPath,
    pair_result,
    perturbed,
    step,
    stochastic_round,
)
from runner.domain.stage_models import SPSA_MINUS_SUFFIX, SPSA_PLUS_SUFFIX, SpsaStage
from runner.domain.stages.base import RoundInfo
from runner.domain.stages.common import Results, StageContext, StageOutcome, completed, standing_rows


@dataclass(frozen=True)
class PlannedPair:
    """Pair ``j`` as planned from the θ its iteration started at: the match and each option's step."""

    j: int
    match: MatchPlan
    steps: tuple[Step, ...]


@dataclass(frozen=True)
class Iteration:
    """One batch of pairs from one θ; ``after`` is θ once all are folded in (None: still playing)."""

    number: int  # 0-based
    theta: tuple[float, ...]
    pairs: tuple[PlannedPair, ...]
    after: tuple[float, ...] | None = None


def tuned_engine(st: SpsaStage, entrants: Sequence[str]) -> str:
    """The entry tuned: as named, else the stage's one entrant."""
    if st.engine is not None:
        if st.engine not in entrants:
            raise ValueError(f"stage {st.name!r}: {st.engine} did not reach this stage")
        return st.engine
    if len(entrants) != 1:
        raise ValueError(f"stage {st.name!r} tunes one engine, not {len(entrants)}: name it with engine")
    return entrants[0]


class PairMaker:
    """Pair ``j`` as a match, from j and the θ of its iteration alone."""

    def __init__(self, ctx: StageContext, engine: str) -> None:
        st = ctx.stage
        assert isinstance(st, SpsaStage)
        self.ctx, self.st = ctx, st
        self.plus, self.minus = engine + SPSA_PLUS_SUFFIX, engine + SPSA_MINUS_SUFFIX
        self.gains = tuple(
            Gains.of(p.c_end, p.r_end, st.pairs, st.A_ratio, st.alpha, st.gamma) for p in st.params
        )
        self.boards = list(st.boards)

    def pair(self, j: int, iteration: int, theta: Sequence[float]) -> PlannedPair:
        rng = self.ctx.rng("spsa", j)
        # per option: its sign, then the two uniforms that round the θ+ and the θ- value
        draws = [(1 if rng.random() < 0.5 else -1, rng.random(), rng.random()) for _ in self.st.params]
        steps = tuple(step(g, j + 1, flip) for g, (flip, _, _) in zip(self.gains, draws, strict=True))
        options: list[SeatOption] = []
        for p, t, s, (_, u_plus, u_minus) in zip(self.st.params, theta, steps, draws, strict=True):
            for seat, sign, u in ((self.plus, 1, u_plus), (self.minus, -1, u_minus)):
                value = stochastic_round(perturbed(t, s, sign, p.min, p.max), u)
                options.append(
                    SeatOption(seat, p.name, int(min(max(value, math.ceil(p.min)), math.floor(p.max))))
                )
        board = self.ctx.board_id(self.boards[j % len(self.boards)], j + 1)
        orders = ((self.plus, self.minus), (self.minus, self.plus))
        m = MatchPlan(
            self.st.name,
            iteration + 1,
            "",
            j,
            (self.plus, self.minus),
            board,
            orders,
            seat_options=tuple(options),
        )
        return PlannedPair(j, m, steps)

    def iteration(self, number: int, theta: tuple[float, ...]) -> Iteration:
        first = number * self.st.batch
        last = min(first + self.st.batch, self.st.pairs)
        return Iteration(number, theta, tuple(self.pair(j, number, theta) for j in range(first, last)))


def points_of(games: Sequence[GameRecord], player: str) -> list[float]:
    """``player``'s points per game: 1 a win (a verdict against the other counts), ½ a draw, 0 a loss."""
    out = []
    for g in games:
        w = effective_winner(g)
        out.append(0.5 if w is None else 1.0 if w == player else 0.0)
    return out


def fold_iteration(
    st: SpsaStage, it: Iteration, games: Sequence[Sequence[GameRecord]], plus: str
) -> tuple[float, ...]:
    """θ after ``it``, its pairs' ``games`` folded in one by one in pair order (fishtest's update,
    clipped after each pair)."""
    theta = list(it.theta)
    for pair, played in zip(it.pairs, games, strict=True):
        result = pair_result(points_of(played, plus))
        for i, (p, s) in enumerate(zip(st.params, pair.steps, strict=True)):
            theta[i] = s.moved(theta[i], result, p.min, p.max)
    return tuple(theta)


class TuningFold:
    """The iterations finished so far, with the θ each left and the tallies of their games
    (module doc, "Cost"): planning again folds in only what is new."""

    def __init__(self, maker: PairMaker) -> None:
        self.maker = maker
        self.st = maker.st
        self.finished: list[Iteration] = []
        self.seen: dict[str, object] = {}  # match id -> the results object folded in
        self.tallies: dict[str, Tally] = {}
        tally_matches([], self.st.scoring, [maker.plus, maker.minus], into=self.tallies)

    def still_valid(self, results: Results) -> bool:
        return all(results.get(mid) is seen for mid, seen in self.seen.items())

    @property
    def theta(self) -> tuple[float, ...]:
        last = self.finished[-1].after if self.finished else None
        return last if last is not None else tuple(p.start for p in self.st.params)

    def advance(self, results: Results) -> Iteration | None:
        """Fold in every iteration that is complete; the one being played (None: all done)."""
        total = math.ceil(self.st.pairs / self.st.batch)
        while len(self.finished) < total:
            it = self.maker.iteration(len(self.finished), self.theta)
            games = [completed(results, p.match) for p in it.pairs]
            played = [g for g in games if g is not None]
            if len(played) < len(games):
                return it
            after = fold_iteration(self.st, it, played, self.maker.plus)
            self.finished.append(Iteration(it.number, it.theta, it.pairs, after))
            for p in it.pairs:
                self.seen[p.match.match_id] = results.get(p.match.match_id)
            tally_matches(
                [(p.match.players, g) for p, g in zip(it.pairs, played, strict=True)],
                self.st.scoring,
                into=self.tallies,
            )
        return None

    def path(self) -> TuningPath:
        counts = [0] + [it.pairs[-1].j + 1 for it in self.finished]
        params = tuple(
            TunedParam(p.name, p.min, p.max, (p.start, *(it.after[i] for it in self.finished if it.after)))
            for i, p in enumerate(self.st.params)
        )
        return TuningPath(tuple(counts), params, self.st.pairs)


#: the folds of the stages planned lately, by everything their plan depends on but the results
_FOLDS: dict[tuple[object, ...], TuningFold] = {}
FOLDS_KEPT = 16


def _fold_for(ctx: StageContext, st: SpsaStage, engine: str, results: Results) -> TuningFold:
    boards = tuple((b, spec.model_dump_json() if (spec := ctx.boards.get(b)) else "") for b in st.boards)
    key = (ctx.seed, st.model_dump_json(), engine, boards)
    fold = _FOLDS.get(key)
    if fold is None or not fold.still_valid(results):
        fold = TuningFold(PairMaker(ctx, engine))
        while len(_FOLDS) >= FOLDS_KEPT:
            _FOLDS.pop(next(iter(_FOLDS)))
        _FOLDS[key] = fold
    return fold


def _sum(a: Tally, b: Tally) -> Tally:
    """Two tallies of one seat as one (the counts; the logs tiebreaks read are not needed here)."""
    counts = ("games", "wins", "ties", "losses", "points", "score", "verdicts_against", "firsts")
    return Tally(**{k: getattr(a, k) + getattr(b, k) for k in counts})


def _values(path: TuningPath) -> str:
    return ", ".join(f"{p.name} {p.last:.2f}" for p in path.params)


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, SpsaStage)
    engine = tuned_engine(st, entrants)
    fold = _fold_for(ctx, st, engine, results)
    current = fold.advance(results)
    its = fold.finished + ([current] if current is not None else [])
    matches = [p.match for it in its for p in it.pairs]
    plus = fold.maker.plus
    # the entrant's row: the games of its θ+ seat (wins, draws, losses against θ-), the
    # iteration being played included
    partial = (
        []
        if current is None
        else [(p.match.players, g) for p in current.pairs if (g := completed(results, p.match)) is not None]
    )
    row_tallies = {engine: _sum(fold.tallies[plus], tally_matches(partial, st.scoring, [plus])[plus])}
    ranking = rank_entries([engine], row_tallies, st.rank_by)
    path = fold.path()
    played = path.pairs[-1] + (sum(1 for p in current.pairs if completed(results, p.match)) if current else 0)
    done = current is None
    gains = fold.maker.gains[0] if fold.maker.gains else None
    state = "done" if done else f"iteration {len(fold.finished) + 1}/{math.ceil(st.pairs / st.batch)}"
    status = {engine: f"tuned: {_values(path)}" if done else f"tuning ({state})"}
    extra = {engine: {p.name: round(p.last, 4) for p in path.params}}
    notes = [
        f"SPSA ({st.pairs} pairs, {st.batch} a batch, A={gains.A if gains else 0:g}, alpha={st.alpha:g}, "
        f"gamma={st.gamma:g}): {state}, {played} pairs played",
        *(f"{p.name}: {p.start:g} -> {p.last:.2f} in [{p.low:g}, {p.high:g}]" for p in path.params),
        f"W-L-D of {plus} (theta + c*delta) against {fold.maker.minus}: "
        f"{row_tallies[engine].wins}-{row_tallies[engine].losses}-{row_tallies[engine].ties}",
    ]
    return StageOutcome(
        matches=matches,
        rounds=[
            RoundInfo(
                it.number + 1,
                "",
                tuple(p.match.match_id for p in it.pairs),
                board_id=",".join(dict.fromkeys(p.match.board_id for p in it.pairs)),
            )
            for it in its
        ],
        done=done,
        standings=standing_rows(ranking, row_tallies, status=status, extra=extra),
        ranking=ranking,
        notes=notes,
        waits_for_every_result=True,  # the next iteration needs every result of this one
        summary=f"SPSA {played}/{st.pairs} pairs: {_values(path)}",
        tuning=path,
    )
