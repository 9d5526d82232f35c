"""Board sources of a tournament config: a file, inline text, or generated from the seed.

A board is always text (see ``runner.domain.games.base``). A config names its boards
under ``boards:``; stages refer to those names. Board ids, the names that
matches carry, are chosen so that the text behind an id never changes for a
given config:

- a ``file:`` or ``text:`` board, or a ``generate:`` board without
  ``per_round``, has the id of its name. A generated one is made once from
  ``derive_seed(config seed, "board", name)``.
- a ``generate:`` board with ``per_round: true`` is a template: every round of
  every stage that uses it gets a fresh board with the id
  ``<name>.<stage>.r<round>``, made from ``derive_seed(config seed, "board",
  name, stage, round)``. The same config and seed always give the same boards.
- the name ``default`` needs no definition: it is the game's own default
  board (the seed's sample arena for boxing, ``6`` for pousse ...).

Board names and stage names may not contain dots, so an id parses back
without ambiguity.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from runner.domain.entry_tree import read_named_file
from runner.domain.games import get_game
from runner.domain.games.base import Game
from runner.domain.names import NAME_PATTERN as NAME_PATTERN  # its home before
from runner.domain.seeds import derive_seed as derive_seed  # its home before; still importable here

DEFAULT_BOARD = "default"


class BoardSpec(BaseModel):
    """One named board: exactly one of ``file``, ``text``, ``generate``."""

    model_config = ConfigDict(extra="forbid")

    file: str | None = Field(
        default=None, description="Path of a file holding the board text, relative to the config file."
    )
    text: str | None = Field(
        default=None, description="The board text itself (a boxing arena, '6' for pousse, '15 15 5' ...)."
    )
    generate: dict[str, Any] | None = Field(
        default=None,
        description="Make the board from the tournament seed with these generator parameters "
        "(boxing: width, height, blocked).",
    )
    per_round: bool = Field(
        default=False,
        description="With generate: a fresh board for every round of every stage that uses it "
        "(id '<name>.<stage>.r<round>'), instead of one board for the whole tournament.",
    )

    @model_validator(mode="after")
    def _one_source(self) -> BoardSpec:
        given = [k for k in ("file", "text", "generate") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"a board needs exactly one of file, text, generate (got {', '.join(given) or 'none'})"
            )
        if self.per_round and self.generate is None:
            raise ValueError("per_round needs generate: only generated boards can differ per round")
        return self


def round_board_id(name: str, stage: str, round_no: int) -> str:
    return f"{name}.{stage}.r{round_no}"


def parse_board_id(board_id: str) -> tuple[str, str | None, int | None]:
    """``(name, stage, round)`` of a board id; stage and round are None for a fixed board."""
    parts = board_id.split(".")
    if len(parts) == 3 and parts[2].startswith("r") and parts[2][1:].isdigit():
        return parts[0], parts[1], int(parts[2][1:])
    return board_id, None, None


def board_source_text(spec: BoardSpec, base_dir: Path) -> str | None:
    """The text of a ``file:`` or ``text:`` board (None for a generated one); OSError if unreadable,
    ``RefusedPath`` if the file is a link, fifo, device or hard link (docs/config.md: the entry rule)."""
    if spec.text is not None:
        return spec.text
    if spec.file is not None:
        return read_named_file(base_dir / spec.file, shown_as=Path(spec.file)).decode()
    return None


def generate_board(game: Game[Any, Any], spec: BoardSpec, seed: int, *id_parts: object) -> str:
    """A generated board: a pure function of the config seed and the board's id parts."""
    assert spec.generate is not None
    return game.generate_board(random.Random(derive_seed(seed, "board", *id_parts)), **spec.generate)


class BoardResolver:
    """Board texts by id for one config (cached; generation is deterministic)."""

    def __init__(
        self,
        game: str,
        game_params: dict[str, Any],
        boards: dict[str, BoardSpec],
        seed: int,
        base_dir: Path,
    ) -> None:
        self._game = get_game(game, **game_params)
        self._boards = boards
        self._seed = seed
        self._base_dir = base_dir
        self._cache: dict[str, str] = {}

    def text(self, board_id: str) -> str:
        """The board text behind ``board_id``; KeyError for an id this config cannot make."""
        if board_id not in self._cache:
            self._cache[board_id] = self._make(board_id)
        return self._cache[board_id]

    def _make(self, board_id: str) -> str:
        name, stage, round_no = parse_board_id(board_id)
        spec = self._boards.get(name)
        if spec is None:
            if board_id == DEFAULT_BOARD:
                return self._game.default_board()
            raise KeyError(f"no board {board_id!r} in this config")
        if stage is None:
            if spec.per_round:
                raise KeyError(f"board {name!r} is per_round: its ids are '{name}.<stage>.r<round>'")
            text = board_source_text(spec, self._base_dir)
            return text if text is not None else generate_board(self._game, spec, self._seed, name)
        if not spec.per_round:
            raise KeyError(f"board {name!r} is not per_round, so {board_id!r} does not exist")
        return generate_board(self._game, spec, self._seed, name, stage, round_no)
