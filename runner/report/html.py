"""The self-contained HTML report (``report.html``).

One file, no network: the page's CSS and JS (``templates/report.css``, ``report.js``)
are included into ``templates/report.html.j2`` when it is rendered, and the replay
data is JSON inside a ``<script type="application/json">`` block, so the page works
from a USB stick or an e-mail attachment.

Replays: every position is computed here, in Python, by the game's referee
(``runner.report.replay``); the page only steps through them. Each game is
stored as its start grid plus, per move, the runs of cells that changed,
which keeps a 20x20 m,n,k game or a boxing arena to a few kilobytes.

Large tournaments: a 30,000-game run cannot carry every replay in one page,
and replaying every game would also take minutes. Replays are therefore
embedded within a budget (``REPLAY_BUDGET_CHARS`` of JSON and at most
``REPLAY_MAX_GAMES`` games), chosen from the last stage backwards and, within
a stage, from the last round backwards: the final and the late elimination
rounds are what people open. The page says how many games have an embedded
replay; every other game still lists its result and verdict and names the
``tourney replay RUN MATCH --game K`` command that prints it.

Runs of more than ``runner.report.site.SPLIT_ABOVE_MATCHES`` matches get the
split layout instead (``runner.report.site``): this page without its match
lists and replays, which go to data files beside it, loaded on demand.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import jinja2

from runner.domain.engine_clock import Clock, EngineSettings
from runner.domain.fleet import rejected_key_lines
from runner.domain.games import is_chess
from runner.domain.games.base import Game
from runner.domain.match_record import MatchRecord
from runner.domain.match_values import GameRecord, MatchSpec, VerdictKind
from runner.domain.stages.base import StageState
from runner.domain.stages.places import place_labels
from runner.report.boards import Grid, grid_changes, grid_of
from runner.report.brackets import (
    BRACKET_ORDER,
    BracketRound,
    bracket_label,
    bracket_rounds,
    is_bracket_stage,
)
from runner.report.disputes import dispute_fields, origin_text
from runner.report.entry_notes import build_logs, stderr_notes
from runner.report.entry_view import entry_anchor, entry_views, replay_key, verdict_label
from runner.report.model import RatingTable, ReportData
from runner.report.replay import replay_game
from runner.report.replay_memo import ReplayMemo, memo_key
from runner.report.terminal import (
    contest_ranking_rule,
    extra_columns,
    final_places_of,
    rating_column_title,
    shared_place_lines,
)
from runner.report.tuning import TunedRow, tuned_rows

if TYPE_CHECKING:
    from runner.report.site import SplitLayout

REPLAY_BUDGET_CHARS = 12_000_000
REPLAY_MAX_GAMES = 3_000
SEAT_COLOURS = 8  # CSS defines seat0..seat7; more seats reuse them


def replay_json(
    data: ReportData,
    match: MatchRecord,
    game_no: int,
    record: GameRecord,
    ahead: ReplayMemo | None = None,
) -> dict[str, Any]:
    """One game's replay as the page's viewer reads it (compact keys); from ``ahead`` when it
    was computed while the run played (``runner.report.replay_memo``)."""
    board_text = data.boards.get(record.board_id or match.board_id, "")  # a game names its own
    doc = _replay_doc(data, board_text, record, ahead)
    if doc.get("chess") and match.spec is not None:
        # each side's clock after each move, as the worker kept it (runner.domain.chess_pgn);
        # from the match's engine settings, which the memo's key does not hold: added here
        doc = {**doc, "clocks": chess_clocks(match.spec, record)}
    return doc


def _replay_doc(
    data: ReportData, board_text: str, record: GameRecord, ahead: ReplayMemo | None
) -> dict[str, Any]:
    if ahead is not None:
        doc = ahead.get(memo_key(data.game_name, data.game_params, board_text, record))
        if doc is not None:
            return doc
    return game_replay_doc(data.game, board_text, record)


def game_replay_doc(game: Game[Any, Any], board_text: str, record: GameRecord) -> dict[str, Any]:
    """``replay_json`` computed: ``record`` replayed by ``game``'s referee on ``board_text``."""
    replay = replay_game(game, board_text, record)
    players = len(record.order)
    chess_game = is_chess(game)
    if chess_game:
        # local: start-up time: python-chess builds its attack tables at import (about 40 ms),
        # which a report of any other game never needs
        from runner.domain.chess_pgn import score_text
    grids: list[Grid] = [grid_of(game, s, players) for s in replay.states]
    kinds: dict[str, str] = {}
    for g in grids:
        kinds.update(g.kinds)
    steps = []
    for step, before, after in zip(replay.steps, grids, grids[1:], strict=False):
        changes = [x for run in grid_changes(before, after) for x in run]
        mv = step.record
        row = [step.seat, mv.move.strip(), round(mv.wall_ms, 1), changes, list(step.forfeits)]
        if chess_game:
            row.append(score_text(mv.search))  # the engine's eval and depth: +0.31/14
        steps.append(row)
    return {
        "chess": chess_game,
        "w": grids[0].width if grids else 0,
        "h": grids[0].height if grids else 0,
        "start": grids[0].cells if grids else "",
        "kinds": {ch: _css_kind(k) for ch, k in kinds.items()},
        "names": list(record.order),
        "marks": replay.marks() if replay.states else [],
        "steps": steps,
        "moves": len(record.moves),
        "end": replay.ending(),
        "verdict": record.verdict.kind.value,
        "stopped": replay.stopped,
    }


