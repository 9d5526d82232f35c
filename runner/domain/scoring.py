"""Points tables, game and match outcomes, tallies and rank keys (docs/config.md).

Everything a stage needs to turn game records into standings, as pure
functions. The rules, decided once:

- A game is a *win* for its winner and a *loss* for every other seat; with no
  winner it is a *tie* for every seat. A game ended by a verdict charged to an
  entry (timeout, crash, illegal move ...) is a loss for that entry and, in a
  two-player game, a win for the opponent even if the record names no winner
  (the worker's referee already makes the opponent the winner through
  ``Game.forfeit``; this is only a guard). The game scores are taken from the
  record as they are. ``system_error`` games never count: a match holding one
  is treated as not played yet (the coordinator retries it).
- Points per game come from the stage's table, by outcome and seat index
  (seat 0 moves first): seed 000 is ``win: [1000, 1200]``, ``tie: [500, 600]``,
  ``add_game_score: true`` (plus the entry's own game score, not the
  difference). A list shorter than the seat index repeats its last value.
- A match between two entries is won by the first of the stage's
  ``match_win_by`` keys (default: game wins, then total game score) on which
  the two differ; equal on all keys is a tied match.
- Ranking applies the stage's ``rank_by`` keys in order, all "higher is
  better" except ``seed`` (the better seed first) and ``name`` (alphabetical).
  ``head_to_head`` is evaluated inside each group still tied on the keys
  before it: the points each member earned in games whose other players all
  belong to the group. ``buchholz`` is the sum of the stage points of every
  opponent met, once per match. Whatever is still tied after the keys is
  ordered by seed, so rankings are total and deterministic; the tie is kept
  (``Ranking.groups``) for conditions such as ``when: tied_for_first``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, field_validator

from runner.domain.match_values import GameRecord, VerdictKind

RankKey = Literal["wins", "score", "points", "head_to_head", "buchholz", "seed", "name"]
RANK_KEYS: tuple[str, ...] = get_args(RankKey)
MatchKey = Literal["wins", "score", "points"]
Result = Literal["win", "tie", "loss"]


class ScoringModel(BaseModel):
    """A stage's points table: points per game by outcome and seat."""

    model_config = ConfigDict(extra="forbid")

    win: list[float] = Field(
        default=[1.0],
        description="Points for a win, by seat index (seat 0 moves first); a shorter list repeats "
        "its last value for later seats; a single number means every seat.",
    )
    tie: list[float] = Field(default=[0.5], description="Points for a tie, by seat index.")
    loss: list[float] = Field(default=[0.0], description="Points for a loss (a verdict against it included).")
    add_game_score: bool = Field(
        default=False,
        description="Also add the entry's own game score of each game to its points "
        "(seed 000: 'the total points you scored, NOT the difference').",
    )
    bye: float | None = Field(
        default=None,
        description="Points for a swiss bye; default: the seat-0 win points. Other planners give byes "
        "no points.",
    )

    @field_validator("win", "tie", "loss", mode="before")
    @classmethod
    def _scalar_to_list(cls, v: object) -> object:
        if isinstance(v, int | float) and not isinstance(v, bool):
            return [v]
        return v

    @field_validator("win", "tie", "loss")
    @classmethod
    def _nonempty(cls, v: list[float]) -> list[float]:
        if not v:
            raise ValueError("needs at least one value")
        return v

    def value(self, result: Result, seat: int) -> float:
        table: list[float] = getattr(self, result)  # the field named by the result (planning: hot)
        return table[min(seat, len(table) - 1)]

    @property
    def bye_points(self) -> float:
        return self.bye if self.bye is not None else self.win[0]


def potm_scoring() -> ScoringModel:
    """Seed 000's table: 1000/1200 for a win as first/second, 500/600 for a tie, plus the game score."""
    return ScoringModel(win=[1000, 1200], tie=[500, 600], loss=[0], add_game_score=True)


# -- one game ----------------------------------------------------------------


def is_system_error(game: GameRecord) -> bool:
    return game.verdict.kind is VerdictKind.SYSTEM_ERROR


def effective_winner(game: GameRecord) -> str | None:
    """The game's winner, with a charged verdict in a two-player game counting for the opponent."""
    if game.winner is not None:
        return game.winner
    v = game.verdict
    if v.kind not in (VerdictKind.NORMAL, VerdictKind.SYSTEM_ERROR) and v.player is not None:
        others = [p for p in game.order if p != v.player]
        if len(game.order) == 2 and len(others) == 1:
            return others[0]
    return None


def game_result(game: GameRecord, player: str) -> Result:
    winner = effective_winner(game)
    if winner is None:
        charged = game.verdict.player if game.verdict.kind is not VerdictKind.NORMAL else None
        return "loss" if charged == player else "tie"
    return "win" if winner == player else "loss"


def game_points(table: ScoringModel, game: GameRecord, player: str, result: Result | None = None) -> float:
    """``player``'s points for ``game`` (``result``: its ``game_result``, when already known)."""
    seat = game.order.index(player)
    pts = table.value(result if result is not None else game_result(game, player), seat)
    if table.add_game_score:
        pts += game.scores.get(player, 0)
    return pts


# -- tallies -----------------------------------------------------------------


