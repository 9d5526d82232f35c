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

from runner.config import SwissStage
from runner.domain.contracts import GameRecord, MatchPlan
from runner.domain.scoring import Tally, rank_entries, tally_matches
from runner.domain.stages.base import RoundInfo
from runner.domain.stages.common import (
    Results,
    StageContext,
    StageOutcome,
    completed,
    pair_off,
    standing_rows,
    two_player_orders,
)


def _tallies(
    played: list[tuple[tuple[str, ...], list[GameRecord]]],
    byes: dict[str, int],
    st: SwissStage,
    entrants: list[str],
) -> dict[str, Tally]:
    tallies = tally_matches(played, st.scoring, entrants)
    for e, n in byes.items():
        tallies[e].byes = n
        tallies[e].points += n * st.scoring.bye_points
    return tallies


def _balance(t: Tally) -> int:
    """Games moved first minus games moved second."""
    return 2 * t.firsts - t.games


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, SwissStage)
    seed = {e: i + 1 for i, e in enumerate(entrants)}
    matches: list[MatchPlan] = []
    rounds: list[RoundInfo] = []
    played: list[tuple[tuple[str, ...], list[GameRecord]]] = []
    byes: dict[str, int] = {}
    met: set[frozenset[str]] = set()
    done = len(entrants) < 2
    for r in range(1, st.rounds + 1):
        if len(entrants) < 2:
            break
        tallies = _tallies(played, byes, st, entrants)
        order = sorted(entrants, key=lambda e: (-tallies[e].points, seed[e]))
        pool = list(order)
        bye: str | None = None
        if len(pool) % 2:
            fewest = min(byes.get(e, 0) for e in pool)
            bye = next(e for e in reversed(pool) if byes.get(e, 0) == fewest)
            pool.remove(bye)
        points = {e: tallies[e].points for e in pool}

        def prefer(p: str, rest: list[str], points: dict[str, float] = points) -> list[str]:
            group = [x for x in rest if points[x] == points[p]]
            target = (len(group) + 1) // 2 - 1  # p is the group's first: its partner sits half a group down
            in_group = sorted(range(len(group)), key=lambda i: (abs(i - target), i))
            return [group[i] for i in in_group] + [x for x in rest if points[x] != points[p]]

        pairs = pair_off(pool, prefer, lambda a, b: frozenset((a, b)) in met)
        board = ctx.round_board(r)
        this_round: list[MatchPlan] = []
        for a, b in pairs:
            if st.games_per_pairing == 1:
                if (_balance(tallies[b]), order.index(b)) < (_balance(tallies[a]), order.index(a)):
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
        for m, g in zip(this_round, results_now, strict=True):
            assert g is not None
            played.append((m.players, list(g)))
            met.add(frozenset(m.players))
        if bye is not None:
            byes[bye] = byes.get(bye, 0) + 1
        done = r == st.rounds
    tallies = _tallies(played, byes, st, entrants)
    ranking = rank_entries(entrants, tallies, st.rank_by)
    return StageOutcome(
        matches=matches,
        rounds=rounds,
        done=done,
        standings=standing_rows(ranking, tallies),
        ranking=ranking,
    )
