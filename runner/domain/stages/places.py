"""Places as the contest's own rules give them: shared (``=1``) where the rules leave a tie.

A stage's ranking keeps its tie groups (``Ranking.groups``: entrants equal on
every rank key before any ``seed`` or ``name`` key). The tournament composes
them the way it composes the order (``runner.domain.stages.tournament``): after
each finished stage, that stage's groups for its own entrants, then every
earlier group with those entrants taken out. So a tiebreak stage splits the
group it was given, or leaves it tied; and what is left tied at the end is a
shared place. Seed 002 says so in as many words: "If there are STILL ties -
I'll ... award duplicate cash prizes to those still involved!".

A group is not a tie when the stage's ``rank_by`` names ``seed`` or ``name``
itself: then the contest's rule orders it. The implicit order by seed after
the last key only makes the listing reproducible; it is no rule, so the
place stays shared.

Each place carries the stage whose ranking decided it, that stage's rank
keys with the entry's values, and for a shared place the rule that left it
tied. Ratings (Elo, openskill) are never part of it: they are information
shown beside the contest's ranking.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from runner.domain.scoring import Ranking

if TYPE_CHECKING:
    from runner.domain.stages.base import StageState

DECIDING_KEYS = ("seed", "name")  # total orders: a rank_by naming one leaves no tie behind it
# planners that rank by progress in a bracket first (tiers), then by rank_by inside each tier
BRACKET_PLANNERS = {"potm_elimination": "the bracket reached", "knockout": "the round reached"}


@dataclass(frozen=True)
class TieGroup:
    """Entries the ranking so far cannot tell apart, and the stage that last ranked them."""

    entries: tuple[str, ...]
    stage: str


@dataclass(frozen=True)
class Place:
    place: int  # 1-based; the members of a shared place all hold its first position
    entry: str
    shared: bool
    stage: str  # the stage whose ranking placed the entry ("" if none did)
    keys: dict[str, float] = field(default_factory=dict)  # that stage's rank_by values
    tie_rule: str = ""  # for a shared place: why the contest's rules leave it tied
    tier: str = ""  # in a bracket stage, how far the entry got ("eliminated in round 7"), ranked first

    @property
    def label(self) -> str:
        """``=1`` for a shared first place, ``1`` otherwise."""
        return f"={self.place}" if self.shared else str(self.place)

    def to_dict(self) -> dict[str, Any]:
        return {
            "place": self.place,
            "label": self.label,
            "entry": self.entry,
            "shared": self.shared,
            "stage": self.stage,
            "keys": dict(self.keys),
            "tie_rule": self.tie_rule,
            "tier": self.tier,
        }


def stage_groups(ranking: Ranking, stage: str, rank_by: Sequence[str]) -> list[TieGroup]:
    """A stage's ranking as tie groups; a rank_by naming ``seed``/``name`` breaks every tie."""
    if any(k in DECIDING_KEYS for k in rank_by):
        return [TieGroup((e,), stage) for e in ranking.order]
    return [TieGroup(tuple(g), stage) for g in ranking.groups]


def compose_groups(previous: Sequence[TieGroup], stage: Sequence[TieGroup]) -> list[TieGroup]:
    """The groups after a stage: its own first, then the earlier ones without its entrants."""
    ranked = {e for g in stage for e in g.entries}
    rest = [TieGroup(tuple(e for e in g.entries if e not in ranked), g.stage) for g in previous]
    return [*stage, *(g for g in rest if g.entries)]


def key_values(row: Any, keys: Sequence[str]) -> dict[str, float]:
    """The values a standings row was ranked on (``row``: a ``StandingRow``)."""
    out: dict[str, float] = {}
    for k in keys:
        if k in DECIDING_KEYS:
            continue
        if k in row.extra:
            out[k] = float(row.extra[k])
        elif hasattr(row, k):
            out[k] = float(getattr(row, k))
    return out


def tie_rule(group: TieGroup, keys: Sequence[str], state: StageState | None) -> str:
    """Why a shared place is shared, in words."""
    shown = [k for k in keys if k not in DECIDING_KEYS]
    rule = f"tied on {', '.join(shown)} in stage {group.stage}"
    if state is not None and state.planner == "permutations":
        rule += " after its N-player games"
    return rule + "; no later rule of this contest separates them"


def final_places(
    groups: Sequence[TieGroup],
    stages: Sequence[StageState],
    rank_by: Mapping[str, Sequence[str]],
) -> list[Place]:
    """The final places from the composed tie groups (``rank_by``: each stage's keys)."""
    by_name = {s.name: s for s in stages}
    out: list[Place] = []
    pos = 1
    for g in groups:
        state = by_name.get(g.stage)
        keys = list(rank_by.get(g.stage, ()))
        rows = {r.entry: r for r in state.standings} if state is not None else {}
        shared = len(g.entries) > 1
        rule = tie_rule(g, keys, state) if shared else ""
        bracket = state is not None and state.planner in BRACKET_PLANNERS
        for e in g.entries:
            row = rows.get(e)
            values = key_values(row, keys) if row is not None else {}
            tier = row.status if bracket and row is not None else ""
            out.append(Place(pos, e, shared, g.stage, values, rule, tier))
        pos += len(g.entries)
    return out


def place_labels(groups: Sequence[Sequence[str]]) -> dict[str, str]:
    """``{entry: "=2"}`` for a ranking's tie groups (one stage's standings)."""
    out: dict[str, str] = {}
    pos = 1
    for g in groups:
        for e in g:
            out[e] = f"={pos}" if len(g) > 1 else str(pos)
        pos += len(g)
    return out


def ranking_rule(stages: Sequence[tuple[str, Sequence[str], bool, str]]) -> str:
    """The contest's own ranking rule in words, from ``(stage name, rank_by, is a tiebreak, planner)``:
    the last ranking stage's keys (after the progress in its bracket), then the tiebreak stages."""
    main = [(n, keys, planner) for n, keys, tiebreak, planner in stages if not tiebreak]
    if not main:
        return ""
    name, keys, planner = main[-1]
    tiers = f"{BRACKET_PLANNERS[planner]}, then " if planner in BRACKET_PLANNERS else ""
    rule = f"stage {name} by {tiers}{', '.join(keys)}"
    after = False
    for n, k, tiebreak, _ in stages:
        if n == name:
            after = True
        elif after and tiebreak:
            rule += f"; a tie for first then goes to stage {n} by {', '.join(k)}"
    return rule


def format_keys(values: Mapping[str, float]) -> str:
    """``wins 12, score 3400``."""
    return ", ".join(f"{k} {v:g}" for k, v in values.items())
