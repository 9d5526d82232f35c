"""System test: each entry must finish a game without a verdict against it.

One match per entry and board, one game: the entry moves first against a
mirror copy of itself (seat name ``<entry>~mirror``, the same program; see
``TournamentConfig.resolve_player``) or against the stage's ``reference``
seed opponent. Any verdict charged to the entry, in either seat, excludes it
with the verdict's kind and detail as the reason. A verdict against the
reference does not count against the entry. Entries keep their seed order;
the excluded ones follow.
"""

from __future__ import annotations

from runner.domain.match_values import MatchPlan, VerdictKind
from runner.domain.scoring import Ranking, tally_matches
from runner.domain.stage_models import MIRROR_SUFFIX, SystemTestStage
from runner.domain.stages.base import RoundInfo
from runner.domain.stages.common import Results, StageContext, StageOutcome, completed, standing_rows


def plan(ctx: StageContext, entrants: list[str], results: Results) -> StageOutcome:
    st = ctx.stage
    assert isinstance(st, SystemTestStage)
    boards = ctx.boards_for_round(1)
    matches: list[MatchPlan] = []
    for i, e in enumerate(entrants):
        other = st.reference or e + MIRROR_SUFFIX
        for j, board in enumerate(boards):
            matches.append(MatchPlan(st.name, 1, "", i * len(boards) + j, (e, other), board, ((e, other),)))
    excluded: dict[str, str] = {}
    played = []
    done = True
    for m in matches:
        games = completed(results, m)
        if games is None:
            done = False
            continue
        e = m.players[0]
        played.append(((e,), games))
        for g in games:
            v = g.verdict
            if e not in excluded and v.kind is not VerdictKind.NORMAL and v.player in (e, e + MIRROR_SUFFIX):
                excluded[e] = f"{v.kind.value}: {v.detail}" if v.detail else v.kind.value
    tallies = tally_matches(played, st.scoring, entrants)
    order = [e for e in entrants if e not in excluded] + [e for e in entrants if e in excluded]
    seeds = {e: i + 1 for i, e in enumerate(entrants)}
    ranking = Ranking(
        order=order, groups=[[e] for e in order], values={e: {"seed": float(seeds[e])} for e in order}
    )
    status = {e: f"excluded: {r}" for e, r in excluded.items()}
    if done:
        status.update({e: "passed" for e in entrants if e not in excluded})
    return StageOutcome(
        matches=matches,
        rounds=[RoundInfo(1, "", tuple(m.match_id for m in matches), board_id=",".join(boards))],
        done=done,
        standings=standing_rows(ranking, tallies, status),
        ranking=ranking,
        excluded=excluded,
        notes=[f"{e} excluded: {r}" for e, r in excluded.items()],
        waits_for_every_result=True,  # its matches all exist at once
    )
