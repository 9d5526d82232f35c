"""What a run looks like in the terminal: standings, rounds, final ranking, replays.

Every function prints a ``ReportData`` to a rich ``Console``; the caller
picks the console (a terminal, a file, a recording console in tests). Board
pictures and entry names are printed as plain text, never as rich markup,
so an entry called ``[bold]`` stays an entry called ``[bold]``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from runner.domain.fleet import rejected_key_lines
from runner.domain.inert import inert
from runner.domain.match_record import MatchRecord
from runner.domain.match_values import VerdictKind
from runner.domain.stages.base import StageState
from runner.domain.stages.pair_stats import PAIR_COLUMNS
from runner.domain.stages.places import Place, format_keys, place_labels, ranking_rule
from runner.report.brackets import BracketMatch, bracket_label, bracket_rounds, is_bracket_stage
from runner.report.entry_notes import build_logs, stderr_notes, warning_lines
from runner.report.loader import load_report_data
from runner.report.model import ReportData
from runner.report.replay import replay_game


def _ranked_by(p: Place) -> str:
    parts = [x for x in (p.tier, format_keys(p.keys)) if x]
    return f"{p.stage}: {'; '.join(parts)}" if parts else p.stage


def final_places_of(data: ReportData) -> list[Place]:
    """The final places; a run recorded before places existed gets unshared ones from its order."""
    places = data.tournament.final_places
    if places or not data.tournament.final_ranking:
        return list(places)
    return [Place(i, e, False, "") for i, e in enumerate(data.tournament.final_ranking, 1)]


def contest_ranking_rule(data: ReportData) -> str:
    """``the contest's rule: stage final by points; a tie for first then goes to ...``."""
    if data.config is None:
        return ""
    stages = [(s.name, s.rank_by, s.when == "tied_for_first", s.planner) for s in data.config.stages]
    rule = ranking_rule(stages)
    return f"the contest's rule: {rule}" if rule else ""


def rating_column_title(title: str) -> str:
    """Ratings sit beside the contest's ranking as information, never as its rule."""
    return f"rating: {title} (all games)"


def shared_place_lines(places: list[Place]) -> list[str]:
    """One line per shared place: who shares it and the rule that left them tied."""
    lines = []
    seen: set[int] = set()
    for p in places:
        if p.shared and p.place not in seen:
            seen.add(p.place)
            who = ", ".join(q.entry for q in places if q.place == p.place)
            lines.append(f"={p.place} shared by {who}: {p.tie_rule}")
    return lines


def _num(x: float) -> str:
    return f"{x:g}" if isinstance(x, float) else str(x)


SHOWN = frozenset({"rank", "entry", "games", "wins", "ties", "losses", "points", "score", "verdicts_against"})


def _text(s: str, style: str = "") -> Text:
    """Plain (never markup) and inert text: names, details and boards come from entries
    and configs, and a stored run may predate the name rule (docs/config.md#names)."""
    return Text(inert(s), style=style)


class StdoutConsole(Console):
    """A console on stdout whose reader may go away (``tourney standings RUN | head -1``)."""

    def on_broken_pipe(self) -> None:
        # rich would exit 1 here, a code the exit-code table gives to failed runs; the
        # command line ends every command the same way on a closed pipe (runner.cli)
        raise BrokenPipeError


def make_console() -> Console:
    """stdout; piped output gets a wide page instead of tables squeezed into 80 columns."""
    return StdoutConsole() if sys.stdout.isatty() else StdoutConsole(width=200)


def extra_columns(stage: StageState) -> list[str]:
    """The tiebreak values behind a rank (seed, head_to_head, buchholz ...) not already shown;
    pair statistics first, in their own order (Elo, then LL .. WW as fastchess prints them)."""
    keys = {k for r in stage.standings for k in r.extra} - SHOWN
    return [k for k in PAIR_COLUMNS if k in keys] + sorted(keys - set(PAIR_COLUMNS))


def _stage_title(stage: StageState) -> str:
    return f"Stage {stage.name} ({stage.planner}): {stage.status}"


