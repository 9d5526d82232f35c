"""Everything a report shows, gathered once: ``ReportData``.

Every renderer (terminal tables, the HTML page, the CSV/JSON exports) is a
pure function of a ``ReportData``, so they agree with each other and tests
can build one by hand without a run directory. ``load_report_data`` is the
only place that reads a run: the store's rows and official results, the
frozen config, and the tournament state that ``advance(config, results)``
derives from them (the same pure function the coordinator plans with).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

from runner.config.models import ELIMINATION_PLANNERS as ELIMINATION_PLANNERS  # re-exported for brackets
from runner.contracts import GameRecord, VerdictKind
from runner.games.base import Game
from runner.ratings import EloRating, SkillRating, elo_ratings, openskill_ratings
from runner.scoring import game_result, is_system_error
from runner.stages.base import PlannedMatch, StageState, TournamentState

if TYPE_CHECKING:
    from runner.config import TournamentConfig


@dataclass(frozen=True)
class MatchView:
    """A planned match with what the store knows about it."""

    match_id: str
    stage: str
    round: int
    bracket: str
    pairing: int
    players: tuple[str, ...]
    board_id: str
    orders: tuple[tuple[str, ...], ...]
    state: str = "planned"  # the store's state: queued | running | done | ... ("planned": no row yet)
    attempt: int = 0
    worker: str = ""
    games: tuple[GameRecord, ...] = ()  # the official result (empty until there is one)
    superseded: int = 0  # earlier results replaced by an accepted rerun
    candidates: int = 0  # rerun results waiting for --accept
    updated_at: str = ""

    @classmethod
    def from_planned(cls, pm: PlannedMatch, **known: Any) -> MatchView:
        return cls(
            match_id=pm.match_id,
            stage=pm.stage,
            round=pm.round,
            bracket=pm.bracket,
            pairing=pm.pairing,
            players=tuple(pm.players),
            board_id=pm.board_id,
            orders=tuple(tuple(o) for o in pm.orders),
            **known,
        )

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
    matches: list[MatchView]  # plan order
    boards: dict[str, str] = field(default_factory=dict)  # board_id -> board text
    game_params: dict[str, Any] = field(default_factory=dict)
    meta: dict[str, Any] = field(default_factory=dict)  # the store's run metadata
    run_dir: Path | None = None
    config: TournamentConfig | None = None  # the frozen config (None for synthetic data)

    # -- lookups ---------------------------------------------------------
    @property
    def sandbox(self) -> str:
        return str(self.meta.get("sandbox", ""))

    @property
    def stages(self) -> list[StageState]:
        return self.tournament.stages

    @cached_property
    def game(self) -> Game[Any, Any]:
        from runner.games import get_game

        return get_game(self.game_name, **self.game_params)

    @cached_property
    def _by_id(self) -> dict[str, MatchView]:
        return {m.match_id: m for m in self.matches}

    def match(self, match_id: str) -> MatchView | None:
        return self._by_id.get(match_id)

    def find_match(self, prefix: str) -> MatchView:
        """The match whose id is or starts with ``prefix``; ``KeyError`` with a reason."""
        exact = self._by_id.get(prefix)
        if exact is not None:
            return exact
        hits = [m for m in self.matches if m.match_id.startswith(prefix)] if prefix else []
        if len(hits) == 1:
            return hits[0]
        if not hits:
            raise KeyError(f"no match {prefix!r} in this run (see `tourney matches`)")
        raise KeyError(f"{prefix!r} is ambiguous: {len(hits)} matches start with it")

    def stage(self, name: str) -> StageState | None:
        return next((s for s in self.stages if s.name == name), None)

    def stage_matches(self, name: str) -> list[MatchView]:
        return [m for m in self.matches if m.stage == name]

    def games(self, stage: str | None = None) -> Iterator[tuple[MatchView, int, GameRecord]]:
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

    # -- summaries ---------------------------------------------------------
    def verdict_counts(self) -> Counter[str]:
        return Counter(g.verdict.kind.value for _, _, g in self.games())

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
            games = [g for _, _, g in self.games(s.name)]
            tables[s.name] = rating_table(games, list(s.entrants))
        return tables

    def stage_ratings(self, stage: str) -> RatingTable:
        return self._ratings.get(stage, RatingTable("none"))

    @cached_property
    def overall_ratings(self) -> RatingTable:
        """Over every game of the run (Elo if all were two-player)."""
        return rating_table([g for _, _, g in self.games()], self.entries)


def load_report_data(run_dir: Path | str) -> ReportData:
    """Read a run directory into a ``ReportData`` (raises ``FileNotFoundError``)."""
    from runner.report.loader import load

    return load(Path(run_dir))
