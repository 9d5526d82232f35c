"""Elimination rounds as columns of bracket sections (terminal and HTML).

What happened to each player of a match is read off the plan rather than
re-derived from the stage's rules: if the player shows up in the next round
in the same bracket it stayed (or advanced), in another bracket it dropped
there, nowhere it is out, unless the finished stage lists it as advancing.
The planner is the single authority on advancement; the report only reads
its decisions, so a rules change cannot make the picture disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from runner.domain.match_record import MatchRecord
from runner.domain.stages.base import StageState
from runner.report.model import ELIMINATION_PLANNERS, ReportData

BRACKET_ORDER = {"winners": 0, "": 1, "losers": 2}


@dataclass(frozen=True)
class BracketMatch:
    match: MatchRecord
    outcome: dict[str, str] = field(default_factory=dict)  # player -> "stays", "drops to losers", "out", ...


@dataclass(frozen=True)
class BracketSection:
    bracket: str
    board_id: str
    matches: list[BracketMatch]
    byes: tuple[str, ...] = ()


@dataclass(frozen=True)
class BracketRound:
    round: int
    sections: list[BracketSection]


def is_bracket_stage(stage: StageState) -> bool:
    return stage.planner in ELIMINATION_PLANNERS


def bracket_label(bracket: str) -> str:
    return f"{bracket} bracket" if bracket else "bracket"


def bracket_rounds(data: ReportData, stage: StageState) -> list[BracketRound]:
    """The stage's rounds in order, each with its sections (winners first)."""
    by_round: dict[int, list[BracketSection]] = {}
    for info in stage.rounds:
        ms = [data.match(mid) for mid in info.match_ids]
        section = BracketSection(
            info.bracket, info.board_id, [BracketMatch(m) for m in ms if m is not None], tuple(info.byes)
        )
        by_round.setdefault(info.round, []).append(section)
    # where everyone is in each round: player -> bracket
    present: dict[int, dict[str, str]] = {}
    for rnd, sections in by_round.items():
        where = present.setdefault(rnd, {})
        for sec in sections:
            for bm in sec.matches:
                where.update(dict.fromkeys(bm.match.players, sec.bracket))
            where.update(dict.fromkeys(sec.byes, sec.bracket))
    single = all(s.bracket == "" for secs in by_round.values() for s in secs)
    out: list[BracketRound] = []
    for rnd in sorted(by_round):
        sections = []
        for sec in sorted(by_round[rnd], key=lambda s: (BRACKET_ORDER.get(s.bracket, 1), s.bracket)):
            matches = [
                BracketMatch(bm.match, _outcomes(bm.match, sec.bracket, present.get(rnd + 1), stage, single))
                for bm in sec.matches
            ]
            sections.append(BracketSection(sec.bracket, sec.board_id, matches, sec.byes))
        out.append(BracketRound(rnd, sections))
    return out


def _outcomes(
    m: MatchRecord, bracket: str, next_round: dict[str, str] | None, stage: StageState, single: bool
) -> dict[str, str]:
    if not m.finished:
        return {}
    out: dict[str, str] = {}
    for p in m.players:
        if next_round is not None and p in next_round:
            there = next_round[p]
            out[p] = (
                ("advances" if single else "stays") if there == bracket else f"drops to {there or 'next'}"
            )
        elif stage.status == "done":
            out[p] = "advances" if p in stage.advancing else "out"
        elif next_round is not None and bracket in next_round.values():
            out[p] = "out"  # the bracket went on without it
        else:
            out[p] = ""  # the bracket's next round is not planned (yet)
    return out
