"""Standings over game pairs: each entry's pentanomial counts and Elo +- 95% (fastchess
``-report penta=true``; docs/config.md, "Pair statistics").

A two-player match whose games come in colour-swapped pairs (game 2i and 2i+1 with the
seats reversed, as every two-player planner seats an even ``games_per_pairing``) holds
one *pair* per two games. Each pair is counted, for each of its two entries, in the cell
of that entry's pair score: LL, LD, DD+WL, WD, WW. An entry's Elo is over all of its pairs,
against whoever it met (``runner.domain.sprt.elo_estimate``).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from runner.domain.match_values import GameRecord
from runner.domain.scoring import game_result
from runner.domain.sprt import CELLS, Pentanomial, elo_estimate

GAME_POINTS = {"win": 1.0, "tie": 0.5, "loss": 0.0}
#: the standings' extra columns, in the order they are shown
PAIR_COLUMNS = ("elo", "elo±", *CELLS)


def pair_points(games: Sequence[GameRecord], entry: str) -> float:
    """``entry``'s points over one pair of games (win 1, draw 1/2, loss 0 each)."""
    return sum(GAME_POINTS[game_result(g, entry)] for g in games)


def game_pairs(games: Sequence[GameRecord]) -> list[Sequence[GameRecord]]:
    """The colour-swapped pairs of a match's games (none if its games are not so seated)."""
    if len(games) % 2:
        return []
    pairs = [games[i : i + 2] for i in range(0, len(games), 2)]
    # and on one board: a match of several openings (``openings.per_match``) pairs each opening's own
    swapped = all(
        len(a.order) == 2 and list(b.order) == list(reversed(a.order)) and a.board_id == b.board_id
        for a, b in pairs
    )
    return pairs if swapped else []


def pentanomials(
    played: Iterable[tuple[Sequence[str], Sequence[GameRecord]]], entries: Sequence[str]
) -> dict[str, Pentanomial]:
    """Each entry's pentanomial over the pairs of ``played`` (players, games) matches."""
    points: dict[str, list[float]] = {e: [] for e in entries}
    for players, games in played:
        for pair in game_pairs(games):
            for p in players:
                if p in points:
                    points[p].append(pair_points(pair, p))
    return {e: Pentanomial.from_pair_points(v) for e, v in points.items()}


def pair_extras(
    played: Iterable[tuple[Sequence[str], Sequence[GameRecord]]], entries: Sequence[str]
) -> dict[str, dict[str, float]]:
    """The standings' extra values per entry: Elo, its 95% half-width, the five cells."""
    return {entry: penta_extras(penta) for entry, penta in pentanomials(played, entries).items()}


def penta_extras(penta: Pentanomial) -> dict[str, float]:
    """One entry's extra standings values from its pentanomial (``PAIR_COLUMNS``)."""
    extra = {cell: float(n) for cell, n in zip(CELLS, penta.counts, strict=True)}
    est = elo_estimate(penta)
    if est.elo is not None:
        extra["elo"] = round(est.elo, 1)
    if est.error is not None:
        extra["elo±"] = round(est.error, 1)
    return extra
