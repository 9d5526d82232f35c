"""The config's sections for chess engines (docs/engines.md): how an engine thinks (``each:``
and an entry's ``engine:``), the opening book (``openings:``) and the rules that end a game
early (``adjudication:``); the rest of the schema is ``runner.config.models``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from runner.domain.adjudication import Adjudication, DrawRule, ResignRule
from runner.domain.engine_clock import INFINITE_TC, TimeControl
from runner.domain.openings import Opening, auto_per_match, read_book, select
from runner.domain.tablebase import TbRule


class EngineModel(BaseModel):
    """How a chess engine thinks (docs/engines.md): its clock, per entry or for all (``each``)."""

    model_config = ConfigDict(extra="forbid")

    tc: str | None = Field(
        default=None,
        description="Time control as cutechess/fastchess write it: '40/60' (moves/seconds, repeating), "
        "'10+0.1' (seconds + increment), '40/1:30+0.5'; 'inf' for no clock (with nodes or depth). "
        "Default 10+0.1 when no tc, st, nodes or depth.",
    )
    st: float | None = Field(default=None, gt=0, description="Seconds per move (UCI go movetime, xboard st).")
    nodes: int | None = Field(default=None, ge=1, description="Nodes per move (UCI go nodes).")
    depth: int | None = Field(default=None, ge=1, description="Plies per move (UCI go depth, xboard sd).")
    timemargin: int | None = Field(
        default=None,
        ge=0,
        le=60_000,
        description="Milliseconds an engine may overstep its clock before its flag falls (default 50).",
    )
    options: dict[str, str | int | float | bool] = Field(
        default_factory=dict, description="Engine options (UCI setoption / xboard option): Hash, Threads..."
    )
    restart: bool | None = Field(
        default=None,
        description="on: a fresh engine process for every game (fastchess restart=on); off (the default, "
        "as fastchess): one engine kept alive across the games of its own match, told ucinewgame / new "
        "between them.",
    )
    scale_nps: int | None = Field(
        default=None,
        ge=1000,
        description="Clocks scaled to the machine (fishtest, OpenBench): each worker measures the engine's "
        "nodes per second once (a fixed search from the start position) and multiplies tc and st by "
        "scale_nps / measured; the factor is recorded with every game.",
    )
    log: Literal["engine", "off"] | None = Field(
        default=None,
        description="engine: every line to and from the engine, with timestamps, kept per game with the "
        "run (logs/engines/ in the run directory; cutechess/fastchess -log).",
    )

    @field_validator("restart", mode="before")
    @classmethod
    def _on_off(cls, v: object) -> object:
        # YAML reads on/off as booleans; anything else (a quoted "on" included) is checked here
        if isinstance(v, str) and v.strip().lower() in ("on", "off"):
            return v.strip().lower() == "on"
        if v is not None and not isinstance(v, bool):
            raise ValueError(f"restart is on or off, got {v!r}")
        return v

    @field_validator("log", mode="before")
    @classmethod
    def _log_off(cls, v: object) -> object:
        return "off" if v is False else v  # YAML reads off as a boolean

    @field_validator("tc")
    @classmethod
    def _tc(cls, v: str | None) -> str | None:
        if v is not None and v.strip() != INFINITE_TC:
            TimeControl.parse(v)  # its ValueError says what a tc looks like
        return v.strip() if v is not None else v

    def settings_dict(self) -> dict[str, Any]:
        """The keys set here, as ``EngineSettings.to_dict`` names them."""
        names = {
            "tc": "tc",
            "st": "st_s",
            "nodes": "nodes",
            "depth": "depth",
            "timemargin": "timemargin_ms",
            "restart": "restart",
            "scale_nps": "scale_nps",
        }
        d: dict[str, Any] = {
            names[k]: v for k, v in self.model_dump(exclude={"options", "log"}).items() if v is not None
        }
        if self.log is not None:
            d["log"] = self.log == "engine"
        if self.options:
            d["options"] = dict(self.options)
        return d


class OpeningsModel(BaseModel):
    """Chess: an opening book whose positions become boards (docs/engines.md, "Openings")."""

    model_config = ConfigDict(extra="forbid")

    file: str = Field(description="An EPD (one position a line) or PGN book, relative to the config file.")
    order: Literal["random", "sequential"] = Field(
        default="sequential", description="Book order, or shuffled by the tournament seed (random)."
    )
    plies: int | None = Field(
        default=None, ge=0, description="PGN books: play this many plies of each line (default: all)."
    )
    start: int = Field(default=1, ge=1, description="The first opening to use (1-based, in book order).")
    count: int | None = Field(
        default=None,
        ge=1,
        description="How many openings to use (default: all from start); more than the book holds "
        "wraps to its first again.",
    )
    per_match: Annotated[int, Field(ge=1)] | Literal["auto"] = Field(
        default="auto",
        description="Openings a match plays, each as a colour-swapped game pair, with the engines kept "
        "across all of them (fastchess -games 2 -rounds N keeps its engines across every game): fewer engine "
        "starts, but a worker crash loses the match's every pair and its pairs run one after another on "
        "one worker. auto (the default): up to 8, at most half the openings (rounded up) so that a pairing "
        "still spreads over 2 matches, in round robin, gauntlet and seeding stages; sprt and spsa stages "
        "keep one pair a match (docs/config.md, 'openings').",
    )

    def openings_a_match(self, chosen: int) -> int:
        """``per_match`` for ``chosen`` selected openings, ``auto`` resolved from the config alone
        (a new run then fits it to its local slots, ``TournamentConfig.fit_openings_to_slots``,
        and records it: a resumed run plans the same match ids)."""
        return auto_per_match(chosen) if self.per_match == "auto" else self.per_match

    def load(self, base_dir: Path, seed: int, chess960: bool) -> list[Opening]:
        """The selected openings; ``BookError`` says what is wrong with the book."""
        book = read_book(base_dir / self.file, plies=self.plies, chess960=chess960)
        return select(book, order=self.order, start=self.start, count=self.count, seed=seed)


class ResignModel(BaseModel):
    """fastchess -resign: a side whose score stays this far below zero loses."""

    model_config = ConfigDict(extra="forbid")
    movecount: int = Field(
        ge=1, description="Consecutive moves of the losing side's score at -score or worse."
    )
    score: int = Field(ge=1, description="Centipawns below zero (a mate against it counts).")
    twosided: bool = Field(default=False, description="Only when the winning side's score agrees (>= score).")


class DrawModel(BaseModel):
    """fastchess -draw: a draw when both sides' scores stay near zero."""

    model_config = ConfigDict(extra="forbid")
    movenumber: int = Field(ge=0, description="Full moves played before a draw may be adjudicated.")
    movecount: int = Field(ge=1, description="Consecutive moves of each side's score within score of zero.")
    score: int = Field(ge=0, description="Centipawns from zero.")


