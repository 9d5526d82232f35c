"""Tablebase adjudication (docs/engines.md, "Adjudication"): a game that reaches a position with
at most ``pieces`` pieces, all in the Syzygy WDL tables at ``path``, is decided by them, as
cutechess's and fastchess's ``-tb``. The probe is python-chess's (``chess.syzygy``).

The worker asks after every move (``runner.domain.adjudication.ruling``), and the coordinator
asks the same question of every position of the transcript when it re-judges, so both need the
same tables at the same path. tourney ships no tables.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from runner.domain.games.base import Outcome
from runner.errors import RetryElsewhere

if TYPE_CHECKING:  # python-chess loads where a position is probed, not with the config's rules
    import chess
    import chess.syzygy

#: the reason's words after ``adjudication: `` (and what engine_lines prints as SyzygyTB)
TABLEBASE = "tablebase"


@dataclass(frozen=True)
class TbRule:
    path: str  # a directory of *.rtbw files (several joined with os.pathsep)
    pieces: int | None = None  # at most this many pieces (default: the tables' largest)
    ignore_50: bool = False  # a cursed win (won only past the 50-move rule) counts as a win


class TablesMissing(RetryElsewhere, ValueError):
    """No WDL table where a rule says the tables are: this machine cannot judge the match's
    positions, so the attempt goes back for a worker that has them (never an engine's fault)."""


@functools.lru_cache(maxsize=4)
def open_tables(path: str) -> tuple[chess.syzygy.Tablebase, int]:
    """The tables at ``path`` (kept open: each probe reads them) and their most pieces."""
    import chess.syzygy  # local: python-chess loads where tables are probed, not with a config

    dirs = [d for d in path.split(os.pathsep) if d]
    found = [f for d in dirs for f in Path(d).glob("*.rtbw")] if dirs else []
    if not found:
        raise TablesMissing(f"no Syzygy WDL tables (*.rtbw) in {path}")
    tables = chess.syzygy.Tablebase()
    for d in dirs:
        tables.add_directory(d, load_dtz=False)
    most = max(sum(1 for c in f.stem if c.isalpha() and c not in "v") for f in found)
    return tables, most


def tablebase_outcome(rule: TbRule, board: chess.Board) -> Outcome | None:
    """What the tables say of ``board`` (White seat 0), or None where they say nothing: more
    pieces than the rule or the tables allow, castling rights, or a table not there."""
    import chess  # local: as in open_tables
    import chess.syzygy

    tables, most = open_tables(rule.path)
    pieces = chess.popcount(board.occupied)
    if pieces > min(rule.pieces or most, most) or board.castling_rights:
        return None
    try:
        wdl = tables.probe_wdl(board)
    except (KeyError, chess.syzygy.MissingTableError):
        return None
    if abs(wdl) == 1 and not rule.ignore_50:
        wdl = 0  # a cursed win or blessed loss: drawn by the 50-move rule
    if wdl == 0:
        return Outcome((), (0, 0), f"adjudication: {TABLEBASE} draw ({pieces} pieces)")
    mover = 0 if board.turn == chess.WHITE else 1
    winner = mover if wdl > 0 else 1 - mover
    side = "white" if winner == 0 else "black"
    return Outcome(
        (winner,),
        (1, 0) if winner == 0 else (0, 1),
        f"adjudication: {TABLEBASE} win for {side} ({pieces} pieces)",
    )
