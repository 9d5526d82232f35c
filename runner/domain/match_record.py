"""``MatchRecord``: one match as the run knows it, the value every reader shares.

A match is planned (``MatchPlan``, from a stage planner), made playable
(``MatchSpec``: the plan plus board text, entry refs, limits, seed), and then
lives in the run store (state, attempt, worker, results, times). The store
returns that life as a ``MatchRecord``; the coordinator, ``tourney rerun``,
``tourney matches`` and the report all read the same value, so a field added
to the plan or to the store's life shows up everywhere at once.

A match the planner wants but the store does not hold yet (a report read
while the coordinator is between two plans) is ``MatchRecord.planned(plan)``:
state ``planned``, no spec, no results.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from runner.domain.match_values import GameRecord, MatchPlan, MatchResult, MatchSpec, VerdictKind
from runner.domain.scoring import game_result, is_system_error
from runner.errors import UsageError

#: the store's states whose official result counts for the tournament
RESULT_STATES = ("done", "failed")
#: the state of a match the planner wants and the store does not hold yet
PLANNED = "planned"


@dataclass(frozen=True)
class MatchRecord:
    """A match: its plan (and spec, once stored), its life in the store, and every kept result."""

    plan: MatchPlan
    spec: MatchSpec | None = None  # None only for a match not stored yet
    state: str = PLANNED  # pending | queued | running | done | failed | obsolete ("planned": not stored)
    attempt: int = 0
    worker: str = ""
    failures: int = 0
    result: MatchResult | None = None  # the official one
    superseded: tuple[MatchResult, ...] = ()  # older official results replaced by ``tourney accept``
    candidates: tuple[MatchResult, ...] = ()  # rerun candidates not official (never accepted)
    rejected: tuple[MatchResult, ...] = ()  # system_error results of failed attempts
    seq: int = 0
    lease_expires: float | None = None
    dispatched_at: float | None = None
    started_at: float | None = None
    finished_at: float | None = None
    updated_at: float | None = None

    @classmethod
    def planned(cls, plan: MatchPlan) -> MatchRecord:
        return cls(plan)

    # -- the plan's fields, read through ---------------------------------------------
    @property
    def match_id(self) -> str:
        return self.plan.match_id

    @property
    def stage(self) -> str:
        return self.plan.stage

    @property
    def round(self) -> int:
        return self.plan.round

    @property
    def bracket(self) -> str:
        return self.plan.bracket

    @property
    def pairing(self) -> int:
        return self.plan.pairing

    @property
    def players(self) -> tuple[str, ...]:
        return self.plan.players

    @property
    def board_id(self) -> str:
        return self.plan.board_id

    @property
    def orders(self) -> tuple[tuple[str, ...], ...]:
        return self.plan.orders

    # -- the result ---------------------------------------------------------------------
    @property
    def games(self) -> tuple[GameRecord, ...]:
        """The official games, once the match counts (done, or failed with its system_error games)."""
        if self.result is None or self.state not in RESULT_STATES:
            return ()
        return tuple(self.result.games)

    @property
    def stored(self) -> bool:
        """Whether the store holds this match (its life fields mean something)."""
        return self.state != PLANNED

    @property
    def finished(self) -> bool:
        """Played to a result that counts (a failed match holds only a system_error result)."""
        return bool(self.games) and self.state != "failed"

    @property
    def failed(self) -> bool:
        return self.state == "failed"

    def game_wins(self) -> dict[str, int]:
        """Games won per player (a verdict against the opponent counts, as in the standings)."""
        wins = dict.fromkeys(self.players, 0)
        for g in self.games:
            for p in g.order:
                if p in wins and not is_system_error(g) and game_result(g, p) == "win":
                    wins[p] += 1
        return wins

    def total_scores(self) -> dict[str, int]:
        totals = dict.fromkeys(self.players, 0)
        for g in self.games:
            for name, s in g.scores.items():
                if name in totals:
                    totals[name] += s
        return totals

    def draws(self) -> int:
        return sum(
            1
            for g in self.games
            if not is_system_error(g) and all(game_result(g, p) == "tie" for p in g.order)
        )

    def leaders(self) -> tuple[str, ...]:
        """Players with the most game wins (all of them when level, none before a result)."""
        if not self.games:
            return ()
        wins = self.game_wins()
        best = max(wins.values())
        return tuple(p for p in self.players if wins[p] == best)

    def result_text(self) -> str:
        """``"2-0"``, ``"1-1 (1 draw)"``; ``"-"`` while there is no result."""
        if not self.games:
            return "-"
        wins = self.game_wins()
        text = "-".join(str(wins[p]) for p in self.players)
        d = self.draws()
        if d:
            text += f" ({d} draw{'s' if d > 1 else ''})"
        return text

    def verdicts(self) -> list[str]:
        """``"timeout: bob"`` for every game not ended by the rules."""
        out = []
        for g in self.games:
            v = g.verdict
            if v.kind is not VerdictKind.NORMAL:
                out.append(f"{v.kind.value}: {v.player}" if v.player else v.kind.value)
        return out

    def bounded(self) -> list[str]:
        """``"game 2 stopped at max_moves"`` per game stopped at its bound (``GameRecord.stopped_by``)."""
        games = enumerate(self.games, start=1)
        return [f"game {k} stopped at {g.stopped_by}" for k, g in games if g.stopped_by]


class UnknownMatch(UsageError, KeyError):
    """No match, or more than one, answers to the id asked for."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else ""


def find_match(records: Sequence[MatchRecord], wanted: str) -> MatchRecord:
    """The match whose id is ``wanted`` or the only one starting with it; ``UnknownMatch`` otherwise."""
    hits = [r for r in records if r.match_id.startswith(wanted)] if wanted else []
    exact = [r for r in hits if r.match_id == wanted]
    if exact:
        return exact[0]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise UnknownMatch(f"no match {wanted!r} in this run (see `tourney matches RUN_DIR`)")
    shown = ", ".join(r.match_id for r in hits[:6]) + (", ..." if len(hits) > 6 else "")
    raise UnknownMatch(f"{wanted!r} is ambiguous: {len(hits)} matches start with it ({shown})")
