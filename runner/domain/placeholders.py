"""Placeholders an entry's ``run`` arguments may hold, filled per game by the worker.

- ``{mark}``: the seat's mark (seed 002's one-character argument; X/O ...);
- ``{size}``: the board's size as ``tourney play --size`` takes it: ``N`` for
  pousse, ``WxH`` for boxing, ``WxHxK`` for m,n,k games (the board text's
  first line for other games);
- ``{move_time}``: the per-move wall limit in seconds (``limits.move_wall_s``),
  so a program can budget its thinking time to the contest's clock.

Entries learn the contest's parameters this way without the runner knowing
any entry's options: ``run: [./a.out, --size, "{size}", --budget, "{move_time}"]``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from runner.domain.games.base import BoardError, Game


def board_size(game: Game[Any, Any], board_text: str) -> str:
    """The board's size as ``--size`` writes it (see the module docstring)."""
    try:
        if game.name == "boxing":
            from runner.domain.games.boxing import parse_arena

            width, height, _ = parse_arena(board_text)
            return f"{width}x{height}"
        if game.name == "pousse":
            from runner.domain.games.pousse import parse_size

            return str(parse_size(board_text))
        parse = getattr(game, "parse_board", None)
        if parse is not None:
            w, h, k = parse(board_text)
            return f"{w}x{h}x{k}"
    except (BoardError, ValueError, TypeError):
        pass
    lines = board_text.strip().splitlines()
    return lines[0].strip() if lines else ""


def fill(args: Sequence[str], *, mark: str, size: str = "", move_time: float | None = None) -> list[str]:
    """``args`` with every placeholder replaced."""
    values = {
        "{mark}": mark,
        "{size}": size,
        "{move_time}": f"{move_time:g}" if move_time is not None else "",
    }
    out = []
    for a in args:
        for key, value in values.items():
            a = a.replace(key, value)
        out.append(a)
    return out
