"""``tourney matches RUN``: one listing line per match, and a narrow form for a terminal.

Piped, the listing is one line per match with every column (stage, round, bracket, pairing,
players, board, seat orders, state, attempt, result), for grep and awk. In a terminal too
narrow for that (80 columns), the terminal would wrap every line in the middle of a column;
the narrow form instead lists each match's id, result and players under a line naming its
stage, round and bracket, and carries what does not fit (a long pairing, verdicts, stderr
writers) on continuation lines indented under the players, never cutting a name or an id.

Plain text, not a rich table: a rich table measures every cell and takes seconds for the
15,000 matches of a big run.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from runner.domain.inert import inert
from runner.domain.match_record import MatchRecord
from runner.report.entry_notes import stderr_writers

HEADER = [
    "match",
    "stage",
    "round",
    "bracket",
    "#",
    "players",
    "board",
    "seat orders",
    "state",
    "att.",
    "result",
]
NARROW_HEADER = ["match", "result", "players"]
GAP = "  "


@dataclass(frozen=True)
class ListedMatch:
    """One match as the listing shows it; ``notes`` are what follows its score (`` · `` joined)."""

    match: MatchRecord
    notes: tuple[str, ...]

    def full_row(self) -> list[str]:
        m = self.match
        return _inert(
            [
                m.match_id,
                m.stage,
                str(m.round),
                m.bracket or "-",
                str(m.pairing + 1),
                " vs ".join(m.players),
                m.board_id,
                " | ".join(",".join(o) for o in m.orders),
                m.state,
                str(m.attempt),
                " · ".join([m.result_text(), *self.notes]),
            ]
        )

    def narrow_row(self) -> list[str]:
        m = self.match
        return _inert([m.match_id, m.result_text() if m.finished else m.state, " vs ".join(m.players)])

    def section(self) -> str:
        """Where the match was played, the narrow form's line above a run of matches."""
        m = self.match
        where = f"stage {m.stage}, round {m.round}" + (f", {m.bracket} bracket" if m.bracket else "")
        return inert(where, one_line=True)

    def narrow_notes(self) -> list[str]:
        # the narrow form has no attempt column: a retried match says so among its notes
        retried = [f"attempt {self.match.attempt}"] if self.match.attempt > 1 else []
        return _inert([*self.notes, *retried])


def _inert(cells: list[str]) -> list[str]:
    """Names and notes come from entries and older runs' stores: measured as they will print."""
    return [inert(c, one_line=True) for c in cells]


def listed_matches(
    matches: Sequence[MatchRecord], stage: str | None = None, verified: Mapping[str, str] | None = None
) -> list[ListedMatch]:
    """The matches of ``stage`` (all without one), in plan order, with their notes: verdicts,
    games stopped at a bound, stderr writers, replaced results, and ``verified[match_id]`` (the
    verification replay's line, docs/fleet.md)."""
    verified = verified or {}
    out = []
    for m in matches:
        if stage and m.stage != stage:
            continue
        notes = []
        if m.verdicts():
            notes.append(", ".join(m.verdicts()))
        if m.bounded():
            notes.append(", ".join(m.bounded()))
        if stderr_writers(m):
            notes.append("stderr: " + ", ".join(stderr_writers(m)))
        if m.superseded:  # never silently: `tourney disputes RUN` says how and why
            notes.append(f"replaced {len(m.superseded)} earlier result(s)")
        if m.match_id in verified:
            notes.append(verified[m.match_id])
        out.append(ListedMatch(m, tuple(notes)))
    return out


def listing_lines(listed: Sequence[ListedMatch], width: int | None = None) -> list[str]:
    """The listing: one line per match with every column when ``width`` is None (piped output)
    or the lines fit in it, else the narrow form, whose lines fit in ``width`` unless a single
    entry name is longer than the room left for it."""
    full = aligned(HEADER, [x.full_row() for x in listed])
    if width is None or max(map(len, full)) <= width:
        return full
    return narrow_lines(listed, width)


def aligned(header: list[str], rows: list[list[str]]) -> list[str]:
    """Plain columns, each as wide as its widest cell."""
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(header)]
    return [GAP.join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in [header, *rows]]


def narrow_lines(listed: Sequence[ListedMatch], width: int) -> list[str]:
    """Under a line naming the stage, round and bracket, each match's id, result and players;
    continuation lines carry a pairing too long for its line (cut between names) and the notes."""
    rows = [x.narrow_row() for x in listed]
    widths = [max([len(h)] + [len(r[i]) for r in rows]) for i, h in enumerate(NARROW_HEADER[:-1])]
    column = sum(widths) + len(GAP) * len(widths)  # where the players column starts
    longest_name = max((len(p) for x in listed for p in x.match.players), default=0)
    # continuation lines sit under the players, unless that column starts too far right
    aligned_below = width - column >= max(longest_name + len(" vs"), 24)
    indent = column if aligned_below else 4
    lines = [
        GAP.join([*(h.ljust(w) for h, w in zip(NARROW_HEADER, widths, strict=False)), NARROW_HEADER[-1]])
    ]
    section = None
    for x, row in zip(listed, rows, strict=True):
        if x.section() != section:
            section = x.section()
            lines.append(section)
        head = GAP.join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + GAP
        players = row[-1]
        if len(head) + len(players) <= width:
            lines.append(head + players)
            rest: list[str] = []
        elif aligned_below:  # the pairing goes on under itself, cut between names (after a "vs")
            first, *more = _wrapped(players, width - len(head))
            lines.append(head + first)
            rest = _wrapped(" ".join(more), width - indent)
        else:  # the whole pairing on the lines below the id
            lines.append(head.rstrip())
            rest = _wrapped(players, width - indent)
        notes = x.narrow_notes()
        rest += _wrapped("· " + " · ".join(notes), width - indent) if notes else []
        lines += [" " * indent + line for line in rest if line]
    return lines


def _wrapped(text: str, width: int) -> list[str]:
    """``text`` in lines of at most ``width``, broken at spaces only (names and ids stay whole)."""
    return textwrap.wrap(text, max(width, 1), break_long_words=False, break_on_hyphens=False) or [""]
