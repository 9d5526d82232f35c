"""What every stage planner shares: its context, its outcome, result lookup, pairing search.

A planner is a pure function ``plan(ctx, entrants, results) -> StageOutcome``:
``entrants`` in seed order (best first), ``results`` maps match ids to their
games. It returns every match that exists so far (each round once the round
before it is complete), and the standings over the games played.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from runner.domain.boards import BoardSpec, derive_seed, round_board_id
from runner.domain.match_values import GameRecord, MatchPlan
from runner.domain.scoring import Ranking, Tally, is_system_error, rank_entries, tally_matches
from runner.domain.spsa import TuningPath
from runner.domain.stages.base import PlanWindow, RoundInfo, StandingRow
from runner.domain.stages.pair_stats import pair_extras
from runner.domain.stages.pairing import pair_positions

if TYPE_CHECKING:
    from runner.domain.stage_models import AnyStage

Results = Mapping[str, Sequence[GameRecord]]
PAIRING_SEARCH_BUDGET = 20_000  # nodes per search; far above what real brackets need


@dataclass(frozen=True)
class StageContext:
    """What a planner may know besides its entrants and the results."""

    stage: AnyStage
    seed: int  # the tournament seed
    boards: Mapping[str, BoardSpec]  # the config's named boards (to tell per_round ones)
    opponents: tuple[str, ...] = ()  # seed opponents available to this stage
    max_players: int = 2  # the game's
    #: matches the run can play at once (its worker slots), for planners that keep every
    #: worker busy (sprt); 1 where nothing is being played (tourney standings, report)
    slots: int = 1

    @property
    def name(self) -> str:
        return self.stage.name

    def board_id(self, name: str, round_no: int) -> str:
        spec = self.boards.get(name)
        return (
            round_board_id(name, self.stage.name, round_no) if spec is not None and spec.per_round else name
        )

    def boards_for_round(self, round_no: int) -> list[str]:
        """Every board of the stage, as ids for this round (round robin, seeding ...)."""
        return [self.board_id(b, round_no) for b in self.stage.boards]

    def round_board(self, round_no: int) -> str:
        """The one board of a round (elimination, knockout, swiss): the stage's boards in turn."""
        names = self.stage.boards
        return self.board_id(names[(round_no - 1) % len(names)], round_no)

    def rng(self, *parts: object) -> random.Random:
        return random.Random(derive_seed(self.seed, "stage", self.stage.name, *parts))


@dataclass
class StageOutcome:
    matches: list[MatchPlan]
    rounds: list[RoundInfo]
    done: bool
    standings: list[StandingRow]
    ranking: Ranking
    excluded: dict[str, str] = field(default_factory=dict)
    survivors: list[str] | None = None  # None: every entrant not excluded
    notes: list[str] = field(default_factory=list)
    skipped: bool = False
    #: True when this stage plans no new match before every match it has planned is complete
    #: (a round-by-round planner, or one whose matches all exist at once): while some are
    #: still being played, a result cannot change the plan, so the coordinator need not replan
    waits_for_every_result: bool = False
    #: a stage planned lazily (round robin): what plans its next matches one result at a time
    window: PlanWindow | None = None
    #: one line on where a running stage stands, for the live progress (sprt: LLR and bounds)
    summary: str = ""
    #: an spsa stage's θ so far, each option's path (the report's plot and tuned values)
    tuning: TuningPath | None = None


def one_round_outcome(
    ctx: StageContext, entrants: list[str], matches: list[MatchPlan], results: Results
) -> StageOutcome:
    """The outcome of a stage whose matches all exist at once (round robin, gauntlet ...)."""
    played = [(m.players, g) for m in matches if (g := completed(results, m)) is not None]
    tallies = tally_matches(played, ctx.stage.scoring, entrants)
    ranking = rank_entries(entrants, tallies, ctx.stage.rank_by)
    boards = ",".join(dict.fromkeys(m.board_id for m in matches))
    # pair statistics on request (``penta: true``): the standings' Elo and pentanomial columns
    extra = pair_extras(played, entrants) if getattr(ctx.stage, "penta", False) else None
    return StageOutcome(
        matches=matches,
        rounds=[RoundInfo(1, "", tuple(m.match_id for m in matches), board_id=boards)],
        done=len(played) == len(matches),
        standings=standing_rows(ranking, tallies, extra=extra),
        ranking=ranking,
        waits_for_every_result=True,
    )


def completed(results: Results, match: MatchPlan) -> Sequence[GameRecord] | None:
    """The games of a finished match, or None (no result yet, or a system error to be retried)."""
    games = results.get(match.match_id)
    if games is None or not games or any(is_system_error(g) for g in games):
        return None
    return games


def two_player_orders(a: str, b: str, games: int) -> tuple[tuple[str, ...], ...]:
    """Seat orders for ``games`` games between a and b: a first, then alternating."""
    return tuple((a, b) if i % 2 == 0 else (b, a) for i in range(games))


def standing_rows(
    ranking: Ranking,
    tallies: Mapping[str, Tally],
    status: Mapping[str, str] | None = None,
    extra: Mapping[str, Mapping[str, float]] | None = None,
) -> list[StandingRow]:
    rows = []
    empty = Tally()
    for i, e in enumerate(ranking.order, 1):
        t = tallies.get(e, empty)
        ex = {**ranking.values.get(e, {}), "firsts": float(t.firsts)}
        if t.byes:
            ex["byes"] = float(t.byes)
        ex.update((extra or {}).get(e, {}))
        rows.append(
            StandingRow(
                rank=i,
                entry=e,
                games=t.games,
                wins=t.wins,
                ties=t.ties,
                losses=t.losses,
                points=t.points,
                score=t.score,
                verdicts_against=t.verdicts_against,
                extra=ex,
                status=(status or {}).get(e, ""),
            )
        )
    return rows


def rank_in_tiers(
    tiers: Sequence[Sequence[str]],
    tallies: Mapping[str, Tally],
    keys: Sequence[str],
    seeds: Mapping[str, int],
) -> Ranking:
    """A ranking by tiers first (progress in a bracket), then by ``keys`` inside each tier.

    Tie groups never span two tiers.
    """
    order: list[str] = []
    groups: list[list[str]] = []
    values: dict[str, dict[str, float]] = {}
    for tier in tiers:
        if tier:
            r = rank_entries(tier, tallies, keys, seeds)
            order.extend(r.order)
            groups.extend(r.groups)
            values.update(r.values)
    return Ranking(order=order, groups=groups, values=values)


def pair_off(
    players: Sequence[str],
    candidates: Callable[[str, list[str]], list[str]],
    met: Callable[[str, str], bool],
) -> list[tuple[str, str]]:
    """Pairs for an even number of players with the fewest repeat pairings.

    The first unpaired player takes the first of ``candidates(player, rest)``
    that still lets everyone else be paired; with backtracking this gives
    the first pairing, in the candidates' preference order, among those with
    the fewest repeats (``met``). A search that outgrows its node budget falls
    back to the greedy choice (never seen with real brackets). The search is
    iterative (``runner.domain.stages.pairing``): no recursion limit at any size.
    """
    names = list(players)
    position = {name: i for i, name in enumerate(names)}

    def source(p: int, remaining: list[int]) -> list[int]:
        return [position[c] for c in candidates(names[p], [names[x] for x in remaining])]

    pairs = pair_positions(len(names), source, lambda a, b: met(names[a], names[b]), PAIRING_SEARCH_BUDGET)
    return [(names[a], names[b]) for a, b in pairs]
