"""Live progress of a run.

The coordinator builds a ``ProgressSnapshot`` whenever something changes and
hands it to ``RunProgress.update``; how it is shown depends on the mode:

``live``
    a rich display redrawn in place (stdout is a terminal): one bar per
    stage (matches done / planned so far), then the whole run: matches,
    games and games per second, moves, elapsed time and ETA, verdict counts,
    workers connected and matches playing and queued, the broker's outage
    (how long, and how long until the run gives up); then the matches in flight as
    their workers report them (``ProgressSnapshot.live``): entries being
    built, or the game and the number of moves played in it. The plain line
    lists the first few of them.
``plain``
    one log line at most every ``plain_interval_s`` seconds, and at once
    whenever a stage changes status (stdout is a file or a pipe, e.g. CI).
``quiet``
    nothing (``--no-progress``).

Rates are measured over a sliding window (``RATE_WINDOW_S``) so they follow
the run as it speeds up or slows down, and do not count results a resumed
run found already done. The ETA covers the matches planned so far: later
rounds of elimination stages only exist once earlier ones finish, so the
ETA grows when they are planned.
"""

from __future__ import annotations

import sys
import time
from collections import deque
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal, TextIO

from runner.domain.inert import inert
from runner.domain.match_values import GameRecord, VerdictKind
from runner.domain.progress import ProgressSnapshot as ProgressSnapshot
from runner.domain.progress import StageProgress as StageProgress
from runner.domain.progress import format_duration as format_duration
from runner.domain.wire import LiveMatch

if TYPE_CHECKING:  # imported where used: only the live display draws with rich, and a run
    # without it (plain or quiet) starts its workers before rich could have loaded (0.15 s)
    from rich.console import Console, RenderableType
    from rich.live import Live

Mode = Literal["live", "plain", "quiet"]

RATE_WINDOW_S = 30.0
PLAIN_INTERVAL_S = 5.0
#: the environment variable that sets ``tourney run``'s plain interval (seconds)
PROGRESS_EVERY_ENV = "TOURNEY_PROGRESS_EVERY_S"
#: matches in flight listed by the live display (the rest are counted); the plain line lists fewer
LIVE_ROWS = 8
PLAIN_LIVE_ITEMS = 3


def default_mode(no_progress: bool) -> Mode:
    if no_progress:
        return "quiet"
    return "live" if sys.stdout.isatty() else "plain"


def format_verdicts(verdicts: dict[str, int]) -> str:
    shown = [(k, n) for k, n in sorted(verdicts.items(), key=lambda kv: (-kv[1], kv[0])) if n]
    return ", ".join(f"{k} {n}" for k, n in shown) if shown else "none"


class RateMeter:
    """Games and matches per second over a sliding window of snapshots."""

    def __init__(self, window_s: float = RATE_WINDOW_S) -> None:
        self.window_s = window_s
        self._points: deque[tuple[float, int, int]] = deque()  # (time, games, matches)

    def add(self, now: float, games: int, matches: int) -> None:
        self._points.append((now, games, matches))
        while len(self._points) > 2 and now - self._points[1][0] >= self.window_s:
            self._points.popleft()

    def _rate(self, index: int) -> float | None:
        if len(self._points) < 2:
            return None
        first, last = self._points[0], self._points[-1]
        span = last[0] - first[0]
        if span <= 0:
            return None
        return max(0.0, (last[index] - first[index]) / span)

    def games_per_s(self) -> float | None:
        return self._rate(1)

    def matches_per_s(self) -> float | None:
        return self._rate(2)


def eta_seconds(snap: ProgressSnapshot, matches_per_s: float | None) -> float | None:
    remaining = snap.matches_total - snap.matches_done
    if remaining <= 0:
        return 0.0
    if not matches_per_s:
        return None
    return remaining / matches_per_s


def broker_text(snap: ProgressSnapshot) -> str:
    """``"UNREACHABLE for 4s; the run stops in 9m56s unless it answers"``; "" while it answers."""
    if snap.broker_down_s is None:
        return ""
    left = max(0.0, snap.broker_patience_s - snap.broker_down_s)
    return (
        f"UNREACHABLE for {format_duration(snap.broker_down_s)}; "
        f"the run stops in {format_duration(left)} unless it answers (then resume with the same command)"
    )


def flight_text(snap: ProgressSnapshot) -> str:
    """``"playing 3 · queued 9"``: a queued match is not running yet."""
    return f"playing {snap.running} · queued {snap.queued}"