@dataclass
class Tally:
    """One entry's numbers over a set of games (one stage)."""

    games: int = 0
    wins: int = 0
    ties: int = 0
    losses: int = 0
    points: float = 0.0
    score: int = 0
    verdicts_against: int = 0
    firsts: int = 0  # games played in seat 0
    byes: int = 0
    opponents: list[str] = field(default_factory=list)  # once per match (buchholz)
    # (the other players of a game, points earned in it): head-to-head inside a tie group
    game_log: list[tuple[frozenset[str], float]] = field(default_factory=list)

    def add_game(self, table: ScoringModel, game: GameRecord, player: str) -> None:
        result = game_result(game, player)
        pts = game_points(table, game, player, result)
        self.games += 1
        self.wins += result == "win"
        self.ties += result == "tie"
        self.losses += result == "loss"
        self.points += pts
        self.score += game.scores.get(player, 0)
        self.firsts += game.order[0] == player
        if game.verdict.kind is not VerdictKind.NORMAL and game.verdict.player == player:
            self.verdicts_against += 1
        self.game_log.append((frozenset(p for p in game.order if p != player), pts))


def tally_matches(
    played: Iterable[tuple[Sequence[str], Sequence[GameRecord]]],
    table: ScoringModel,
    names: Iterable[str] = (),
    into: dict[str, Tally] | None = None,
) -> dict[str, Tally]:
    """Tallies for every player of ``played`` (players, games); ``names`` get a row even with no game.
    With ``into``, the games are added to those tallies (a planner folding results in as they come)."""
    out: dict[str, Tally] = into if into is not None else {}
    for n in names:
        out.setdefault(n, Tally())
    for players, games in played:
        for p in players:
            t = out.setdefault(p, Tally())
            t.opponents.extend(q for q in players if q != p)
        for g in games:
            for p in g.order:
                out.setdefault(p, Tally()).add_game(table, g, p)
    return out


def match_totals(games: Sequence[GameRecord], table: ScoringModel, player: str) -> dict[str, float]:
    """A player's wins, score and points over one match's games."""
    wins = 0.0
    score = 0.0
    points = 0.0
    for g in games:
        if player not in g.order:
            continue
        wins += game_result(g, player) == "win"
        score += g.scores.get(player, 0)
        points += game_points(table, g, player)
    return {"wins": wins, "score": score, "points": points}


def match_winner(
    games: Sequence[GameRecord], a: str, b: str, table: ScoringModel, decide_by: Sequence[str]
) -> str | None:
    """The winner of a two-player match by the first key on which the players differ; None: tied match."""
    ta = match_totals(games, table, a)
    tb = match_totals(games, table, b)
    for key in decide_by:
        if ta[key] != tb[key]:
            return a if ta[key] > tb[key] else b
    return None


# -- ranking -----------------------------------------------------------------


@dataclass(frozen=True)
class Ranking:
    """An ordered ranking, its tie groups and the key values behind it.

    ``groups`` partitions ``order`` into runs still tied on every rank key other
    than ``seed`` and ``name`` (a group of one is no tie). ``values[entry]``
    holds the numbers each key was compared on (``head_to_head`` relative to
    the group it was evaluated in).
    """

    order: list[str]
    groups: list[list[str]]
    values: dict[str, dict[str, float]]

    def tied_for_first(self) -> list[str]:
        return list(self.groups[0]) if self.groups and len(self.groups[0]) > 1 else []


def buchholz(tallies: Mapping[str, Tally]) -> dict[str, float]:
    return {e: sum(tallies[o].points for o in t.opponents if o in tallies) for e, t in tallies.items()}


def rank_entries(
    entrants: Sequence[str],
    tallies: Mapping[str, Tally],
    keys: Sequence[str],
    seeds: Mapping[str, int] | None = None,
) -> Ranking:
    """Order ``entrants`` by ``keys``; see the module docstring.

    ``seeds`` gives each entrant's seed (1 is best); default: the position in ``entrants``.
    """
    seed = dict(seeds) if seeds is not None else {e: i + 1 for i, e in enumerate(entrants)}
    values: dict[str, dict[str, float]] = {e: {"seed": float(seed[e])} for e in entrants}
    bh = buchholz(tallies) if "buchholz" in keys else {}
    empty = Tally()

    def key_value(key: str, entry: str, group: Sequence[str]) -> float:
        t = tallies.get(entry, empty)
        if key == "head_to_head":
            members = set(group)
            return sum(pts for others, pts in t.game_log if others and others <= members)
        if key == "buchholz":
            return bh.get(entry, 0.0)
        return float(getattr(t, key))

    def refine(group: list[str], rest: Sequence[str]) -> list[list[str]]:
        if len(group) <= 1 or not rest:
            return [group]
        key = rest[0]
        vals = {e: key_value(key, e, group) for e in group}
        for e in group:
            values[e][key] = vals[e]
        out: list[list[str]] = []
        for v in sorted(set(vals.values()), reverse=True):
            out.extend(refine([e for e in group if vals[e] == v], rest[1:]))
        return out

    # keys after a "seed" or "name" key can never matter: both are total orders
    cut = next((i for i, k in enumerate(keys) if k in ("seed", "name")), len(keys))
    groups = refine(sorted(entrants, key=seed.__getitem__), keys[:cut])
    last = keys[cut] if cut < len(keys) else "seed"
    order = [e for g in groups for e in (sorted(g) if last == "name" else g)]
    return Ranking(order=order, groups=groups, values=values)