def chess_clocks(spec: MatchSpec, record: GameRecord) -> list[float | None]:
    """The mover's clock in seconds after each move (None for a side on nodes or depth)."""
    settings = [EngineSettings.from_dict(spec.entries[name].engine) for name in record.order[:2]]
    clocks = [Clock.start(s) for s in settings]
    seat_of = {name: seat for seat, name in enumerate(record.order)}
    out: list[float | None] = []
    for mv in record.moves:
        seat = seat_of.get(mv.player, 0)
        clocks[seat] = clocks[seat].spend(mv.wall_ms)[0]
        out.append(
            round(max(0.0, clocks[seat].left_ms) / 1000.0, 3) if settings[seat].tc is not None else None
        )
    return out


def _css_kind(kind: str) -> str:
    if kind.startswith("seat"):
        return f"seat{int(kind[4:]) % SEAT_COLOURS}"
    return kind


def select_replays(
    data: ReportData,
    budget_chars: int = REPLAY_BUDGET_CHARS,
    max_games: int = REPLAY_MAX_GAMES,
    ahead: ReplayMemo | None = None,
) -> dict[str, dict[str, Any]]:
    """The replays to embed, by ``replay_key``: last stages and rounds first, within the budget
    (``ahead``: documents computed while the run played, see ``replay_json``)."""
    stage_pos = {s.name: i for i, s in enumerate(data.stages)}
    plan_pos = {m.match_id: i for i, m in enumerate(data.matches)}
    games = sorted(
        data.games(),
        key=lambda t: (-stage_pos.get(t[0].stage, -1), -t[0].round, plan_pos[t[0].match_id], t[1]),
    )
    chosen: dict[str, dict[str, Any]] = {}
    used = 0
    for m, k, g in games:
        if len(chosen) >= max_games:
            break
        doc = replay_json(data, m, k, g, ahead)
        size = len(json.dumps(doc, separators=(",", ":")))
        if used + size > budget_chars:
            break
        chosen[replay_key(m.match_id, k)] = doc
        used += size
    return chosen


# -- view models for the template ---------------------------------------------


@dataclass
class GameRow:
    number: int
    record: GameRecord
    key: str
    embedded: bool

    @property
    def verdict(self) -> str:
        return verdict_label(self.record.verdict)

    @property
    def abnormal(self) -> bool:
        return self.record.verdict.kind is not VerdictKind.NORMAL

    @property
    def scores(self) -> str:
        return ", ".join(f"{n} {self.record.scores.get(n, 0)}" for n in self.record.order)


@dataclass
class MatchPanel:
    """One match's panel in a stage section: the match, its game rows, the entrants' seeds."""

    match: MatchRecord
    games: list[GameRow]
    seeds: dict[str, int]

    def player(self, name: str) -> str:
        s = self.seeds.get(name)
        return f"{name} ({s})" if s else name


@dataclass
class StageView:
    stage: StageState
    ratings: RatingTable
    matches: list[MatchPanel]
    done: int
    games: int
    brackets: list[BracketRound] = field(default_factory=list)
    bracket_names: list[str] = field(default_factory=list)
    embedded: int = 0
    #: the games a clock decided, in one line (``ReportData.clock_decided``), or ""
    clock_decided: str = ""
    #: an spsa stage's options: start, tuned value and path chart (``runner.report.tuning``)
    tuned: list[TunedRow] = field(default_factory=list)

    @cached_property  # read once per standings row: a 10,000-entry table must not scan itself per row
    def extra_keys(self) -> list[str]:
        """Tiebreak values behind the rank (seed, buchholz, head_to_head ...)."""
        return extra_columns(self.stage)

    @cached_property
    def seeds(self) -> dict[str, int]:
        """Entrant -> its 1-based seed in this stage (the bracket boxes show it)."""
        return {e: i for i, e in enumerate(self.stage.entrants, start=1)}

    @property
    def anchor(self) -> str:
        return "stage-" + "".join(c if c.isalnum() else "-" for c in self.stage.name)


