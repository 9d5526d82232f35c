"""POTM elimination (seed 000 stage 2): a winners and a losers bracket by loss count.

The rules, as docs/config.md and seed 000 state them, with every open point
decided (docs/config.md repeats them for organisers):

Brackets. Every entrant starts in the winners bracket (no loss). A lost match
moves a winners-bracket member to the losers bracket and eliminates a
losers-bracket member. A won or tied match keeps the member where it is.

Rounds. Rounds are numbered for the whole stage; in each round every active
bracket plays once, on that round's board (the same for both brackets, a
different one every round). Newcomers to the losers bracket play there from
the next round. The winners bracket plays while it has more than 2K members.
The losers bracket plays while it has two or more members and either the
winners bracket still plays or both brackets together hold more than 3K.
The stage ends when neither plays; both brackets' members are the survivors
(at most 2K from the winners bracket, at most 3K in all, at least K+2).

Pairing, per round and bracket. Members are sorted by their original seed.
If the count is odd, the highest-seeded member that has never had a bye gets
one (a bye is a round without a match, in either bracket, and counts as
neither win nor loss). If every member has already had its bye, nobody gets
a second: the highest-seeded member instead plays an extra match against the
lowest-seeded member it has not met (else the lowest-seeded member), who
thus plays twice that round (losing either counts as one loss). The rest
pair best against worst, second against second-worst ...; to avoid a repeat
pairing the search keeps that order as far as it can: the best member takes
the worst partner it has not met such that everyone else can still be paired
without repeats, and so on down (backtracking). Only when no repeat-free
pairing exists are repeats allowed, as few as possible.

Matches. ``games_per_pairing`` games (2: each side first once) on the round's
board. The match goes to the first of ``match_win_by`` (default: game wins,
as seed 000 says "If an entry wins or ties, it advances") on which the two
differ; equal on all is a tie, and a tied match keeps both where they are.

Ties that loop. A bracket that must still shrink but produced no loser for
``stall_rounds`` consecutive rounds in which it had to shrink is cut by seed
(the losers bracket has to shrink only once the winners bracket has stopped;
its rounds before that never count towards a stall): the winners
bracket keeps its 2K best seeds (the rest drop to the losers bracket); the
losers bracket keeps the best seeds that fit in 3K (the rest are
eliminated). ``max_rounds``, when set, cuts both brackets the same way.

Standings: the survivors (winners bracket, then losers bracket), then the
eliminated, the last eliminated first; inside each of those tiers by the
stage's ``rank_by`` over the stage's games, then by seed.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from runner.domain.match_values import GameRecord, MatchPlan
from runner.domain.scoring import match_winner, tally_matches
from runner.domain.stage_models import EliminationStage
from runner.domain.stages.base import RoundInfo
from runner.domain.stages.common import (
    PAIRING_SEARCH_BUDGET,
    Results,
    StageContext,
    StageOutcome,
    completed,
    rank_in_tiers,
    standing_rows,
    two_player_orders,
)
from runner.domain.stages.pairing import LastFirst, pair_positions

WINNERS = "winners"
LOSERS = "losers"


@dataclass
class BracketPairing:
    pairs: list[tuple[str, str]]
    bye: str | None = None
    extra: bool = False  # the last pair is the bye-exhaustion extra match


def pair_bracket(
    members: list[str], seed: dict[str, int], had_bye: set[str], met: set[frozenset[str]]
) -> BracketPairing:
    """One bracket's pairing for one round (see the module docstring)."""
    members = sorted(members, key=seed.__getitem__)
    bye: str | None = None
    extra_player: str | None = None
    pool = members
    if len(members) % 2:
        fresh = [m for m in members if m not in had_bye]
        if fresh:
            bye = fresh[0]
            pool = [m for m in members if m != bye]
        else:
            extra_player, pool = members[0], members[1:]

    def repeat(a: str, b: str) -> bool:
        return frozenset((a, b)) in met

    # best against worst: each first unpaired member's candidates are the rest, worst first
    # (positions in ``pool``, seed order; ``LastFirst`` keeps a step O(1) at 10,000 members)
    found = pair_positions(
        len(pool),
        lambda _p, remaining: LastFirst(remaining),
        lambda a, b: repeat(pool[a], pool[b]),
        PAIRING_SEARCH_BUDGET,
    )
    pairs = [(pool[a], pool[b]) for a, b in found]
    if extra_player is not None:
        partner = next((m for m in reversed(pool) if not repeat(extra_player, m)), pool[-1])
        pairs.append((extra_player, partner))
    return BracketPairing(pairs=pairs, bye=bye, extra=extra_player is not None)