#: the standings columns a narrow terminal drops, first to last, before the entry name gives way
#: (``#``, ``entry`` and ``points`` always stay): the tiebreak values, the rating, then the
#: counts the points are made of (README.md, "Output")
DROPPED_FIRST = ("extras", "rating", "verdicts", "score", "status", "games", "ties", "losses", "wins")


def fitted_standings_table(data: ReportData, stage: StageState, console: Console) -> Table:
    """The standings with as many columns as fit the console: entry names are never cut or
    wrapped; the columns in ``DROPPED_FIRST`` go, in that order, until the table fits
    (``--json`` and ``--csv`` always carry them all)."""
    dropped: set[str] = set()
    table = standings_table(data, stage)
    for column in DROPPED_FIRST:
        if _fits(table, console):
            return table
        dropped.add(column)
        table = standings_table(data, stage, dropped=frozenset(dropped))
    return table


def _fits(table: Table, console: Console) -> bool:
    return Measurement.get(console, console.options.update_width(10_000), table).minimum <= console.width


def standings_table(
    data: ReportData, stage: StageState, extras: bool = True, dropped: frozenset[str] = frozenset()
) -> Table:
    """One stage's standings; ``dropped`` names the ``DROPPED_FIRST`` columns left out."""
    ratings = data.stage_ratings(stage.name)
    shown = {"games", "wins", "ties", "losses", "score", "verdicts", "status"} - dropped
    with_rating = ratings.kind != "none" and "rating" not in dropped
    extra_keys = extra_columns(stage) if extras and "extras" not in dropped else []
    t = Table(title=_text(_stage_title(stage)), title_justify="left", header_style="bold")
    t.add_column("#", justify="right", no_wrap=True)
    # the one column a reader cannot do without: never folded, never narrower than its longest name
    name_width = max((len(inert(r.entry)) for r in stage.standings), default=5)
    t.add_column("entry", no_wrap=True, min_width=name_width)
    counts = [c for c in ("games", "wins", "ties", "losses") if c in shown]
    for col in (*counts, "points", *(["score"] if "score" in shown else [])):
        t.add_column(col, justify="right", no_wrap=True)
    if "verdicts" in shown:
        t.add_column("verdicts\nagainst", justify="right", no_wrap=True)
    if with_rating:
        t.add_column(ratings.title, justify="right", no_wrap=True)
    for k in extra_keys:
        t.add_column(k, justify="right", no_wrap=True)
    if "status" in shown:
        t.add_column("status", overflow="fold")
    for r in stage.standings:
        values = {"games": r.games, "wins": r.wins, "ties": r.ties, "losses": r.losses}
        cells: list[str | Text] = [place_labels(stage.groups).get(r.entry, str(r.rank)), _text(r.entry)]
        cells += [str(values[c]) for c in counts]
        cells.append(_num(r.points))
        if "score" in shown:
            cells.append(str(r.score))
        if "verdicts" in shown:
            cells.append(str(r.verdicts_against))
        if with_rating:
            cells.append(ratings.label(r.entry))
        cells += [_num(r.extra[k]) if k in r.extra else "" for k in extra_keys]
        if "status" in shown:
            cells.append(_text(r.status))
        t.add_row(*cells)
    return t


def print_stage_standings(data: ReportData, console: Console) -> None:
    """Each stage's standings table (skipped stages named in one line)."""
    for stage in data.stages:
        if stage.status == "skipped":
            console.print(_text(f"Stage {stage.name} ({stage.planner}): skipped"), style="dim")
            continue
        ms = data.stage_matches(stage.name)
        done = sum(1 for m in ms if m.finished)
        if not stage.standings:
            console.print(
                _text(f"{_stage_title(stage)}: no standings yet ({done}/{len(ms)} matches done{_failed(ms)})")
            )
            continue
        console.print(fitted_standings_table(data, stage, console))
        if stage.excluded:
            for entry, why in stage.excluded.items():
                console.print(_text(f"  excluded: {entry}: {inert(why, one_line=True)}"), style="yellow")
        for note in stage.notes:
            console.print(_text(f"  note: {note}"), style="dim")
        clocked = data.clock_decided(stage.name)
        if clocked:
            console.print(_text(f"  note: {clocked}"), style="yellow")
        console.print()