def _stage_views(data: ReportData, embedded: set[str]) -> list[StageView]:
    views = []
    for stage in data.stages:
        seeds = {e: i for i, e in enumerate(stage.entrants, start=1)}
        rows = []
        for m in data.stage_matches(stage.name):
            games = [
                GameRow(k, g, replay_key(m.match_id, k), replay_key(m.match_id, k) in embedded)
                for k, g in enumerate(m.games, start=1)
            ]
            rows.append(MatchPanel(m, games, seeds))
        view = StageView(
            stage=stage,
            ratings=data.stage_ratings(stage.name),
            matches=rows,
            done=sum(1 for r in rows if r.match.finished),
            games=sum(len(r.games) for r in rows),
            embedded=sum(1 for r in rows for g in r.games if g.embedded),
            clock_decided=data.clock_decided(stage.name),
            tuned=tuned_rows(stage.tuning) if stage.tuning is not None else [],
        )
        if is_bracket_stage(stage):
            view.brackets = bracket_rounds(data, stage)
            names = {sec.bracket for rnd in view.brackets for sec in rnd.sections}
            view.bracket_names = sorted(names, key=lambda b: (BRACKET_ORDER.get(b, 1), b))
        views.append(view)
    return views


def _json_for_script(doc: object) -> str:
    """JSON that cannot end its ``<script>`` element early."""
    text = json.dumps(doc, separators=(",", ":"), ensure_ascii=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _bytecode_cache() -> jinja2.BytecodeCache | None:
    """Compiled templates kept between runs (compiling the report's template costs about
    as much as rendering it); keyed by the template's source, so an edit recompiles."""
    base = os.environ.get("TOURNEY_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "tourney"
    )
    directory = os.path.join(base, "templates")
    try:
        os.makedirs(directory, mode=0o700, exist_ok=True)
    except OSError:
        return None  # no cache: compile every time
    return jinja2.FileSystemBytecodeCache(directory)


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(Path(__file__).parent / "templates"),
        bytecode_cache=_bytecode_cache(),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["num"] = lambda x: f"{x:g}" if isinstance(x, float) else str(x)
    env.globals["bracket_label"] = bracket_label
    env.globals["rejected_key_lines"] = rejected_key_lines
    env.globals["dispute_fields"] = dispute_fields
    env.globals["origin_text"] = origin_text
    env.globals["entry_anchor"] = entry_anchor
    env.globals["when"] = lambda ts: (
        datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if ts else "-"
    )
    return env


def render_report(
    data: ReportData,
    *,
    replay_budget_chars: int = REPLAY_BUDGET_CHARS,
    replay_max_games: int = REPLAY_MAX_GAMES,
    generated: str | None = None,
    ahead: ReplayMemo | None = None,
) -> str:
    """The whole page as one string (the self-contained, single-file layout)."""
    replays = select_replays(data, replay_budget_chars, replay_max_games, ahead)
    return render_page(data, replays, _stage_views(data, set(replays)), generated=generated)


def render_page(
    data: ReportData,
    replays: dict[str, dict[str, Any]],
    stages: list[StageView],
    *,
    layout: SplitLayout | None = None,
    generated: str | None = None,
) -> str:
    """The page from its parts. With a ``layout`` (``runner.report.site``) the match lists
    and replays stay out of the page: they are in the layout's data files."""
    total_games = sum(s.games for s in stages)
    counts = data.verdict_counts()
    verdicts = sorted(counts.items(), key=lambda kv: (kv[0] != "normal", -kv[1], kv[0]))
    overall = data.overall_ratings
    notes = stderr_notes(data)
    template = _environment().get_template("report.html.j2")
    return template.render(
        data=data,
        meta=data.meta,
        sandbox=data.sandbox,
        stages=stages,
        layout=layout,
        final_ranking=list(data.tournament.final_ranking),
        final_places=final_places_of(data),
        ranking_rule=contest_ranking_rule(data),
        shared_places=shared_place_lines(final_places_of(data)),
        rating_title=rating_column_title(overall.title),
        place_labels=place_labels,
        overall=overall,
        total_matches=len(data.matches),
        done_matches=sum(1 for m in data.matches if m.finished),
        total_games=total_games,
        total_moves=data.move_count(),
        verdicts=verdicts,
        bounded=data.bound_summary(),
        verdicts_by_entry=sorted(data.verdicts_by_entry().items()),
        embedded=len(replays),
        replay_data=_json_for_script({} if layout is not None else replays),
        boards=sorted(data.boards.items()),
        generated=generated or datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC"),
        run_dir=run_dir_label(data),
        stderr_notes=notes,
        stderr_games=len({(n.match_id, n.game) for n in notes}),
        failed_builds=build_logs(data.matches),
        # a split report's entry panels are data files (runner.report.site), read when opened
        entries=[] if layout is not None else entry_views(data, set(replays)),
    )


def run_dir_label(data: ReportData) -> str:
    """How the page names the run directory in ``tourney replay RUN ...`` hints."""
    return str(data.run_dir) if data.run_dir else "RUN"


#: for ``runner.report.site``, which renders the same views into a split report's pages
stage_views = _stage_views
environment = _environment
