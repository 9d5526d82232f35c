"""Placeholders an entry's ``run`` arguments and ``build`` command may hold, filled by the worker.

In ``run`` (and variants' ``args``), filled per game and seat:

- ``{mark}``: the seat's mark (seed 002's one-character argument; X/O ...);
- ``{seed}``: this game's RNG seed, a decimal integer in ``0 .. 2**31-1`` (so C's
  ``atoi``/``srand`` take it whole): derived from the match's seed (``MatchSpec.seed``,
  itself from the config's ``seed`` and the match id) and the game's number in the match, so
  every game of a match gets its own seed and a rerun of the match gets the same ones;
- ``{size}``: the board's size as ``tourney play --size`` takes it: ``N`` for
  pousse, ``WxH`` for boxing, ``WxHxK`` for m,n,k games (the board text's
  first line for other games);
- ``{move_time}``: the per-move wall limit in seconds (``limits.move_wall_s``, e.g. ``1``
  or ``0.5``), and ``{move_time_ms}`` the same in whole milliseconds (``1000``, ``500``),
  so a program can budget its thinking time to the contest's clock.

In ``build`` (a shell command), the contest-level ones only: ``{size}``, ``{move_time}``,
``{move_time_ms}``; the build's environment is set through them
(``build: BOARD={size} make``). ``{mark}`` and ``{seed}`` differ between the games
of one build and are refused there. A build that uses a placeholder is cached per
expanded command (one build per board size), one without per digest as before.

Entries learn the contest's parameters this way without the runner knowing
any entry's options: ``run: [./a.out, --size, "{size}", --budget, "{move_time}"]``.
A name in braces that is none of these is an error where the entry is loaded
(``entry.yaml:line:col``); ``{{name}}`` stands for a literal ``{name}``, and
shell forms such as ``${CC}`` or ``{a,b}`` are not placeholders.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from runner.domain.games.base import BoardError, Game
from runner.domain.games.boxing import parse_arena
from runner.domain.games.pousse import parse_size
from runner.domain.seeds import derive_seed

#: the placeholders ``run`` arguments know, in the order messages list them
RUN_PLACEHOLDERS = ("mark", "seed", "size", "move_time", "move_time_ms")
#: the ones a build command knows: the same for every game of the contest
BUILD_PLACEHOLDERS = ("size", "move_time", "move_time_ms")
#: why a run-only placeholder cannot be in a build
_NOT_IN_BUILD = {
    "mark": "{mark} is the seat's mark, different per game: use it in run arguments",
    "seed": "{seed} is per game (one build serves every game): use it in run arguments",
}

# ``{{name}}`` (a literal), or ``{name}`` not preceded by ``$`` (``${CC}`` is the shell's)
_TOKEN = re.compile(r"\{\{([A-Za-z_]\w*)\}\}|(?<!\$)\{([A-Za-z_]\w*)\}")
#: game seeds stay below 2**31 so that a C entry's ``atoi`` reads them whole
_SEED_BOUND = 2**31


def used_placeholders(text: str) -> list[str]:
    """The placeholder names ``text`` holds (escaped ``{{name}}`` excluded), in order."""
    return [m.group(2) for m in _TOKEN.finditer(text) if m.group(2)]


def run_arg_problems(text: str) -> list[str]:
    """What is wrong with the placeholders of one ``run`` argument (empty when nothing)."""
    known = ", ".join(f"{{{n}}}" for n in RUN_PLACEHOLDERS)
    return [
        f"unknown placeholder {{{name}}} (run arguments know {known}; write {{{{{name}}}}} for a literal)"
        for name in used_placeholders(text)
        if name not in RUN_PLACEHOLDERS
    ]


def build_problems(command: str) -> list[str]:
    """What is wrong with the placeholders of a ``build`` command (empty when nothing)."""
    known = ", ".join(f"{{{n}}}" for n in BUILD_PLACEHOLDERS)
    out = []
    for name in used_placeholders(command):
        if name in _NOT_IN_BUILD:
            out.append(f"{_NOT_IN_BUILD[name]}, not in build")
        elif name not in BUILD_PLACEHOLDERS:
            out.append(
                f"unknown placeholder {{{name}}} (a build knows {known}; write {{{{{name}}}}} for a literal)"
            )
    return out


def board_size(game: Game[Any, Any], board_text: str) -> str:
    """The board's size as ``--size`` writes it (see the module docstring)."""
    try:
        if game.name == "boxing":
            width, height, _ = parse_arena(board_text)
            return f"{width}x{height}"
        if game.name == "pousse":
            return str(parse_size(board_text))
        parse = getattr(game, "parse_board", None)
        if parse is not None:
            w, h, k = parse(board_text)
            return f"{w}x{h}x{k}"
    except (BoardError, ValueError, TypeError):
        pass
    lines = board_text.strip().splitlines()
    return lines[0].strip() if lines else ""


def game_seed(match_seed: int, number: int) -> int:
    """``{seed}`` for game ``number`` (1-based) of a match whose seed is ``match_seed``."""
    return derive_seed(match_seed, "game", number) % _SEED_BOUND


@dataclass(frozen=True)
class ContestParams:
    """The contest-level values a build and every game of a match share."""

    size: str = ""
    move_time: float | None = None

    def values(self) -> dict[str, str]:
        if self.move_time is None:
            return {"size": self.size, "move_time": "", "move_time_ms": ""}
        return {
            "size": self.size,
            "move_time": f"{self.move_time:g}",
            "move_time_ms": str(round(self.move_time * 1000)),
        }


def _substitute(text: str, values: dict[str, str]) -> str:
    def one(m: re.Match[str]) -> str:
        if m.group(1):
            return "{" + m.group(1) + "}"  # an escaped literal
        name = m.group(2)
        return values.get(name, m.group(0))  # unknown: refused where the entry was loaded

    return _TOKEN.sub(one, text)


def fill(
    args: Iterable[str],
    *,
    mark: str,
    size: str = "",
    move_time: float | None = None,
    seed: int | None = None,
) -> list[str]:
    """``args`` with every placeholder replaced."""
    values = ContestParams(size, move_time).values()
    values["mark"] = mark
    values["seed"] = "" if seed is None else str(seed)
    return [_substitute(a, values) for a in args]


def fill_build(command: str, params: ContestParams) -> str:
    """The build command with ``{size}``, ``{move_time}`` and ``{move_time_ms}`` replaced."""
    return _substitute(command, params.values())


def has_placeholders(texts: Sequence[str]) -> bool:
    """Whether any of ``texts`` holds a placeholder (or an escaped one, which filling changes)."""
    return any(_TOKEN.search(t) for t in texts)
