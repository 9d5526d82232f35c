"""One chess game as PGN, from its record (docs/engines.md, "PGN"): pure, for the run's
``games.pgn`` (``runner.report.pgn``) and ``tourney play --pgn`` alike.

The Seven Tag Roster (``Round`` as the caller numbers the game: unique in a file), ``PlyCount``,
``TimeControl`` in the PGN standard's form (``40/60``, ``10+0.1``, ``1/0.1`` for a time per
move, ``-`` for none; ``WhiteTimeControl``/``BlackTimeControl`` instead when the sides'
differ), a node or depth limit in a tag of its own (``SearchLimit``: ``nodes=2000``,
``depth=12``; ``White``/``BlackSearchLimit`` when they differ), ``Termination`` (PGN's own
words: ``normal``, ``time forfeit``, ``rules infraction``, ``abandoned``, ``adjudication``,
``unterminated``; the verdict's detail is the game's closing comment), ``FEN`` and ``SetUp``
for a start that is not the standard one, ``Variant`` for Chess960 and ``Opening`` (the
board's name), and for clocks scaled to the worker (``scale_nps``) ``TimeControlScale`` and
``TimeControlNominal`` (``TimeControl`` is the clock as played). Each move carries the
engine's reported search and time, ``{+0.31/14 0.120s}``, and its clock after the move,
``[%clk 0:00:09.880]``, kept again from the recorded times as the worker kept it.
"""

from __future__ import annotations

import datetime

import chess
import chess.pgn

from runner.domain.adjudication import ADJUDICATION
from runner.domain.engine_clock import Clock, EngineSettings
from runner.domain.games import get_game
from runner.domain.games.chess import Chess
from runner.domain.match_values import GameRecord, MatchSpec, SearchInfo, VerdictKind

TERMINATION = {
    VerdictKind.NORMAL: "normal",
    VerdictKind.RESIGN: "normal",
    VerdictKind.TIMEOUT: "time forfeit",
    VerdictKind.ILLEGAL_MOVE: "rules infraction",
    VerdictKind.BAD_OUTPUT: "rules infraction",
    VerdictKind.SYSTEM_ERROR: "unterminated",
}


def result_text(record: GameRecord) -> str:
    if record.verdict.kind is VerdictKind.SYSTEM_ERROR:
        return "*"
    if record.winner is None:
        return "1/2-1/2"
    return "1-0" if record.winner == record.order[0] else "0-1"


def score_text(search: SearchInfo | None) -> str:
    """``+0.31/14``, ``-M3/20``: the mover's score and depth, as cutechess writes them."""
    if search is None:
        return ""
    if search.mate is not None:
        score = f"{'+' if search.mate > 0 else '-'}M{abs(search.mate)}"
    elif search.cp is not None:
        score = f"{search.cp / 100:+.2f}"
    else:
        score = ""
    return score + (f"/{search.depth}" if search.depth is not None else "")