def finished_game_line(match_id: str, number: int, game: GameRecord) -> str:
    """``finished game 3f2a9c1d/2 p-1 vs p-2: p-1 wins 3-1 {5 in a row}``: one per game in a
    plain log (seats in play order; the reason is the verdict when one was charged)."""
    scores = "-".join(str(game.scores.get(p, 0)) for p in game.order)
    if game.verdict.kind is VerdictKind.SYSTEM_ERROR:
        result = "no result"
    elif game.winner is not None:
        result = f"{game.winner} wins {scores}"
    else:
        result = f"draw {scores}"
    if game.verdict.kind is not VerdictKind.NORMAL:
        reason = game.verdict.label()
    elif game.stopped_by:
        reason = (
            f"stopped by {game.stopped_by}: {game.reason}" if game.reason else f"stopped by {game.stopped_by}"
        )
    else:
        reason = game.reason or "normal"
    return f"finished game {match_id[:8]}/{number} {' vs '.join(game.order)}: {result} {{{reason}}}"


def live_items(snap: ProgressSnapshot) -> list[LiveMatch]:
    """The matches in flight, busiest first: playing (most moves first), then building."""
    order = {"playing": 0, "building": 1}
    return sorted(snap.live, key=lambda m: (order.get(m.phase, 2), -m.game, -m.moves, m.match_id))


def workers_text(snap: ProgressSnapshot) -> str:
    """``"4 connected"``, or ``"4 connected, shared by 2 runs"`` (docs/fleet.md, "Runs share the pool")."""
    shared = f", shared by {snap.pool_runs} runs" if snap.pool_runs > 1 else ""
    return f"{snap.workers} connected{shared}"


def live_text(m: LiveMatch) -> str:
    """``"3f2a9c1d a vs b: game 2/4, move 37"``."""
    return f"{m.match_id[:8]} {' vs '.join(m.players)}: {m.describe()}"


def plain_line(snap: ProgressSnapshot, games_per_s: float | None, eta: float | None) -> str:
    current = next((s for s in snap.stages if s.status == "running"), None)
    parts = [f"[{format_duration(snap.elapsed_s):>6}]"]
    if current is not None:
        parts.append(f"stage {current.name} {current.done}/{current.total}")
        if current.detail:
            parts.append(current.detail)
    rate = f"{games_per_s:.1f}/s" if games_per_s is not None else "?/s"
    parts += [
        f"matches {snap.matches_done}/{snap.matches_total}",
        f"games {snap.games_done} ({rate})",
        f"moves {snap.moves_done}",
        f"ETA {format_duration(eta)}",
        f"verdicts {format_verdicts(snap.verdicts)}",
        f"workers {snap.workers}" + (f" shared by {snap.pool_runs} runs" if snap.pool_runs > 1 else ""),
        f"playing {snap.running}",
        f"queued {snap.queued}",
    ]
    if snap.broker_down_s is not None:
        parts.append(f"broker {broker_text(snap)}")
    if snap.failed:
        parts.append(f"FAILED {snap.failed}")
    if snap.quarantined:
        parts.append(f"quarantined {', '.join(snap.quarantined)}")
    if snap.live:
        items = live_items(snap)
        shown = "; ".join(live_text(m) for m in items[:PLAIN_LIVE_ITEMS])
        more = len(items) - PLAIN_LIVE_ITEMS
        parts.append(f"in progress: {shown}" + (f" (+{more} more)" if more > 0 else ""))
    return " | ".join(parts)


