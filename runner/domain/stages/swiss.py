"""Swiss: a fixed number of rounds, each paired within score groups, no repeats.

Before each round entrants are ordered by stage points so far (a bye counts
its points), then seed. With an odd count the lowest-ordered entrant that has
had no bye gets one (worth ``scoring.bye``, default a first-seat win); if all
have had one, the lowest-ordered gets another. Pairing is Dutch-style: the
best unpaired entrant prefers the entrant half a score group below it (the
top half of a group meets the bottom half in order), then the others of its
group by closeness to that position, then lower groups in order (floaters);
backtracking avoids every repeat pairing when possible (as few as possible
otherwise). With one game per pairing the entrant whose first-minus-second
moves balance is lower moves first (the better placed when equal);
otherwise each side moves first equally often. Ranked by ``rank_by``
(default points, buchholz, wins, score).
"""

from __future__ import annotations

from bisect import bisect_left

from runner.domain.match_values import GameRecord, MatchPlan
from runner.domain.scoring import ScoringModel, Tally, rank_entries, tally_matches
from runner.domain.stage_models import SwissStage
from runner.domain.stages.base import RoundInfo
from runner.domain.stages.common import (
    PAIRING_SEARCH_BUDGET,
    Results,
    StageContext,
    StageOutcome,
    completed,
    standing_rows,
    two_player_orders,
)
from runner.domain.stages.pairing import ClosestInGroupFirst, pair_positions


def _add_round(
    tallies: dict[str, Tally], played: list[tuple[tuple[str, ...], list[GameRecord]]], table: ScoringModel
) -> None:
    """Add one round's matches to ``tallies`` exactly as ``tally_matches`` would count them."""
    for entry, fresh in tally_matches(played, table).items():
        t = tallies.setdefault(entry, Tally())
        t.games += fresh.games
        t.wins += fresh.wins
        t.ties += fresh.ties
        t.losses += fresh.losses
        t.points += fresh.points
        t.score += fresh.score
        t.verdicts_against += fresh.verdicts_against
        t.firsts += fresh.firsts
        t.opponents.extend(fresh.opponents)
        t.game_log.extend(fresh.game_log)


def _balance(t: Tally) -> int:
    """Games moved first minus games moved second."""
    return 2 * t.firsts - t.games


def _pair_round(
    pool: list[str], points_of: dict[str, float], met: set[frozenset[str]]
) -> list[tuple[str, str]]:
    """Dutch-style pairs for ``pool`` (sorted by points, then seed; even length).

    The best unpaired entrant prefers the entrant half its score group below
    it, then the others of its group by closeness to that position, then lower
    groups in order; candidates are computed on demand (``ClosestInGroupFirst``)
    so a round of 10,000 entrants pairs in O(n log n), not O(n^2).
    """
    points = [points_of[e] for e in pool]
    group_end = [0] * len(pool)  # first position with fewer points than position i
    end = len(pool)
    for i in range(len(pool) - 1, -1, -1):
        if i + 1 < len(pool) and points[i + 1] != points[i]:
            end = i + 1
        group_end[i] = end

    def candidates(p: int, remaining: list[int]) -> ClosestInGroupFirst:
        return ClosestInGroupFirst(remaining, bisect_left(remaining, group_end[p]))

    def repeat(a: int, b: int) -> bool:
        return frozenset((pool[a], pool[b])) in met

    pairs = pair_positions(len(pool), candidates, repeat, PAIRING_SEARCH_BUDGET)
    return [(pool[a], pool[b]) for a, b in pairs]


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, SwissStage)
    seed = {e: i + 1 for i, e in enumerate(entrants)}
    matches: list[MatchPlan] = []
    rounds: list[RoundInfo] = []
    byes: dict[str, int] = {}
    met: set[frozenset[str]] = set()
    # tallies of the rounds played so far, kept up to date round by round (re-tallying
    # every earlier round before each one made a 10-round plan quadratic in the rounds)
    so_far = tally_matches([], st.scoring, entrants)
    done = len(entrants) < 2
    for r in range(1, st.rounds + 1):
        if len(entrants) < 2:
            break
        points = {e: so_far[e].points + byes.get(e, 0) * st.scoring.bye_points for e in entrants}
        order = sorted(entrants, key=lambda e: (-points[e], seed[e]))
        place = {e: i for i, e in enumerate(order)}
        pool = list(order)
        bye: str | None = None
        if len(pool) % 2:
            fewest = min(byes.get(e, 0) for e in pool)
            bye = next(e for e in reversed(pool) if byes.get(e, 0) == fewest)
            pool.remove(bye)
        pairs = _pair_round(pool, points, met)
        board = ctx.round_board(r)
        this_round: list[MatchPlan] = []
        for a, b in pairs:
            if st.games_per_pairing == 1:
                if (_balance(so_far[b]), place[b]) < (_balance(so_far[a]), place[a]):
                    a, b = b, a
                orders: tuple[tuple[str, ...], ...] = ((a, b),)
            else:
                orders = two_player_orders(a, b, st.games_per_pairing)
            this_round.append(MatchPlan(st.name, r, "", len(this_round), (a, b), board, orders))
        matches.extend(this_round)
        rounds.append(RoundInfo(r, "", tuple(m.match_id for m in this_round), (bye,) if bye else (), board))
        results_now = [completed(results, m) for m in this_round]
        if any(g is None for g in results_now):
            break
        round_played: list[tuple[tuple[str, ...], list[GameRecord]]] = []
        for m, g in zip(this_round, results_now, strict=True):
            assert g is not None
            round_played.append((m.players, list(g)))
            met.add(frozenset(m.players))
        _add_round(so_far, round_played, st.scoring)
        if bye is not None:
            byes[bye] = byes.get(bye, 0) + 1
        done = r == st.rounds
    tallies = so_far  # every completed round, then the byes' points
    for e, n in byes.items():
        tallies[e].byes = n
        tallies[e].points += n * st.scoring.bye_points
    ranking = rank_entries(entrants, tallies, st.rank_by)
    return StageOutcome(
        matches=matches,
        rounds=rounds,
        done=done,
        standings=standing_rows(ranking, tallies),
        ranking=ranking,
        waits_for_every_result=True,  # round by round: the next once this one is complete
    )
