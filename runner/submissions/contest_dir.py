"""A contest's directory (docs/submissions.md): everything ``tourney serve`` keeps.

contests/<name>/
  submissions.sqlite   teams, submissions, check steps (``runner.submissions.store``)
  uploads/<sha256>     each upload as it arrived, by the digest of its bytes
  entries/<digest>/    each submission unpacked (the entry directory the checks built)
  artifacts/<digest>.tar.gz   the same packed, as it travels to the workers
  incoming/            uploads being received (a server killed here leaves only debris here)
  checks/              the embedded Redis, the local worker, their logs (disposable)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from runner.config import TournamentConfig
from runner.errors import UsageError


class ContestBusy(UsageError, RuntimeError):
    """Another ``tourney serve`` serves this contest directory."""


@dataclass(frozen=True)
class ContestDir:
    path: Path

    @property
    def store(self) -> Path:
        return self.path / "submissions.sqlite"

    @property
    def uploads(self) -> Path:
        return self.path / "uploads"

    @property
    def entries(self) -> Path:
        return self.path / "entries"

    @property
    def artifacts(self) -> Path:
        return self.path / "artifacts"

    @property
    def incoming(self) -> Path:
        return self.path / "incoming"

    @property
    def checks(self) -> Path:
        return self.path / "checks"

    def make(self) -> ContestDir:
        self.path.mkdir(mode=0o700, parents=True, exist_ok=True)
        for d in (self.uploads, self.entries, self.artifacts, self.incoming, self.checks):
            d.mkdir(mode=0o700, exist_ok=True)
        return self

    @contextlib.contextmanager
    def served(self) -> Iterator[None]:
        """One server per contest directory (the kernel drops the lock if it is killed); what a
        killed one left half received in ``incoming/`` is removed as the next one starts."""
        f: IO[str] = open(self.path / ".serve.lock", "a+")  # noqa: SIM115 (held while serving)
        try:
            try:
                fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                f.seek(0)
                raise ContestBusy(
                    f"{self.path} is served by another tourney serve (pid {f.read().strip() or '?'})"
                ) from None
            f.seek(0)
            f.truncate()
            f.write(str(os.getpid()))
            f.flush()
            for debris in self.incoming.iterdir():
                if debris.is_dir() and not debris.is_symlink():
                    shutil.rmtree(debris, ignore_errors=True)
                else:
                    debris.unlink(missing_ok=True)
            yield
        finally:
            f.close()

    def artifact(self, digest: str) -> Path:
        return self.artifacts / f"{digest}.tar.gz"

    def entry(self, digest: str) -> Path:
        return self.entries / digest


def contest_dir_of(config: TournamentConfig, override: Path | None = None) -> ContestDir:
    """``override``, else the config's ``submissions.dir`` (relative to the config file), else
    ``contests/<name>`` under the working directory (as runs go to ``runs/<name>``)."""
    if override is not None:
        return ContestDir(override.resolve())
    rules = config.submissions
    if rules is not None and rules.dir:
        return ContestDir((config.base_dir / rules.dir).resolve())
    return ContestDir((Path("contests") / config.name).resolve())