def _player(stage: StageState, name: str) -> str:
    seed = stage.entrants.index(name) + 1 if name in stage.entrants else None
    return f"{name} ({seed})" if seed else name


def _outcome_text(m: MatchRecord, outcome: dict[str, str]) -> str:
    return ", ".join(f"{p} {outcome[p]}" for p in m.players if outcome.get(p))


def print_elimination_rounds(data: ReportData, console: Console) -> None:
    """Each elimination round's pairings and results, bracket by bracket, with byes.

    A round is one line per match where that fits the console; on a narrower one (80 columns
    and long names) it is stacked: the match id on a line of its own, then one line per player
    with its games won, score and outcome, so no entry name or match id is ever cut or wrapped."""
    for stage in data.stages:
        if not is_bracket_stage(stage) or stage.status in ("skipped", "waiting"):
            continue
        console.print(_text(f"Stage {stage.name} ({stage.planner}) rounds", style="bold"))
        for rnd in bracket_rounds(data, stage):
            for sec in rnd.sections:
                title = f"Round {rnd.round}, {bracket_label(sec.bracket)}"
                if sec.board_id:
                    title += f", board {sec.board_id}"
                table = round_table(stage, title, sec.matches)
                if not _fits_unwrapped(table, console):
                    table = stacked_round_table(stage, title, sec.matches)
                console.print(table)
                for bye in sec.byes:
                    console.print(_text(f"  bye: {_player(stage, bye)}"))
        console.print()


def _fits_unwrapped(table: Table, console: Console) -> bool:
    """Every cell on one line: the widest the table would be is no wider than the console."""
    return Measurement.get(console, console.options.update_width(10_000), table).maximum <= console.width


def _round_table(title: str) -> Table:
    return Table(title=_text(title), title_justify="left", show_edge=False, header_style="bold")


def round_table(stage: StageState, title: str, matches: Sequence[BracketMatch]) -> Table:
    """One line per match: pairing, games won, score, each player's outcome, match id."""
    t = _round_table(title)
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("pairing", no_wrap=True)
    t.add_column("games", justify="center", no_wrap=True)
    t.add_column("score", justify="center", no_wrap=True)
    t.add_column("result", no_wrap=True)
    t.add_column("match", no_wrap=True)
    for bm in matches:
        m = bm.match
        scores = m.total_scores()
        t.add_row(
            str(m.pairing + 1),
            _text(" vs ".join(_player(stage, p) for p in m.players)),
            _text(m.result_text()),
            "-".join(str(scores[p]) for p in m.players) if m.finished else "",
            _text(_outcome_text(m, bm.outcome) or ("" if m.finished else m.state)),
            m.match_id,
        )
    return t


def stacked_round_table(stage: StageState, title: str, matches: Sequence[BracketMatch]) -> Table:
    """The same round for a narrow console: per match, a line with its id (and draws, or its
    state before a result), then a line per player (name and seed, games won, score, outcome)."""
    t = _round_table(title)
    t.add_column("#", justify="right", no_wrap=True)
    names = [_player(stage, p) for bm in matches for p in bm.match.players]
    width = max(
        [len(inert(n)) + 2 for n in names]
        + [len("match ") + max((len(bm.match.match_id) for bm in matches), default=0)]
    )
    t.add_column("match, players", no_wrap=True, min_width=width)
    t.add_column("won", justify="right", no_wrap=True)
    t.add_column("score", justify="right", no_wrap=True)
    t.add_column("result", overflow="fold")
    for bm in matches:
        m = bm.match
        draws = m.draws()
        note = (f"{draws} draw{'s' if draws != 1 else ''}" if draws else "") if m.finished else m.state
        t.add_row(str(m.pairing + 1), f"match {m.match_id}", "", "", _text(note))
        wins, scores = m.game_wins(), m.total_scores()
        for p in m.players:
            t.add_row(
                "",
                _text("  " + _player(stage, p)),
                str(wins[p]) if m.finished else "",
                str(scores[p]) if m.finished else "",
                _text(bm.outcome.get(p, "")),
            )
    return t