class RunProgress:
    """Shows progress; use as a context manager around the run."""

    def __init__(
        self,
        title: str,
        mode: Mode,
        *,
        console: Console | None = None,
        out: TextIO | None = None,
        clock: Callable[[], float] = time.monotonic,
        plain_interval_s: float = PLAIN_INTERVAL_S,
    ) -> None:
        self.title = title
        self.mode = mode
        self._out = out
        self._console = console
        self._clock = clock
        self._interval = plain_interval_s
        self._rates = RateMeter()
        self._last: ProgressSnapshot | None = None
        self._last_print: float | None = None
        self._statuses: dict[str, str] = {}
        self._live: Live | None = None  # while entered in live mode

    # -- context ---------------------------------------------------------
    def __enter__(self) -> RunProgress:
        if self.mode == "live":
            from rich.live import Live

            live = Live(self._render(None), console=self._console, refresh_per_second=4, transient=False)
            live.__enter__()
            self._live = live
        elif self.mode == "plain":
            self._print(f"{self.title}: started")
        return self

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.update(self._render(self._last), refresh=True)
            self._live.__exit__(None, None, None)
            self._live = None
        elif self.mode == "plain" and self._last is not None:
            self._print(self._line(self._last))

    # -- updates ---------------------------------------------------------
    def update(self, snap: ProgressSnapshot) -> None:
        if self.mode == "quiet":
            return
        now = self._clock()
        self._rates.add(now, snap.games_done, snap.matches_done)
        self._last = snap
        if self.mode == "live":
            if self._live is not None:
                self._live.update(self._render(snap))
            return
        changes = []
        for s in snap.stages:
            before = self._statuses.get(s.name)
            if before is not None and before != s.status:
                changes.append(f"stage {s.name}: {before} -> {s.status} ({s.done}/{s.total} matches)")
            elif before is None and s.status in ("running", "done") and self._statuses:
                changes.append(f"stage {s.name}: {s.status} ({s.done}/{s.total} matches)")
            self._statuses[s.name] = s.status
        for c in changes:
            self._print(c)
        if changes or self._last_print is None or now - self._last_print >= self._interval:
            self._print(self._line(snap))
            self._last_print = now

    def games_finished(self, match_id: str, games: list[GameRecord]) -> None:
        """A line per game of a match just accepted, in a plain log only (a terminal has the
        live display; a CI log or a file has nothing else to show what happened)."""
        if self.mode != "plain":
            return
        for number, game in enumerate(games, 1):
            self._print(finished_game_line(match_id, number, game))

    def log(self, message: str) -> None:
        if self.mode == "quiet":
            return
        if self._live is not None:
            from rich.text import Text

            self._live.console.print(Text(inert(message)))
        else:
            self._print(message)

    # -- rendering ---------------------------------------------------------
    def _print(self, line: str) -> None:
        out = self._out or sys.stdout
        # lines name stages and entries, and ``log`` passes entry warnings through: all inert
        print(inert(line), file=out, flush=True)

    def _eta(self, snap: ProgressSnapshot) -> float | None:
        return eta_seconds(snap, self._rates.matches_per_s())

    def _line(self, snap: ProgressSnapshot) -> str:
        return plain_line(snap, self._rates.games_per_s(), self._eta(snap))

    def _render(self, snap: ProgressSnapshot | None) -> RenderableType:
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        title = Text(inert(self.title), style="bold")
        if snap is None:
            return Group(title, Text("starting...", style="dim"))
        stages = Table.grid(padding=(0, 2))
        stages.add_column()
        stages.add_column(width=32)
        stages.add_column(justify="right")
        stages.add_column()
        style = {"done": "green", "running": "cyan", "waiting": "dim", "skipped": "dim"}
        for s in snap.stages:
            bar = ProgressBar(total=max(s.total, 1), completed=s.done if s.total else 0, width=30)
            status = Text(s.status, style=style.get(s.status, ""))
            if s.detail:
                status.append(f"  {inert(s.detail)}", style="bold")
            stages.add_row(Text(inert(s.name)), bar, f"{s.done}/{s.total}", status)
        gps = self._rates.games_per_s()
        rate = f"{gps:.1f} games/s" if gps is not None else "? games/s"
        summary = Table.grid(padding=(0, 2))
        summary.add_column(style="bold")
        summary.add_column()
        overall = (
            f"matches {snap.matches_done}/{snap.matches_total}"
            + (f" ({snap.failed} FAILED)" if snap.failed else "")
            + (f" · quarantined {', '.join(snap.quarantined)}" if snap.quarantined else "")
            + f" · games {snap.games_done} ({rate}) "
            f"· moves {snap.moves_done}"
        )
        summary.add_row("overall", Text(inert(overall)))  # worker names come from workers
        summary.add_row(
            "time", f"elapsed {format_duration(snap.elapsed_s)} · ETA {format_duration(self._eta(snap))}"
        )
        summary.add_row(
            "verdicts",
            Text(format_verdicts(snap.verdicts), style="yellow" if any(snap.verdicts.values()) else ""),
        )
        summary.add_row("workers", f"{workers_text(snap)} · {flight_text(snap)}")
        if snap.broker_down_s is not None:
            summary.add_row("broker", Text(broker_text(snap), style="bold red"))
        if not snap.live:
            return Group(title, stages, summary)
        playing = Table.grid(padding=(0, 2))
        playing.add_column(style="dim")
        playing.add_column()
        playing.add_column()
        items = live_items(snap)
        for m in items[:LIVE_ROWS]:
            colour = "cyan" if m.phase == "playing" else "yellow"
            players = Text(inert(" vs ".join(m.players)))  # names and moves as text, never markup
            playing.add_row(m.match_id[:8], players, Text(inert(m.describe()), style=colour))
        if len(items) > LIVE_ROWS:
            playing.add_row("", Text(f"+{len(items) - LIVE_ROWS} more", style="dim"), "")
        return Group(title, stages, summary, Text("in progress", style="bold"), playing)
