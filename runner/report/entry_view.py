"""The report's per-entry view: every game one entry played, in one place.

A contestant's first question is "how did my program do, and where did it
lose?": the stage sections answer it one match at a time. This view lists,
per entry, each game it sat in (stage, round, match, opponents, its outcome,
the scores, the verdict) with a link to the match (``#m-ID``) and, when the
game's replay is in the page, a button that opens it there. The standings
and final ranking link each entry's name to its panel (``#e-...``,
``entry_anchor``). See docs/config.md, "The HTML report".

A system-test mirror (``name~k``) is its entrant's program, so its games are
listed under the entrant too.
"""

from __future__ import annotations

from dataclasses import dataclass

from runner.domain.match_record import MatchRecord
from runner.domain.match_values import GameRecord, Verdict, VerdictKind
from runner.report.model import ReportData


def verdict_label(v: Verdict) -> str:
    """How a game's verdict reads in the report: ``normal``, or its kind and the player charged."""
    if v.kind is VerdictKind.NORMAL:
        return "normal"
    return f"{v.kind.value}: {v.player}" if v.player else v.kind.value


def replay_key(match_id: str, game_no: int) -> str:
    """The key of a game's replay in the report's data (``match_id:game_no``)."""
    return f"{match_id}:{game_no}"


def entry_anchor(name: str) -> str:
    """The page's element id of ``name``'s panel: letters, digits, ``-`` and ``_`` kept, any
    other character written as ``.`` and its code point, so two names never share an id."""
    return "e-" + "".join(c if c.isascii() and (c.isalnum() or c in "-_") else f".{ord(c):x}." for c in name)


def entrant_of(player: str) -> str:
    """The entrant a seat belongs to: a system-test mirror ``name~k`` is ``name``."""
    return player.split("~")[0]


@dataclass(frozen=True)
class EntryGame:
    """One game from one entry's side."""

    match: MatchRecord
    number: int  # 1-based game number in the match
    record: GameRecord
    seat: str  # the name the entry played under (itself or a mirror)
    key: str  # the replay key (``replay_key``)
    embedded: bool  # its replay is in the page (or the split report's data files)

    @property
    def opponents(self) -> list[str]:
        return [p for p in self.record.order if p != self.seat]

    @property
    def outcome(self) -> str:
        """``won``, ``lost`` or ``draw`` for this entry (a game without a winner is a draw, or a
        system error, which the verdict column says)."""
        if self.record.winner is None:
            return "draw"
        return "won" if self.record.winner == self.seat else "lost"

    @property
    def scores(self) -> str:
        return ", ".join(f"{n} {self.record.scores.get(n, 0)}" for n in self.record.order)

    @property
    def verdict(self) -> str:
        return verdict_label(self.record.verdict)

    @property
    def charged(self) -> bool:
        """The verdict is charged to this entry (its timeout, crash, illegal move ...)."""
        v = self.record.verdict
        return v.kind is not VerdictKind.NORMAL and v.player == self.seat


@dataclass(frozen=True)
class EntryView:
    entry: str
    games: list[EntryGame]

    @property
    def anchor(self) -> str:
        return entry_anchor(self.entry)

    def count(self, outcome: str) -> int:
        return sum(1 for g in self.games if g.outcome == outcome)

    @property
    def charged(self) -> int:
        return sum(1 for g in self.games if g.charged)


def entry_views(data: ReportData, embedded: set[str]) -> list[EntryView]:
    """One view per entrant (seed order), its games in plan order. ``embedded``: the replay keys
    whose replay the report carries."""
    games: dict[str, list[EntryGame]] = {e: [] for e in data.entries}
    for m, k, g in data.games():
        key = replay_key(m.match_id, k)
        for seat in g.order:
            mine = games.get(entrant_of(seat))
            if mine is not None:
                mine.append(EntryGame(m, k, g, seat, key, key in embedded))
    return [EntryView(e, rows) for e, rows in games.items()]


__all__ = ["EntryGame", "EntryView", "entrant_of", "entry_anchor", "entry_views"]
