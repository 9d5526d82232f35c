"""What the submission server's app serves (``ServeContext``) and how it refuses (``Refusal``)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass

from runner.config import TournamentConfig
from runner.config.submission_rules import SubmissionsModel
from runner.errors import MessageRejected
from runner.submissions.contest_dir import ContestDir
from runner.submissions.store import SubmissionStore
from runner.web.live_run import LiveRun


@dataclass
class ServeContext:
    """What the app serves: the contest's config and rules, its store and directory."""

    config: TournamentConfig
    rules: SubmissionsModel
    store: SubmissionStore
    contest: ContestDir
    protocol: str  # the protocol a layout without entry.yaml gets (the house entry's)
    wake_checks: Callable[[], None]
    wake_intake: Callable[[], None]  # an upload was received: the intake pool unpacks it
    secret: bytes
    live: LiveRun | None = None  # the contest's run, shown on /run while it plays
    now: Callable[[], dt.datetime] = lambda: dt.datetime.now(dt.UTC)


class Refusal(MessageRejected):
    """A request refused: one line for the client, with its HTTP status (and headers: Retry-After)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.headers = headers or {}
