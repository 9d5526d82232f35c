"""Types shared by the stage planners and the coordinator.

The whole tournament is a pure function of (config, results so far):
``runner.domain.stages.tournament.advance(config, results)`` returns every match
that exists at this point (finished or not), each stage's state and, once a
stage is complete, its standings. The coordinator only stores results and
dispatches the matches that lack one. Resume, replanning after an accepted
rerun, and auditing all fall out of that purity: the same inputs always give
the same matches with the same ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from runner.domain.match_values import GameRecord, MatchPlan
from runner.domain.spsa import TuningPath
from runner.domain.stages.places import Place


class PlanWindow(Protocol):
    """A stage planned lazily, kept up to date one result at a time (a round robin:
    ``runner.domain.stages.round_robin.RoundRobinWindow``). What it plans is exactly what
    planning the stage again from all the results would add."""

    def on_result(self, match_id: str, games: Sequence[GameRecord]) -> list[MatchPlan]:
        """``match_id`` has ``games`` as its official result now: the matches planned next."""
        ...

    @property
    def total(self) -> int:
        """The matches the stage will have once every one is planned (for progress)."""
        ...


@dataclass(frozen=True)
class StandingRow:
    rank: int
    entry: str
    games: int
    wins: int
    ties: int
    losses: int
    points: float  # from the stage's points table (seed 000 bonuses + game score, ...)
    score: int  # sum of game scores
    verdicts_against: int
    extra: dict[str, float] = field(default_factory=dict)  # buchholz, head_to_head, seed ...
    status: str = ""  # "advanced", "eliminated", "excluded: <reason>", ...

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "entry": self.entry,
            "games": self.games,
            "wins": self.wins,
            "ties": self.ties,
            "losses": self.losses,
            "points": self.points,
            "score": self.score,
            "verdicts_against": self.verdicts_against,
            "extra": dict(self.extra),
            "status": self.status,
        }


@dataclass(frozen=True)
class RoundInfo:
    """What a round was: its matches, byes and the board it used (for reports)."""

    round: int
    bracket: str
    match_ids: tuple[str, ...]
    byes: tuple[str, ...] = ()
    board_id: str = ""


@dataclass
class StageState:
    name: str
    planner: str
    status: str  # "skipped" (condition false), "waiting" (earlier stage unfinished), "running", "done"
    entrants: list[str] = field(default_factory=list)  # in seed order
    rounds: list[RoundInfo] = field(default_factory=list)
    standings: list[StandingRow] = field(default_factory=list)  # set once done (partial while running)
    advancing: list[str] = field(default_factory=list)
    excluded: dict[str, str] = field(default_factory=dict)  # entry -> reason (system_test)
    notes: list[str] = field(default_factory=list)
    # the stage ranking's tie groups, shared places (runner.domain.stages.places); set once done
    groups: list[list[str]] = field(default_factory=list)
    #: one line on where the stage stands (``StageOutcome.summary``): the live progress shows it
    summary: str = ""
    #: an spsa stage's θ over its pairs (``StageOutcome.tuning``): the report plots it
    tuning: TuningPath | None = None


@dataclass
class TournamentState:
    matches: list[MatchPlan]  # every match that exists now, in plan order
    stages: list[StageState]
    finished: bool
    final_ranking: list[str] = field(default_factory=list)  # set once finished
    final_places: list[Place] = field(default_factory=list)  # the same, with shared places marked
    #: the running stage plans nothing new before all its matches are complete
    #: (``StageOutcome.waits_for_every_result``): no need to re-plan while some are in flight
    waits_for_every_result: bool = False
    #: the running stage's lazy plan (None: the stage plans everything it can now): the
    #: coordinator feeds it each result and adds the matches it plans, without re-planning
    window: PlanWindow | None = None
