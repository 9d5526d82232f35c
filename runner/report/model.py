"""Everything a report shows, gathered once: ``ReportData``.

Every renderer (terminal tables, the HTML page, the CSV/JSON exports) is a
pure function of a ``ReportData``, so they agree with each other and tests
can build one by hand without a run directory. ``load_report_data`` is the
only place that reads a run: the store's ``MatchRecord``s, the frozen config
bound to the entries it resolved to (``resolved.json``: no entries tree
needed), and the tournament state that ``advance(config, results)`` derives
from them (the same pure function the coordinator plans with).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.domain.disputes import DisputeLog
from runner.domain.games import get_game
from runner.domain.games.base import Game
from runner.domain.match_record import MatchRecord, find_match
from runner.domain.match_values import GameRecord, VerdictKind
from runner.domain.ratings import EloRating, SkillRating, elo_ratings, openskill_ratings
from runner.domain.stage_models import (
    ELIMINATION_PLANNERS as ELIMINATION_PLANNERS,  # re-exported for brackets
)
from runner.domain.stages.base import StageState, TournamentState
from runner.domain.timing import TimingSummary, timing_summary

if TYPE_CHECKING:
    from runner.config import TournamentConfig

#: the verdicts a clock gives: only these depend on how busy the machine was
CLOCK_VERDICTS = frozenset({VerdictKind.TIMEOUT, VerdictKind.CPU_LIMIT})
#: games a stage's "decided by the move limit" line names before "and N more"
CLOCK_GAMES_NAMED = 3


@dataclass(frozen=True)
class RatingTable:
    """The ratings of one group of games: Elo for two-player games,
    openskill when some game had more players, none without games."""

    kind: str  # "elo" | "openskill" | "none"
    elo: dict[str, EloRating] = field(default_factory=dict)
    skill: dict[str, SkillRating] = field(default_factory=dict)

    @property
    def title(self) -> str:
        return {"elo": "Elo ± 95%", "openskill": "openskill mu ± sigma (ordinal)"}.get(self.kind, "rating")

    def label(self, entry: str) -> str:
        if self.kind == "elo" and entry in self.elo:
            r = self.elo[entry]
            return f"{r.elo:.0f} ± {r.ci95:.0f}"
        if self.kind == "openskill" and entry in self.skill:
            s = self.skill[entry]
            return f"{s.mu:.1f} ± {s.sigma:.1f} ({s.ordinal:.1f})"
        return ""

    def fields(self, entry: str) -> dict[str, float | None]:
        """Flat export fields: elo/elo_ci95 or mu/sigma/ordinal (none without ratings)."""
        if self.kind == "elo" and entry in self.elo:
            r = self.elo[entry]
            return {"elo": round(r.elo, 1), "elo_ci95": round(r.ci95, 1)}
        if self.kind == "openskill" and entry in self.skill:
            s = self.skill[entry]
            return {"mu": round(s.mu, 3), "sigma": round(s.sigma, 3), "ordinal": round(s.ordinal, 3)}
        return {}


def rating_table(games: list[GameRecord], entries: list[str]) -> RatingTable:
    counted = [g for g in games if g.verdict.kind is not VerdictKind.SYSTEM_ERROR]
    if not counted:
        return RatingTable("none")
    if all(len(g.order) == 2 for g in counted):
        ratings = elo_ratings(counted, entries=entries)
        return RatingTable("elo", elo={r.entry: r for r in ratings})
    skills = openskill_ratings(counted, entries=entries)
    return RatingTable("openskill", skill={s.entry: s for s in skills})


@dataclass
class ReportData:
    name: str
    game_name: str
    tournament: TournamentState
    matches: list[MatchRecord]  # plan order
    boards: dict[str, str] = field(default_factory=dict)  # board_id -> board text
    game_params: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)  # the store's run metadata
    run_dir: Path | None = None
    config: TournamentConfig | None = None  # the frozen config (None for synthetic data)
    disputes: DisputeLog = field(default_factory=DisputeLog)  # rerun candidates and acceptances

    # -- lookups ---------------------------------------------------------
    @property
    def sandbox(self) -> str:
        return str(self.meta.get("sandbox", ""))

    @cached_property
    def timing(self) -> TimingSummary:
        """How moves were timed: what the config asked, what each worker's results say."""
        asked = (self.meta.get("timing") or {}).get("exclusive_cores")
        if asked is None:
            asked = self.config.timing.exclusive_cores if self.config is not None else False
        return timing_summary(bool(asked), [m.result for m in self.matches if m.result is not None])

    @property
    def stages(self) -> list[StageState]:
        return self.tournament.stages

    @cached_property
    def game(self) -> Game[Any, Any]:
        return get_game(self.game_name, **self.game_params)

    @cached_property
    def _by_id(self) -> dict[str, MatchRecord]:
        return {m.match_id: m for m in self.matches}

    def match(self, match_id: str) -> MatchRecord | None:
        return self._by_id.get(match_id)

    def find_match(self, prefix: str) -> MatchRecord:
        """The match whose id is or starts with ``prefix``; ``UnknownMatch`` (a ``KeyError``) otherwise."""
        exact = self._by_id.get(prefix)
        return exact if exact is not None else find_match(self.matches, prefix)

    def stage(self, name: str) -> StageState | None:
        return next((s for s in self.stages if s.name == name), None)

    def stage_matches(self, name: str) -> list[MatchRecord]:
        return [m for m in self.matches if m.stage == name]

    def games(self, stage: str | None = None) -> Iterator[tuple[MatchRecord, int, GameRecord]]:
        """Every finished game as (match, 1-based game number, record), plan order."""
        for m in self.matches:
            if stage is not None and m.stage != stage:
                continue
            for k, g in enumerate(m.games, start=1):
                yield m, k, g

    @cached_property
    def entries(self) -> list[str]:
        """The tournament's entrants in seed order (not seed opponents or
        system-test mirrors, which also sit in matches)."""
        if self.config is not None:
            return list(self.config.entry_specs())
        if self.stages and self.stages[0].entrants:
            return list(self.stages[0].entrants)
        return list(dict.fromkeys(p for m in self.matches for p in m.players))

    @cached_property
    def submissions(self) -> dict[str, dict[str, Any]]:
        """Entry name -> the submission it is (team, version, upload_sha256, entry_digest), for
        the entries a frozen config names so (``tourney freeze``; docs/submissions.md)."""
        if self.config is None:
            return {}
        return {
            src.submission.team: src.submission.model_dump()
            for src in self.config.entry_sources()
            if src.submission is not None
        }

    # -- summaries ---------------------------------------------------------
    def verdict_counts(self) -> Counter[str]:
        return Counter(g.verdict.kind.value for _, _, g in self.games())

    def bound_summary(self) -> str:
        """One line on the games stopped at their bound (config ``bound``) and adjudicated by the
        game's rule, or "" when none was."""
        stopped = Counter(g.stopped_by for _, _, g in self.games() if g.stopped_by)
        if not stopped:
            return ""
        names = {"max_moves": "move bound", "wall": "game wall budget"}
        parts = ", ".join(f"{names.get(k, k)} {n}" for k, n in sorted(stopped.items()))
        n = sum(stopped.values())
        return (
            f"{n} game{'s' if n != 1 else ''} stopped at {'their' if n != 1 else 'its'} bound ({parts}) "
            "and adjudicated by the game's rule (docs/config.md, bound); each replay says how"
        )

    def clock_decided(self, stage: str) -> str:
        """One line naming the games of ``stage`` that a clock decided (a ``timeout`` or
        ``cpu_limit`` verdict, or the game wall bound), or "" when none was: only these results
        can change with the machine's load (docs/config.md, "Games the move limit decided")."""
        decided = [
            (m, k, g)
            for m, k, g in self.games(stage)
            if g.verdict.kind in CLOCK_VERDICTS or g.stopped_by == "wall"
        ]
        if not decided:
            return ""
        named = ", ".join(
            f"{m.match_id} game {k} ({g.verdict.kind.value if g.stopped_by != 'wall' else 'wall bound'}"
            f"{': ' + g.verdict.player if g.verdict.player and g.stopped_by != 'wall' else ''})"
            for m, k, g in decided[:CLOCK_GAMES_NAMED]
        )
        more = f" and {len(decided) - CLOCK_GAMES_NAMED} more" if len(decided) > CLOCK_GAMES_NAMED else ""
        n = len(decided)
        return (
            f"{n} game{'s' if n != 1 else ''} decided by the move limit, not by the rules: {named}{more}; "
            "on a busier or quieter machine they could end otherwise"
        )

    def verdicts_by_entry(self) -> Counter[tuple[str, str]]:
        """(entry, verdict kind) -> games charged, non-normal verdicts only."""
        out: Counter[tuple[str, str]] = Counter()
        for _, _, g in self.games():
            if g.verdict.kind is not VerdictKind.NORMAL and g.verdict.player:
                out[(g.verdict.player, g.verdict.kind.value)] += 1
        return out

    def results(self) -> dict[str, list[GameRecord]]:
        """Official games per match id, as ``advance`` and the stage helpers take them."""
        return {m.match_id: list(m.games) for m in self.matches if m.games}

    def move_count(self) -> int:
        return sum(len(g.moves) for _, _, g in self.games())

    @cached_property
    def _ratings(self) -> dict[str, RatingTable]:
        tables: dict[str, RatingTable] = {}
        for s in self.stages:
            games = [g for _, _, g in self.games(s.name)] if s.name not in self._self_play else []
            tables[s.name] = rating_table(games, list(s.entrants))
        return tables

    @cached_property
    def _self_play(self) -> frozenset[str]:
        """Stages whose games are an entry against itself (spsa's two seats): no rating."""
        return frozenset(s.name for s in self.stages if s.tuning is not None)

    def stage_ratings(self, stage: str) -> RatingTable:
        return self._ratings.get(stage, RatingTable("none"))

    @cached_property
    def overall_ratings(self) -> RatingTable:
        """Over every game of the run (Elo if all were two-player)."""
        return rating_table([g for m, _, g in self.games() if m.stage not in self._self_play], self.entries)