@dataclass
class _State:
    bracket: dict[str, str]  # entry -> winners | losers | out
    out_round: dict[str, int] = field(default_factory=dict)
    bye_round: dict[str, int] = field(default_factory=dict)
    met: set[frozenset[str]] = field(default_factory=set)
    stall: dict[str, int] = field(default_factory=lambda: {WINNERS: 0, LOSERS: 0})

    def members(self, which: str, order: list[str]) -> list[str]:
        return [e for e in order if self.bracket[e] == which]


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, EliminationStage)
    k = st.k
    seed = {e: i + 1 for i, e in enumerate(entrants)}
    s = _State(bracket={e: WINNERS for e in entrants})
    matches: list[MatchPlan] = []
    rounds: list[RoundInfo] = []
    notes: list[str] = []
    played: list[tuple[tuple[str, ...], list[GameRecord]]] = []
    done = False
    if len(entrants) <= 2 * k:
        notes.append(f"{len(entrants)} entrants and k={k}: no elimination round is needed")
    r = 0
    while True:
        winners, losers = s.members(WINNERS, entrants), s.members(LOSERS, entrants)
        w_play = len(winners) > 2 * k
        l_play = len(losers) >= 2 and (w_play or len(winners) + len(losers) > 3 * k)
        if not (w_play or l_play):
            done = True
            break
        if st.max_rounds is not None and r >= st.max_rounds:
            notes.append(f"round cap {st.max_rounds} reached")
            _cut(s, WINNERS, entrants, k, r, notes)
            _cut(s, LOSERS, entrants, k, r, notes)
            done = True
            break
        r += 1
        board = ctx.round_board(r)
        this_round: list[tuple[str, MatchPlan]] = []
        for which, members, active in ((WINNERS, winners, w_play), (LOSERS, losers, l_play)):
            if not active:
                continue
            bp = pair_bracket(members, seed, set(s.bye_round), s.met)
            if bp.bye is not None:
                s.bye_round[bp.bye] = r
            if bp.extra:
                a, b = bp.pairs[-1]
                notes.append(
                    f"round {r} {which}: every member had a bye; {a} plays an extra match against {b}"
                )
            ids = []
            for i, (a, b) in enumerate(bp.pairs):
                m = MatchPlan(
                    st.name, r, which, i, (a, b), board, two_player_orders(a, b, st.games_per_pairing)
                )
                this_round.append((which, m))
                ids.append(m.match_id)
            rounds.append(RoundInfo(r, which, tuple(ids), (bp.bye,) if bp.bye else (), board))
        matches.extend(m for _, m in this_round)
        outcomes = [(which, m, completed(results, m)) for which, m in this_round]
        if any(g is None for _, _, g in outcomes):
            break
        losers_now: dict[str, str] = {}
        for which, m, games in outcomes:
            assert games is not None
            played.append((m.players, list(games)))
            a, b = m.players
            s.met.add(frozenset((a, b)))
            w = match_winner(games, a, b, st.scoring, st.match_win_by)
            if w is not None:
                losers_now[b if w == a else a] = which
        for e, which in losers_now.items():
            if which == WINNERS:
                s.bracket[e] = LOSERS
            else:
                s.bracket[e] = "out"
                s.out_round[e] = r
        for which, active in ((WINNERS, w_play), (LOSERS, l_play)):
            if not active:
                continue
            # during the winners phase the losers bracket has no size to reach: such a round
            # cannot stall it, so the stall count only runs over rounds that had to shrink it
            must_shrink = which == WINNERS or not w_play
            if not must_shrink or which in losers_now.values():
                s.stall[which] = 0
            else:
                s.stall[which] += 1
            if s.stall[which] >= st.stall_rounds:
                notes.append(f"round {r}: {which} bracket produced no loser in {st.stall_rounds} rounds")
                _cut(s, which, entrants, k, r, notes)
                s.stall[which] = 0

    tallies = tally_matches(played, st.scoring, entrants)
    eliminated_rounds = sorted(set(s.out_round.values()), reverse=True)
    tiers = [s.members(WINNERS, entrants), s.members(LOSERS, entrants)] + [
        [e for e in entrants if s.out_round.get(e) == rr] for rr in eliminated_rounds
    ]
    ranking = rank_in_tiers(tiers, tallies, st.rank_by, seed)
    survivors = s.members(WINNERS, entrants) + s.members(LOSERS, entrants)
    status = {}
    extra: dict[str, dict[str, float]] = {}
    for e in entrants:
        where = s.bracket[e]
        if where == "out":
            status[e] = f"eliminated in round {s.out_round[e]}"
        else:
            status[e] = f"{'survivor' if done else 'in'} ({where} bracket)"
        ex = {"losses": float({WINNERS: 0, LOSERS: 1}.get(where, 2))}
        if e in s.bye_round:
            ex["bye_round"] = float(s.bye_round[e])
        if e in s.out_round:
            ex["eliminated_round"] = float(s.out_round[e])
        extra[e] = ex
    return StageOutcome(
        matches=matches,
        rounds=rounds,
        done=done,
        standings=standing_rows(ranking, tallies, status, extra),
        ranking=ranking,
        survivors=[e for e in ranking.order if e in set(survivors)],
        notes=notes,
        waits_for_every_result=True,  # round by round: the next once this one is complete
    )


def _cut(s: _State, which: str, entrants: list[str], k: int, r: int, notes: list[str]) -> None:
    """Cut a bracket to its size by seed (winners: to 2K, dropping the rest; losers: to fit in 3K)."""
    members = s.members(which, entrants)
    if which == WINNERS:
        keep = 2 * k
    else:
        keep = max(0, 3 * k - len(s.members(WINNERS, entrants)))
    for e in members[keep:]:
        if which == WINNERS:
            s.bracket[e] = LOSERS
            notes.append(f"round {r}: {e} cut from the winners bracket by seed")
        else:
            s.bracket[e] = "out"
            s.out_round[e] = r
            notes.append(f"round {r}: {e} cut from the losers bracket by seed")
