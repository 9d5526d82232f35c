"""Chess games as PGN, from a run's stored results (docs/engines.md, "PGN").

One PGN game per played game of every done match of ``game: chess``, in the store's
order, each as ``runner.domain.chess_pgn`` writes it, its ``Round`` its place in the file
(1, 2, ...: unique, as PGN tools expect).

The coordinator writes ``runs/NAME/games.pgn`` when a run ends; ``tourney pgn RUN``
writes it again from the store at any time.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from runner.domain.chess_pgn import TERMINATION, game_pgn, result_text, score_text
from runner.domain.games import get_game
from runner.domain.games.chess import Chess
from runner.domain.match_record import MatchRecord
from runner.domain.match_values import MatchSpec
from runner.storage.store import RunStore

__all__ = [
    "PGN_FILE",
    "TERMINATION",
    "game_pgn",
    "print_run_pgn",
    "result_text",
    "score_text",
    "write_run_pgn",
]

#: the file a run's games are written to, in its run directory
PGN_FILE = "games.pgn"


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
            game = game_pgn(event, m.spec, number, record, m.finished_at, round_text=str(count + 1))
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
