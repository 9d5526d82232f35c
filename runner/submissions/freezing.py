"""What a run plays from the submissions: each team's counting version, by digest
(docs/submissions.md, "Freeze and run").

``counting_entries`` reads the contest's store and picks, per team that is not revoked (in the
order the teams registered: the run's seed order), the version that counts by the config's
``submissions.counts`` (``runner.submissions.counting``). ``frozen_config`` turns the config's
own document into the one the run plays: its ``entries`` those versions' entry directories,
each with the ``submission`` it is (team, version, upload sha256, entry digest: the config
loader checks the entry still has that digest, and the report names it), and without the
``submissions`` section (the run has no uploads, and the house entry stays the contest's).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.submissions.contest_dir import ContestDir
from runner.submissions.counting import counting
from runner.submissions.store import SubmissionStore


@dataclass(frozen=True)
class FrozenEntry:
    """One team's counting version, as the run plays it."""

    team: str
    version: int
    state: str
    received: float
    upload_sha256: str
    entry_digest: str
    path: Path

    def origin(self) -> dict[str, Any]:
        """The entry's ``submission:`` in the frozen config (``runner.config.models.SubmissionOrigin``)."""
        return {
            "team": self.team,
            "version": self.version,
            "upload_sha256": self.upload_sha256,
            "entry_digest": self.entry_digest,
        }

    def record(self) -> dict[str, Any]:
        """The entry's line in ``NAME.frozen.json``."""
        return {**self.origin(), "state": self.state, "received": self.received, "path": str(self.path)}


@dataclass(frozen=True)
class Counting:
    """Every team's counting version, and the teams without one."""

    entries: list[FrozenEntry]
    missing: list[str]


def counting_entries(contest: ContestDir, counts: str) -> Counting:
    """Each team's counting version in the contest's store, in registration order."""
    store = SubmissionStore(contest.store)
    try:
        chosen: list[FrozenEntry] = []
        missing: list[str] = []
        for team in sorted(store.teams(), key=lambda t: (t.created, t.name)):
            if team.revoked is not None:
                continue
            sub = counting(store.submissions(team.name), counts)
            if sub is None or sub.entry_digest is None:
                missing.append(team.name)
                continue
            chosen.append(
                FrozenEntry(
                    team=team.name,
                    version=sub.version,
                    state=sub.state,
                    received=sub.received,
                    upload_sha256=sub.upload_digest,
                    entry_digest=sub.entry_digest,
                    path=contest.entry(sub.entry_digest),
                )
            )
        return Counting(chosen, missing)
    finally:
        store.close()


def frozen_config(document: dict[str, Any], entries: list[FrozenEntry]) -> dict[str, Any]:
    """The config document the run plays: ``entries`` the counting versions (each with the
    submission it is), no ``submissions`` section."""
    out = {k: v for k, v in document.items() if k != "submissions"}
    out["entries"] = [{"path": str(e.path), "submission": e.origin()} for e in entries]
    return out
