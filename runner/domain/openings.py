"""Opening books for chess (docs/engines.md, "Openings"): EPD or PGN files read with python-chess.

A book becomes boards: each opening is a board whose text is the FEN where the book line
ends (a PGN line cut to ``plies``), named ``opening-NNN`` by its place in the file
(1-based, so a name always means the same position of the same book). A stage that lists
the board ``openings`` plays every selected one; a two-player stage plays each pairing on
each board with colours swapped, so each opening is a game pair, both games in one match.
With ``per_match`` K above 1, a stage plays K openings in one match instead (``groups``): one
board whose id joins its openings' names with ``+``, the match's spec carrying every one of
them (``MatchSpec.boards``), so that the engines start once for K pairs. ``per_match: auto``
(the default, ``auto_per_match``) is K from the number of openings: up to
``AUTO_PER_MATCH_MAX``, and at most half of them (rounded up), so that one pairing still makes
at least two matches to spread over the workers (both of one machine's slots busy); a new
run with more local slots than that fills lowers K until each slot has a match.

Selection: from the ``start``-th opening of the file (1-based), ``count`` of them (all by
default), in file order (``sequential``) or shuffled by the tournament seed (``random``:
the same config and seed, the same openings in the same order). A ``count`` above what is
left of the book wraps to its first selected opening again (fastchess's ``-rounds``): the
repeats are boards ``opening-NNN_2``, ``_3``...
"""

from __future__ import annotations

import io
import random
from dataclasses import dataclass
from pathlib import Path

from runner.domain.seeds import derive_seed
from runner.errors import UsageError

#: the board name a stage lists to play every selected opening
OPENINGS_BOARD = "openings"
#: ``per_match: auto``'s most openings a match: 16 games with one engine start a side, and a
#: worker lost mid-match costs at most 8 pairs to play again (docs/engines.md, "Openings")
AUTO_PER_MATCH_MAX = 8


class BookError(UsageError, ValueError):
    """A book that cannot be read; the message starts ``FILE:LINE:`` where a line is at fault."""


@dataclass(frozen=True)
class Opening:
    name: str  # opening-NNN, NNN its 1-based place in the book
    fen: str


def board_name(index: int) -> str:
    return f"opening-{index:03d}"


def read_book(path: Path, *, plies: int | None = None, chess960: bool = False) -> list[Opening]:
    """Every opening of an EPD (one position a line) or PGN book; ``BookError`` for a bad one."""
    try:
        text = path.read_text()
    except OSError as e:
        raise BookError(f"{path}: cannot read: {e.strerror or e}") from None
    if path.suffix.lower() == ".pgn":
        return _pgn_openings(path, text, plies, chess960)
    return _epd_openings(path, text, chess960)


def _epd_openings(path: Path, text: str, chess960: bool) -> list[Opening]:
    import chess  # local: python-chess loads with a book, not with every config (about 0.1 s)

    out: list[Opening] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        board = chess.Board(chess960=chess960)
        try:
            board.set_epd(line)
        except ValueError as e:
            raise BookError(f"{path}:{number}: not an EPD position ({e}): {line.strip()[:60]!r}") from None
        if not board.is_valid():
            raise BookError(f"{path}:{number}: not a legal position: {line.strip()[:60]!r}")
        out.append(Opening(board_name(len(out) + 1), board.fen()))
    if not out:
        raise BookError(f"{path}: no positions (an EPD book has one position a line)")
    return out


def _pgn_openings(path: Path, text: str, plies: int | None, chess960: bool) -> list[Opening]:
    import chess.pgn  # local: as in _epd_openings

    out: list[Opening] = []
    stream = io.StringIO(text)
    while True:
        offset = stream.tell()
        game = chess.pgn.read_game(stream)
        if game is None:
            break
        line = text.count("\n", 0, offset) + 1
        if game.errors:
            raise BookError(f"{path}:{line}: not a PGN game: {game.errors[0]}")
        board = game.board()
        if chess960:
            board.chess960 = True
        for ply, move in enumerate(game.mainline_moves()):
            if plies is not None and ply >= plies:
                break
            board.push(move)
        out.append(Opening(board_name(len(out) + 1), board.fen()))
    if not out:
        raise BookError(f"{path}: no games (a PGN book holds games whose moves are the openings)")
    return out


def select(
    book: list[Opening], *, order: str, start: int = 1, count: int | None = None, seed: int = 0
) -> list[Opening]:
    """The openings a tournament plays (module doc); ``BookError`` when ``start`` is past the end."""
    if start > len(book):
        raise BookError(f"start {start} is past the book's last opening ({len(book)})")
    chosen = book[start - 1 :]
    if order == "random":
        chosen = list(chosen)
        random.Random(derive_seed(seed, "openings")).shuffle(chosen)
    if count is None or count <= len(chosen):
        return chosen[:count] if count is not None else chosen
    # more than the book holds: start over from its first selected opening, as fastchess's
    # -rounds does; a repeat is a board of its own, named for its pass (opening-007_2)
    out = list(chosen)
    while len(out) < count:
        again = len(out) // len(chosen) + 1
        out += [Opening(f"{o.name}_{again}", o.fen) for o in chosen[: count - len(out)]]
    return out


def auto_per_match(openings: int, slots: int = 1) -> int:
    """``per_match: auto`` for a stage of ``openings`` openings (module doc). ``slots``: the
    matches a pairing may spread over as a new run starts (its local workers' slots shared by
    its pairings, ``TournamentConfig.fit_openings_to_slots``): at most openings / slots a
    match (rounded up), so that every slot has a match to play. A run records the number it
    began with, so a resumed run plans the same matches whatever its workers then."""
    k = max(1, min(AUTO_PER_MATCH_MAX, -(-openings // 2)))
    return max(1, min(k, -(-openings // slots))) if slots > 1 else k


def group_id(names: list[str]) -> str:
    """The board id of a match that plays ``names`` one after another (module doc)."""
    return "+".join(names)


def groups(chosen: list[Opening], per_match: int) -> list[tuple[str, list[Opening]]]:
    """The openings ``per_match`` at a time, in order (the last group may hold fewer), each
    with its board id; a group of one is the opening's own board."""
    chunks = [chosen[i : i + per_match] for i in range(0, len(chosen), per_match)]
    return [(group_id([o.name for o in chunk]), chunk) for chunk in chunks]