class TbModel(BaseModel):
    """cutechess/fastchess -tb: Syzygy tables decide positions with few pieces."""

    model_config = ConfigDict(extra="forbid")
    path: str = Field(
        description="An absolute directory of Syzygy WDL tables (*.rtbw), the same on the coordinator "
        "(which re-judges) and every worker; several joined with ':'."
    )
    pieces: int | None = Field(
        default=None, ge=3, le=7, description="At most this many pieces (default: the tables' most)."
    )
    ignore_50: bool = Field(
        default=False, description="A win only past the 50-move rule counts as a win (cutechess -tbignore50)."
    )

    @field_validator("path")
    @classmethod
    def _tables(cls, v: str) -> str:
        dirs = [d for d in v.split(os.pathsep) if d]
        if not dirs or not all(os.path.isabs(d) for d in dirs):
            raise ValueError(f"the tablebase path must be absolute (workers read the same path), got {v!r}")
        if not any(Path(d).glob("*.rtbw") for d in dirs):
            raise ValueError(f"no Syzygy WDL tables (*.rtbw) in {v}")
        return v


class AdjudicationModel(BaseModel):
    """Chess: ending games from the engines' reported scores (docs/engines.md, "Adjudication")."""

    model_config = ConfigDict(extra="forbid")
    resign: ResignModel | None = Field(default=None, description="Adjudicate a loss (fastchess -resign).")
    draw: DrawModel | None = Field(default=None, description="Adjudicate a draw (fastchess -draw).")
    maxmoves: int | None = Field(
        default=None,
        ge=1,
        description="A draw once each side made this many moves (fastchess -maxmoves).",
    )
    tb: TbModel | None = Field(
        default=None,
        description="Syzygy tablebase adjudication (cutechess/fastchess -tb, -tbpieces, -tbignore50).",
    )

    def to_dict(self) -> dict[str, Any]:
        return Adjudication(
            ResignRule(**self.resign.model_dump()) if self.resign else None,
            DrawRule(**self.draw.model_dump()) if self.draw else None,
            self.maxmoves,
            TbRule(**self.tb.model_dump()) if self.tb else None,
        ).to_dict()
