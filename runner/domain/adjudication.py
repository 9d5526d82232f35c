"""Adjudication from the engines' reported scores, as cutechess and fastchess do it (docs/engines.md).

Pure rules over a transcript: the seat of each move and the search its engine reported
(``MoveRecord.search``, the score from the mover's own side). The worker asks after every
move that did not end the game by the rules; the coordinator replays the same question over
the transcript and accepts an adjudicated result only where it fires at the very last move
and not before.

* ``resign``: a side whose own score was at least ``score`` cp below zero (or a mate
  against it) on each of its last ``movecount`` moves loses; with ``twosided`` only when
  its opponent's last ``movecount`` scores were at least ``score`` above zero too.
* ``draw``: a draw once ``movenumber`` full moves have been played and both sides' last
  ``movecount`` scores were within ``score`` cp of zero (no mate scores).
* ``maxmoves``: a draw once each side has made ``maxmoves`` moves.
* ``tb``: the Syzygy tables decide a position with few enough pieces (``runner.domain.tablebase``);
  asked first, from the position after the last move.

A move without a reported score breaks a streak.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from runner.domain.games.base import Outcome
from runner.domain.match_values import SearchInfo
from runner.domain.tablebase import TbRule, tablebase_outcome

if TYPE_CHECKING:  # only a type here: python-chess loads where games are played
    import chess

#: how an adjudicated game's reason starts (and the PGN Termination ``adjudication``)
ADJUDICATION = "adjudication"
#: a mate score, for comparing with centipawn thresholds
MATE_CP = 100_000


@dataclass(frozen=True)
class ResignRule:
    movecount: int
    score: int
    twosided: bool = False


@dataclass(frozen=True)
class DrawRule:
    movenumber: int
    movecount: int
    score: int


@dataclass(frozen=True)
class Adjudication:
    resign: ResignRule | None = None
    draw: DrawRule | None = None
    maxmoves: int | None = None
    tb: TbRule | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Adjudication:
        resign, draw, tb = d.get("resign"), d.get("draw"), d.get("tb")
        return cls(
            ResignRule(**resign) if resign else None,
            DrawRule(**draw) if draw else None,
            d.get("maxmoves"),
            TbRule(**tb) if tb else None,
        )

    @property
    def active(self) -> bool:
        return any(r is not None for r in (self.resign, self.draw, self.maxmoves, self.tb))


def centipawns(search: SearchInfo | None) -> int | None:
    """A reported score in cp from the mover's side, mates as +-MATE_CP; None without one."""
    if search is None:
        return None
    if search.mate is not None:
        return MATE_CP if search.mate > 0 else -MATE_CP
    return search.cp


def _last_scores(moves: Sequence[tuple[int, SearchInfo | None]], seat: int, count: int) -> list[int] | None:
    """``seat``'s own last ``count`` scores, newest last; None when it has fewer or one is missing."""
    found: list[int] = []
    for mover, search in reversed(moves):
        if mover != seat:
            continue
        cp = centipawns(search)
        if cp is None:
            return None
        found.append(cp)
        if len(found) == count:
            return found[::-1]
    return None


def ruling(
    rules: Adjudication, moves: Sequence[tuple[int, SearchInfo | None]], board: chess.Board | None = None
) -> Outcome | None:
    """The adjudication the rules give after the last of ``moves`` (two seats), or None;
    ``board``: the position after it, for the tablebase rule (asked first)."""
    if rules.tb is not None and board is not None and moves:
        outcome = tablebase_outcome(rules.tb, board)
        if outcome is not None:
            return outcome
    if rules.resign is not None:
        r = rules.resign
        for loser in (0, 1):
            own = _last_scores(moves, loser, r.movecount)
            if own is None or any(cp > -r.score for cp in own):
                continue
            if r.twosided:
                theirs = _last_scores(moves, 1 - loser, r.movecount)
                if theirs is None or any(cp < r.score for cp in theirs):
                    continue
            winner = 1 - loser
            return Outcome(
                (winner,),
                (1, 0) if winner == 0 else (0, 1),
                f"{ADJUDICATION}: resign ({'white' if loser == 0 else 'black'}'s score at -{r.score} cp "
                f"or worse for {r.movecount} moves{', both agreeing' if r.twosided else ''})",
            )
    if rules.draw is not None:
        d = rules.draw
        if len(moves) >= 2 * d.movenumber:
            both = [_last_scores(moves, seat, d.movecount) for seat in (0, 1)]
            if all(s is not None and all(abs(cp) <= d.score for cp in s) for s in both):
                return Outcome(
                    (),
                    (0, 0),
                    f"{ADJUDICATION}: draw (scores within {d.score} cp for {d.movecount} moves "
                    f"after move {d.movenumber})",
                )
    if rules.maxmoves is not None and len(moves) >= 2 * rules.maxmoves:
        return Outcome((), (0, 0), f"{ADJUDICATION}: draw at {rules.maxmoves} moves (maxmoves)")
    return None
