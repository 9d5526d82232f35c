"""What entries said about themselves: their stderr per game, and their failed builds' logs.

Both travel from the workers inside results (``GameRecord.stderr``,
``MatchResult.build_logs``) and are kept by the store, so they can be read on the
organiser's machine whatever worker played the match. Entry text is untrusted:
every line is made inert before it reaches a terminal (``runner.domain.inert``).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from runner.domain.inert import inert
from runner.domain.match_record import MatchRecord
from runner.domain.match_values import MatchResult, VerdictKind
from runner.report.model import ReportData

#: how many games' stderr a warning block quotes (the rest are counted)
QUOTED_GAMES = 10


@dataclass(frozen=True)
class StderrNote:
    """One entry's stderr lines in one game."""

    match_id: str
    game: int  # 1-based
    entry: str
    lines: tuple[str, ...]


def stderr_notes(data: ReportData, stage: str | None = None) -> list[StderrNote]:
    """Every (official) game in which an entry wrote on stderr, plan order."""
    return [
        StderrNote(m.match_id, k, entry, tuple(lines))
        for m, k, g in data.games(stage)
        for entry, lines in sorted(g.stderr.items())
        if lines
    ]


def stderr_writers(match: MatchRecord) -> list[str]:
    """The entries that wrote on stderr in any game of ``match``."""
    return sorted({e for g in match.games for e, lines in g.stderr.items() if lines})


def warning_lines(notes: list[StderrNote], run_dir: str = "RUN") -> list[str]:
    """A warning block: how many games, then the first ``QUOTED_GAMES`` games' lines."""
    if not notes:
        return []
    games = len({(n.match_id, n.game) for n in notes})
    entries = sorted({n.entry for n in notes})
    out = [
        f"warning: entries wrote on stderr in {games} game(s): {', '.join(entries)} "
        f"(what an entry says about itself, e.g. a work budget that cut its search; "
        f"tourney replay {run_dir} MATCH --game K shows a game's)"
    ]
    for n in notes[:QUOTED_GAMES]:
        for line in n.lines:
            out.append(f"  {n.match_id} game {n.game} {n.entry}: {inert(line, one_line=True)}")
    if len(notes) > QUOTED_GAMES:
        out.append(f"  ... and {len(notes) - QUOTED_GAMES} more game(s)")
    return out


@dataclass(frozen=True)
class BuildLog:
    """A failed build's log as a result brought it back."""

    entry: str
    match_id: str
    detail: str  # the verdict's one line
    log: str


def build_logs(matches: Iterable[MatchRecord]) -> list[BuildLog]:
    """One log per entry whose build failed (the first match that brought it), plan order.
    Results of every status count (a build fails the same way in a rerun)."""
    seen: dict[str, BuildLog] = {}
    for m in matches:
        results: list[MatchResult] = [
            *([m.result] if m.result is not None else []),
            *m.superseded,
            *m.candidates,
        ]
        for r in results:
            details = {
                g.verdict.player: g.verdict.detail
                for g in r.games
                if g.verdict.kind is VerdictKind.BUILD_FAILED and g.verdict.player
            }
            for entry, log in r.build_logs.items():
                if entry not in seen:
                    seen[entry] = BuildLog(entry, m.match_id, details.get(entry, ""), log)
            for entry, detail in details.items():  # results from before logs travelled
                if entry not in seen:
                    seen[entry] = BuildLog(entry, m.match_id, detail, "")
    return list(seen.values())
