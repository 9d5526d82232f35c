"""The coordinator side's start-up accelerations, each behind one switch read here (issue 27, item 4).

Every trick below only makes ``tourney run`` start or end sooner: with its switch off the run
does the same work the plain way, and plays the same games. docs/benchmarks.md ("Speed
tricks and their switches") lists each with its measured gain; the workers side has its own
(``workers.warm``). A switch is an environment variable, read in ``WarmSwitches.from_env``
only; a value of ``0`` (or ``no``, ``false``, ``off``) turns its trick off.

* ``TOURNEY_STANDBY``: the local worker starts before the coordinator's own imports and
  imports meanwhile (``runner.orchestration.standby``). ``TOURNEY_NO_STANDBY=1``, the old
  name, still turns it off.
* ``TOURNEY_REPLAY_WARMER``: the report's replays are computed while the matches play
  (``runner.report.replay_memo``; the run command asks ``switches().replay_warmer``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

STANDBY_ENV = "TOURNEY_STANDBY"
#: the standby's switch as it was first named (``1`` turns it off)
NO_STANDBY_ENV = "TOURNEY_NO_STANDBY"
REPLAY_WARMER_ENV = "TOURNEY_REPLAY_WARMER"

_OFF = ("0", "no", "false", "off")


def _on(env: Mapping[str, str], name: str) -> bool:
    return env.get(name, "1").strip().lower() not in _OFF


@dataclass(frozen=True)
class WarmSwitches:
    """Which of the coordinator side's start-up tricks are on (all, unless switched off)."""

    standby: bool = True
    replay_warmer: bool = True

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> WarmSwitches:
        """The one place the switches are read (``os.environ`` unless ``env`` is given)."""
        env = os.environ if env is None else env
        no_standby = env.get(NO_STANDBY_ENV, "").strip().lower() not in ("", *_OFF)
        return cls(
            standby=_on(env, STANDBY_ENV) and not no_standby,
            replay_warmer=_on(env, REPLAY_WARMER_ENV),
        )


def switches() -> WarmSwitches:
    """The switches as the environment sets them now (read at each call: cheap, and a test
    that sets a variable sees it)."""
    return WarmSwitches.from_env()