def game_pgn(
    event: str,
    spec: MatchSpec,
    number: int,
    record: GameRecord,
    when: float | None = None,
    *,
    round_text: str | None = None,
) -> chess.pgn.Game:
    """The PGN of game ``number`` (1-based) of a chess match; ``round_text`` its ``Round``
    (a file's writer numbers its games; by default ``ROUND.GAME`` of the match)."""
    rules = get_game(spec.game, **spec.game_params)
    assert isinstance(rules, Chess)
    # a match of several openings (``MatchSpec.boards``): each game starts at its own
    start_text = spec.board_text_of(record)
    board_id = record.board_id or spec.board_id
    board = rules.board_of(start_text)
    pgn = chess.pgn.Game()
    white, black = record.order[0], record.order[1]
    nominal = [EngineSettings.from_dict(spec.entries[name].engine) for name in (white, black)]
    # clocks scaled to the worker's speed (scale_nps, docs/engines.md): as the engines played them
    scales = [record.clock_scale.get(name) for name in (white, black)]
    settings = [s if f is None else s.scaled(f.factor) for s, f in zip(nominal, scales, strict=True)]
    pgn.headers["Event"] = event
    pgn.headers["Site"] = "tourney"
    day = datetime.datetime.fromtimestamp(when, datetime.UTC) if when else None
    pgn.headers["Date"] = day.strftime("%Y.%m.%d") if day else "????.??.??"
    pgn.headers["Round"] = round_text or (f"{spec.round}.{number}" if spec.round else str(number))
    pgn.headers["White"] = white
    pgn.headers["Black"] = black
    pgn.headers["Result"] = result_text(record)
    _limit_tags(pgn.headers, settings)
    if any(scales):
        factors = [f"{f.factor:g}" if f is not None else "1" for f in scales]
        pgn.headers["TimeControlScale"] = factors[0] if len(set(factors)) == 1 else " / ".join(factors)
        pgn.headers["TimeControlNominal"] = " / ".join(dict.fromkeys(time_control_tag(s) for s in nominal))
    adjudicated = record.verdict.kind is VerdictKind.NORMAL and record.reason.startswith(ADJUDICATION)
    pgn.headers["Termination"] = (
        ADJUDICATION if adjudicated else TERMINATION.get(record.verdict.kind, "abandoned")
    )
    if rules.chess960:
        pgn.headers["Variant"] = "Chess960"
    fen = rules.start_fen(start_text)
    if fen is not None or rules.chess960:
        pgn.setup(board)
        # a Chess960 game names its start even where it is the standard one (PGN readers need it)
        pgn.headers["SetUp"], pgn.headers["FEN"] = "1", board.fen()
    if board_id and board_id != "default":
        pgn.headers["Opening"] = board_id
    clocks = [Clock.start(s) for s in settings]
    node: chess.pgn.GameNode = pgn
    position = board.copy()
    for move in record.moves:
        seat = 0 if position.turn == chess.WHITE else 1
        parsed = chess.Move.from_uci(move.move)
        if not position.is_legal(parsed):
            break  # the record was re-judged: this cannot happen for an accepted result
        position.push(parsed)
        node = node.add_variation(parsed)
        node.comment = " ".join(t for t in (score_text(move.search), f"{move.wall_ms / 1000:.3f}s") if t)
        clocks[seat] = clocks[seat].spend(move.wall_ms)[0]
        if settings[seat].tc is not None:
            node.set_clock(max(0.0, clocks[seat].left_ms / 1000.0))
    pgn.headers["PlyCount"] = str(node.ply() - pgn.ply())
    closing = record.verdict.detail or record.reason
    if record.verdict.player:
        closing = f"{record.verdict.kind.value} ({record.verdict.player}): {closing}"
    if closing:
        node.comment = (node.comment + " " if node is not pgn else "") + closing
    return pgn


def time_control_tag(settings: EngineSettings) -> str:
    """PGN's ``TimeControl`` (the standard's section 9.6.1): ``moves/seconds`` (``40/60``),
    ``seconds+increment`` (``10+0.1``), ``1/0.1`` for a time per move (one move a period),
    ``-`` for no clock (nodes or depth alone)."""
    if settings.tc is not None:
        return settings.tc.text()
    if settings.st_s is not None:
        return f"1/{settings.st_s:g}"
    return "-"


def search_limit_tag(settings: EngineSettings) -> str:
    """The node and depth limits PGN's ``TimeControl`` has no form for: ``nodes=2000 depth=8``."""
    parts = [f"nodes={settings.nodes}"] if settings.nodes is not None else []
    return " ".join([*parts, *([f"depth={settings.depth}"] if settings.depth is not None else [])])


def _limit_tags(headers: chess.pgn.Headers, settings: list[EngineSettings]) -> None:
    """``TimeControl`` and ``SearchLimit``; per side (``White...``/``Black...``) when they differ."""
    for tag, of in (("TimeControl", time_control_tag), ("SearchLimit", search_limit_tag)):
        white, black = (of(s) for s in settings)
        if white == black:
            if white:
                headers[tag] = white
        else:
            headers[f"White{tag}"], headers[f"Black{tag}"] = white or "-", black or "-"
