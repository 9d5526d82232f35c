"""The ``submissions:`` section of a config: the contest's rules for taking entries (docs/submissions.md).

When the server opens and closes, what an upload must look like (``layout``), how big it may
be, which of a team's versions counts, the house entry every upload plays its smoke game
against, and whether teams register themselves. Checked like the rest of the config
(``file:line:col`` for every problem): the schema here, the house entry and the board in
``runner.config.checks``.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal

from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, field_validator, model_validator

from runner.domain.names import ENTRY_NAME_PATTERN

#: the layouts an upload may be asked to have (``runner.submissions.layouts``)
LAYOUTS = ("icfp98", "potm", "plugin")


class LanguageModel(BaseModel):
    """How a one-file POTM submission is built and run, by its file name's suffix."""

    model_config = ConfigDict(extra="forbid")

    build: str | None = Field(
        default=None, description="Build command in the entry's directory, '{file}' the uploaded file's name."
    )
    run: list[str] = Field(
        min_length=1, description="argv of the program; '{file}' the uploaded file's name, '{mark}' as usual."
    )


class RateLimitModel(BaseModel):
    """How many uploads one team may send in a window (a 429 with Retry-After beyond it)."""

    model_config = ConfigDict(extra="forbid")

    uploads: int = Field(default=10, ge=1, le=10_000, description="Uploads a team may send per window.")
    per_s: float = Field(default=60.0, gt=0, le=86_400, description="The window, in seconds.")


class SubmissionsModel(BaseModel):
    """The contest's submission rules (``tourney serve``, docs/submissions.md)."""

    model_config = ConfigDict(extra="forbid")

    opens: AwareDatetime | None = Field(
        default=None, description="When uploads are first taken (with a timezone); default: at once."
    )
    deadline: AwareDatetime = Field(
        description="The last instant an upload is taken (with a timezone, e.g. 1998-08-30T17:00:00-04:00); "
        "after it uploads are refused and what counts is frozen."
    )
    layout: Literal["icfp98", "potm", "plugin"] = Field(
        description="What an upload must hold: icfp98 (an executable runme, a readme naming a person and an "
        "email address, src/, optional support/), potm (one source file of a language below, or a directory "
        "with entry.yaml), plugin (a directory with entry.yaml for the config's game)."
    )
    max_bytes: int = Field(
        default=10 * 1024 * 1024,
        ge=1024,
        le=2 * 1024**3,
        description="Largest upload, compressed, in bytes; unpacked it may be 8 times that.",
    )
    max_files: int = Field(default=2000, ge=1, le=100_000, description="Most members an archive may hold.")
    max_depth: int = Field(default=16, ge=1, le=64, description="Deepest directory nesting in an archive.")
    counts: Literal["latest_ready", "latest", "chosen"] = Field(
        default="latest_ready",
        description="Which version of a team plays: the most recent that passed its checks (POTM's rule), "
        "the most recent at all, or the one the team chose.",
    )
    house: str = Field(
        description="The entry (an entrant or seed opponent of this config) every upload plays its smoke "
        "game against."
    )
    board: str | None = Field(
        default=None, description="The board of the smoke game; default: the first stage's first board."
    )
    registration: Literal["open", "closed"] = Field(
        default="closed",
        description="open: teams register through a form and see their token once; closed: the organiser "
        "adds them (tourney team add).",
    )
    build: str | None = Field(
        default=None,
        description="icfp98 layout: the build command run in the submission's directory (e.g. a make in "
        "src/); default: none, runme is run as uploaded.",
    )
    languages: dict[str, LanguageModel] = Field(
        default_factory=dict,
        description="potm layout: one-file submissions by suffix (c, py ...): how each is built and run.",
    )
    rate_limit: RateLimitModel = Field(
        default_factory=RateLimitModel, description="Uploads per team per window."
    )
    dir: str | None = Field(
        default=None,
        description="The contest directory (store, uploads, checks), relative to the config file; default "
        "contests/<name> under the working directory.",
    )

    @field_validator("house")
    @classmethod
    def _house_name(cls, v: str) -> str:
        if not re.match(ENTRY_NAME_PATTERN, v):
            raise ValueError(f"house {v!r} is not an entry name")
        return v

    @field_validator("languages")
    @classmethod
    def _suffixes(cls, v: dict[str, LanguageModel]) -> dict[str, LanguageModel]:
        for suffix in v:
            if not suffix.isalnum() or not suffix.isascii():
                raise ValueError(f"language suffix {suffix!r}: letters and digits only, no dot (c, py, cpp)")
        return v

    @model_validator(mode="after")
    def _order(self) -> SubmissionsModel:
        if self.opens is not None and self.opens >= self.deadline:
            raise ValueError(f"opens ({self.opens.isoformat()}) must be before the deadline")
        if self.layout == "potm" and not self.languages:
            raise ValueError("layout potm needs languages: (how a one-file submission is built and run)")
        if self.build is not None and self.layout != "icfp98":
            raise ValueError("build: is for layout icfp98 (other layouts say it in entry.yaml or languages)")
        return self

    def is_open(self, now: datetime) -> bool:
        return (self.opens is None or now >= self.opens) and now <= self.deadline