def print_final_ranking(data: ReportData, console: Console) -> None:
    ratings = data.overall_ratings
    if not data.tournament.finished:
        done = sum(1 for m in data.matches if m.finished)
        console.print(
            _text(
                f"Tournament not finished: {done}/{len(data.matches)} planned matches done"
                f"{_failed(data.matches)}."
            )
        )
        return
    rule = contest_ranking_rule(data)
    if rule:
        console.print(_text(f"Final ranking by {rule}"), soft_wrap=True)
    t = final_ranking_table(data, with_rating=ratings.kind != "none")
    if ratings.kind != "none" and not _fits(t, console):
        t = final_ranking_table(data, with_rating=False)  # the rating goes before the names do
    console.print(t)
    if ratings.kind != "none":
        console.print(
            _text(f"The {ratings.title} column is a rating over all games, shown beside the ranking.")
        )
    for line in shared_place_lines(final_places_of(data)):
        console.print(_text(line), soft_wrap=True)


def final_ranking_table(data: ReportData, *, with_rating: bool) -> Table:
    ratings = data.overall_ratings
    places = final_places_of(data)
    t = Table(title=_text(f"Final ranking: {data.name}"), title_justify="left", header_style="bold")
    t.add_column("#", justify="right", no_wrap=True)
    t.add_column("entry", no_wrap=True, min_width=max((len(inert(p.entry)) for p in places), default=5))
    t.add_column("ranked by", overflow="fold")
    if with_rating:
        t.add_column(rating_column_title(ratings.title), justify="right", no_wrap=True)
    for p in places:
        row: list[str | Text] = [p.label, _text(p.entry), _text(_ranked_by(p))]
        if with_rating:
            row.append(ratings.label(p.entry))
        t.add_row(*row)
    return t


def print_verdicts(data: ReportData, console: Console) -> None:
    """Games by how they ended, then one line per entry charged with verdicts."""
    counts = data.verdict_counts()
    if not counts:
        return
    parts = [f"{k} {n}" for k, n in sorted(counts.items(), key=lambda kv: (kv[0] != "normal", -kv[1], kv[0]))]
    console.print(_text("Verdicts: " + ", ".join(parts)))
    per_entry: dict[str, list[str]] = {}
    for (entry, kind), n in sorted(data.verdicts_by_entry().items()):
        per_entry.setdefault(entry, []).append(f"{kind} {n}")
    for entry, kinds in per_entry.items():
        console.print(_text(f"  {entry}: {', '.join(kinds)}"))
    bounded = data.bound_summary()
    if bounded:
        console.print(_text(bounded.capitalize() if bounded[0].isalpha() else bounded, style="yellow"))


def print_stderr_warnings(data: ReportData, console: Console) -> None:
    """The games in which entries wrote on stderr (``runner.report.entry_notes``), as a warning."""
    run_dir = str(data.run_dir) if data.run_dir is not None else "RUN"
    for i, line in enumerate(warning_lines(stderr_notes(data), run_dir)):
        console.print(_text(line, style="yellow" if i == 0 else ""), soft_wrap=True)


def _failed(matches: Sequence[MatchRecord]) -> str:
    n = sum(1 for m in matches if m.failed)
    return f", {n} FAILED" if n else ""


