"""Which of a team's versions counts, and the deadline's words (docs/submissions.md, "Versions").

Pure rules over the store's rows:

- ``latest_ready`` (POTM's "your most recent entry is the one that will count", with its master's
  "if I can get it to compile then you are in"): the most recent version whose checks passed;
- ``latest``: the most recent version that unpacked and met the layout, whatever its checks say;
- ``chosen``: the version the team picked (none picked: as ``latest_ready``).

After the deadline nothing new arrives, so what counts is frozen by the same rule.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from runner.submissions.store import Submission


def counting(versions: Sequence[Submission], counts: str) -> Submission | None:
    """The version of one team that plays, by the rule ``counts``; None when none can."""
    ordered = sorted(versions, key=lambda s: s.version, reverse=True)
    ready = [s for s in ordered if s.state == "ready"]
    if counts == "latest":
        return next((s for s in ordered if s.entry_digest and s.state != "refused"), None)
    if counts == "chosen":
        chosen = next((s for s in ordered if s.chosen), None)
        if chosen is not None:
            return chosen
    return ready[0] if ready else None


def time_left(deadline: datetime, now: datetime) -> str:
    """``2d 3h 4m left``, ``4m 10s left``, or ``closed`` once the deadline is past."""
    seconds = int((deadline - now).total_seconds())
    if seconds < 0:
        return "closed"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h {minutes}m left"
    if hours:
        return f"{hours}h {minutes}m left"
    return f"{minutes}m {secs}s left"
