"""Chess games as PGN, from a run's stored results (docs/engines.md, "PGN").

One PGN game per played game of every done match of ``game: chess``, in the store's
order: the Seven Tag Roster, ``TimeControl``, ``Termination`` (PGN's own words:
``normal``, ``time forfeit``, ``rules infraction``, ``abandoned``, ``adjudication``,
``unterminated``; the verdict's detail is the game's closing comment), ``FEN`` and
``SetUp`` for a start that is not the standard one, ``Variant`` for Chess960 and
``Opening`` (the board's name: a book opening's; the game's own in a match of several
openings, ``openings.per_match``), and for clocks scaled to the worker (``scale_nps``)
``TimeControlScale`` and ``TimeControlNominal`` (``TimeControl`` is the clock as played).
Each move carries the engine's reported search and time, ``{+0.31/14 0.120s}``, and its clock after the move,
``[%clk 0:00:09.880]``, kept again from the recorded times as the worker kept it.

The coordinator writes ``runs/NAME/games.pgn`` when a run ends; ``tourney pgn RUN``
writes it again from the store at any time.
"""

from __future__ import annotations

import datetime
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import chess
import chess.pgn

from runner.domain.adjudication import ADJUDICATION
from runner.domain.engine_clock import Clock, EngineSettings
from runner.domain.games import get_game
from runner.domain.games.chess import Chess
from runner.domain.match_record import MatchRecord
from runner.domain.match_values import GameRecord, MatchSpec, SearchInfo, VerdictKind
from runner.storage.store import RunStore

#: the file a run's games are written to, in its run directory
PGN_FILE = "games.pgn"

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
    event: str, spec: MatchSpec, number: int, record: GameRecord, when: float | None = None
) -> chess.pgn.Game:
    """The PGN of game ``number`` (1-based) of a chess match."""
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
    pgn.headers["Round"] = f"{spec.round}.{number}" if spec.round else str(number)
    pgn.headers["White"] = white
    pgn.headers["Black"] = black
    pgn.headers["Result"] = result_text(record)
    tcs = {s.describe() for s in settings}
    pgn.headers["TimeControl"] = tcs.pop() if len(tcs) == 1 else " / ".join(s.describe() for s in settings)
    if any(scales):
        factors = [f"{f.factor:g}" if f is not None else "1" for f in scales]
        pgn.headers["TimeControlScale"] = factors[0] if len(set(factors)) == 1 else " / ".join(factors)
        pgn.headers["TimeControlNominal"] = " / ".join(dict.fromkeys(s.describe() for s in nominal))
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
    closing = record.verdict.detail or record.reason
    if record.verdict.player:
        closing = f"{record.verdict.kind.value} ({record.verdict.player}): {closing}"
    if closing:
        node.comment = (node.comment + " " if node is not pgn else "") + closing
    return pgn


def chess_matches(store: RunStore) -> Iterator[MatchRecord]:
    for m in store.match_records(states=("done",)):
        if m.spec is not None and m.result is not None and _is_chess(m.spec):
            yield m


def _is_chess(spec: MatchSpec) -> bool:
    try:
        return isinstance(get_game(spec.game, **spec.game_params), Chess)
    except ValueError:
        return False


def write_pgn(store: RunStore, event: str, out: TextIO) -> int:
    """Every chess game of the run as PGN on ``out``; the number of games written."""
    count = 0
    for m in chess_matches(store):
        assert m.spec is not None and m.result is not None
        for number, record in enumerate(m.result.games, start=1):
            game = game_pgn(event, m.spec, number, record, m.finished_at)
            out.write(str(game) + "\n\n")
            count += 1
    return count


def write_run_pgn(run_dir: Path, path: Path | None = None) -> int | None:
    """``runs/NAME/games.pgn`` (or ``path``) from the store; None when the run has no chess."""
    store = RunStore.open(run_dir)
    try:
        if not any(True for _ in chess_matches(store)):
            return None
        event = str(store.meta().get("name") or run_dir.name)
        target = path or run_dir / PGN_FILE
        tmp = target.with_name(target.name + ".tmp")
        with open(tmp, "w") as out:
            count = write_pgn(store, event, out)
        tmp.replace(target)  # a reader never sees half a file
        return count
    finally:
        store.close()


def print_run_pgn(run_dir: Path, out: TextIO) -> int:
    """The run's chess games on ``out`` (``tourney pgn RUN -o -``)."""
    store = RunStore.open(run_dir)
    try:
        return write_pgn(store, str(store.meta().get("name") or run_dir.name), out)
    finally:
        store.close()
