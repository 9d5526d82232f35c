"""Knockout: single elimination with standard seeding.

The bracket has P slots, P the smallest power of two holding every entrant,
in the standard order (1 v P, and seeds 1 and 2 can only meet in the final);
the P-N top seeds get a first-round bye. Each match has ``games_per_pairing``
games (each side first equally often) on the round's board and goes to the
first of ``match_win_by`` on which the two differ; a tied match goes to the
better seed (noted). Standings: the champion, the runner-up, then by the
round of elimination (later is better), inside each by ``rank_by``, then seed.
``advance: survivors`` (the default) is the champion alone.
"""

from __future__ import annotations

from runner.domain.match_values import GameRecord, MatchPlan
from runner.domain.scoring import match_winner, tally_matches
from runner.domain.stage_models import KnockoutStage
from runner.domain.stages.base import RoundInfo
from runner.domain.stages.common import (
    Results,
    StageContext,
    StageOutcome,
    completed,
    rank_in_tiers,
    standing_rows,
    two_player_orders,
)


def bracket_order(size: int) -> list[int]:
    """Seeds (1-based) in bracket slot order for a power-of-two ``size``: [1, 4, 2, 3] for 4."""
    order = [1]
    while len(order) < size:
        n = len(order) * 2
        order = [x for s in order for x in (s, n + 1 - s)]
    return order


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, KnockoutStage)
    seed = {e: i + 1 for i, e in enumerate(entrants)}
    size = 1
    while size < len(entrants):
        size *= 2
    slots: list[str | None] = [entrants[s - 1] if s <= len(entrants) else None for s in bracket_order(size)]
    matches: list[MatchPlan] = []
    rounds: list[RoundInfo] = []
    notes: list[str] = []
    played: list[tuple[tuple[str, ...], list[GameRecord]]] = []
    out_round: dict[str, int] = {}
    done = False
    r = 0
    while True:
        if len(slots) <= 1:
            done = True
            break
        r += 1
        board = ctx.round_board(r)
        nxt: list[str | None] = []
        byes: list[str] = []
        this_round: list[MatchPlan] = []
        pending = False
        for i in range(0, len(slots), 2):
            a, b = slots[i], slots[i + 1]
            if a is None or b is None:
                if a is not None or b is not None:
                    byes.append(a or b or "")
                nxt.append(a if a is not None else b)
                continue
            if seed[b] < seed[a]:
                a, b = b, a
            m = MatchPlan(
                st.name, r, "", len(this_round), (a, b), board, two_player_orders(a, b, st.games_per_pairing)
            )
            this_round.append(m)
            games = completed(results, m)
            if games is None:
                pending = True
                nxt.append(None)
                continue
            played.append(((a, b), list(games)))
            w = match_winner(games, a, b, st.scoring, st.match_win_by)
            if w is None:
                w = a
                notes.append(f"round {r}: {a} v {b} tied; the better seed {a} goes through")
            out_round[b if w == a else a] = r
            nxt.append(w)
        matches.extend(this_round)
        rounds.append(RoundInfo(r, "", tuple(m.match_id for m in this_round), tuple(byes), board))
        if pending:
            break
        slots = nxt
    alive = [e for e in entrants if e not in out_round]
    tiers = [alive] + [
        [e for e in entrants if out_round.get(e) == rr]
        for rr in sorted(set(out_round.values()), reverse=True)
    ]
    tallies = tally_matches(played, st.scoring, entrants)
    ranking = rank_in_tiers(tiers, tallies, st.rank_by, seed)
    status = {e: f"eliminated in round {rr}" for e, rr in out_round.items()}
    if done and alive:
        status[alive[0]] = "champion"
    return StageOutcome(
        matches=matches,
        rounds=rounds,
        done=done,
        standings=standing_rows(
            ranking, tallies, status, {e: {"eliminated_round": float(rr)} for e, rr in out_round.items()}
        ),
        ranking=ranking,
        survivors=alive if done else None,
        notes=notes,
        waits_for_every_result=True,  # round by round: the next once this one is complete
    )
