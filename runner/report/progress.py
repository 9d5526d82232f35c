"""Live progress of a run (interface; the rich display is filled in behind it).

The coordinator builds a ``ProgressSnapshot`` whenever something changes and
hands it to ``RunProgress.update``; how it is shown depends on the mode:
``live`` (rich, a terminal), ``plain`` (log lines, stdout not a terminal),
``quiet`` (``--no-progress``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Literal

Mode = Literal["live", "plain", "quiet"]


@dataclass(frozen=True)
class StageProgress:
    name: str
    done: int  # matches with a result
    total: int  # matches planned so far (grows as rounds open)
    status: str  # waiting | running | done | skipped


@dataclass(frozen=True)
class ProgressSnapshot:
    stages: list[StageProgress]
    games_done: int
    moves_done: int
    elapsed_s: float
    verdicts: dict[str, int] = field(default_factory=dict)  # non-normal verdict kind -> count
    workers: int = 0  # workers connected (0 when inline)
    running: int = 0  # matches in flight


def default_mode(no_progress: bool) -> Mode:
    if no_progress:
        return "quiet"
    return "live" if sys.stdout.isatty() else "plain"


class RunProgress:
    """Shows progress; use as a context manager around the run."""

    def __init__(self, title: str, mode: Mode) -> None:
        self.title = title
        self.mode = mode

    def __enter__(self) -> RunProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def update(self, snap: ProgressSnapshot) -> None:
        if self.mode == "quiet":
            return
        done = sum(s.done for s in snap.stages)
        total = sum(s.total for s in snap.stages)
        print(f"[{snap.elapsed_s:7.1f}s] matches {done}/{total} games {snap.games_done}", flush=True)

    def log(self, message: str) -> None:
        if self.mode != "quiet":
            print(message, flush=True)