def print_workers(data: ReportData, console: Console) -> None:
    """Quarantined and suspect workers (``runner.orchestration.workers_health``), and suspect
    entries (``runner.orchestration.verification``), if any."""
    workers = data.meta.get("workers") or {}
    for name, rec in sorted(workers.items()):
        if isinstance(rec, dict) and rec.get("quarantined"):
            console.print(_text(f"Worker {name} QUARANTINED: {rec.get('reason', '')}", style="yellow"))
        if isinstance(rec, dict) and rec.get("suspect"):  # a verification replay disagreed (docs/fleet.md)
            console.print(_text(f"Worker {name} SUSPECT: {rec['suspect']}", style="yellow"))
    entries = data.meta.get("suspect_entries") or {}
    for name, why in sorted(entries.items()):  # its replays differ across worker pairs (docs/fleet.md)
        console.print(_text(f"Entry {name} SUSPECT: {why}", style="yellow"))
    for line in rejected_key_lines(data.meta.get("rejected_keys") or {}):
        console.print(_text(line, style="yellow"))


def print_timing(data: ReportData, console: Console) -> None:
    """The timing conditions (fair timing: ``runner.domain.timing``)."""
    console.print(_text(data.timing.line()))


def print_summary(data: ReportData, console: Console) -> None:
    """Everything a finished run shows: standings, rounds, verdicts, final ranking."""
    print_stage_standings(data, console)
    print_elimination_rounds(data, console)
    print_verdicts(data, console)
    print_stderr_warnings(data, console)
    print_timing(data, console)
    print_workers(data, console)
    print_final_ranking(data, console)
    print_build_failures(data, console)


def print_build_failures(data: ReportData, console: Console) -> None:
    """Last, where it is seen: each entry whose build failed, its games charged, and the command
    that prints its whole log (the verdicts above quote only its first error lines)."""
    run_dir = str(data.run_dir) if data.run_dir is not None else "RUN"
    charged = data.verdicts_by_entry()
    for log in build_logs(data.matches):
        n = charged.get((log.entry, VerdictKind.BUILD_FAILED.value), 0)
        console.print(
            _text(
                f"{log.entry}: its build failed ({n} game{'s' if n != 1 else ''} charged build_failed); "
                f"the whole log: tourney build-log {run_dir} {log.entry}",
                style="yellow",
            ),
            soft_wrap=True,
        )


def print_final(run_dir: Path | str, console: Console | None = None) -> None:
    """The end-of-run summary the coordinator prints."""
    print_summary(load_report_data(run_dir), console or make_console())


def print_replay(data: ReportData, match: MatchRecord, game_no: int, console: Console) -> None:
    """A game position by position: each move with its player, mark and time."""
    record = match.games[game_no - 1]
    board = data.boards.get(record.board_id or match.board_id, "")  # a game names its own
    replay = replay_game(data.game, board, record)
    marks = replay.marks() if replay.states else []
    seats = ", ".join(f"{mk}={p}" for mk, p in zip(marks, record.order, strict=False))
    head = (
        f"Match {match.match_id} game {game_no}/{len(match.games)}: stage {match.stage}, round {match.round}"
        + (f", {match.bracket} bracket" if match.bracket else "")
        + f", board {record.board_id or match.board_id}; seats {seats}"
    )
    console.print(_text(head, style="bold"))
    if replay.states:
        console.print(_text("start"))
        console.print(_text(data.game.render(replay.states[0])))
    total = len(record.moves)
    for step in replay.steps:
        for gone in step.forfeits:
            console.print(_text(f"{gone} forfeited and left the rotation", style="yellow"))
        mv = step.record
        cpu = f", cpu {mv.cpu_ms:.1f} ms" if mv.cpu_ms is not None else ""
        timing = f"[{mv.wall_ms:.1f} ms{cpu}]"
        console.print(
            _text(f"move {step.number}/{total}: {mv.player} ({step.mark}) plays {inert(mv.move)}  {timing}")
        )
        console.print(_text(data.game.render(replay.states[step.number])))
    if replay.stopped:
        console.print(_text(inert(replay.stopped), style="yellow"))
    console.print(_text(replay.ending(), style="bold"))
    for entry, lines in sorted(record.stderr.items()):
        console.print(_text(f"{entry} wrote on stderr:", style="yellow"))
        for line in lines:
            console.print(_text(f"  {inert(line, one_line=True)}"), soft_wrap=True)
