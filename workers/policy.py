"""A worker's own execution policy (docs/scale-out.md): set where the worker starts, never by a message.

A task names the sandbox and limits its config asked for; the worker plays it
as asked or not at all:

* sandbox: a task asking for ``none`` is refused unless the worker was
  started with ``--allow-unsandboxed``; any other request runs in the
  worker's own sandbox kind (``bwrap``). Nothing from a message is executed
  outside the sandbox without the machine owner's explicit consent.
* limits: a task asking for more than one of the worker's ceilings (memory,
  time, processes, file size...) is refused (``CeilingRefused``) and handed back
  unplayed: it is never played at the lower limit, which would charge its
  entries with timeouts the config does not have (docs/fleet.md).

A refusal is a ``PolicyRefused`` carrying a one-line reason; a sandbox refusal
names the worker and becomes a ``system_error`` result (the machine's fault,
never the entry's; the match is retried elsewhere), a ceiling refusal a
hand-back.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass, field

from runner.domain.match_values import Limits, MatchSpec
from runner.errors import RetryElsewhere

POLICY_ENV = "TOURNEY_WORKER_POLICY"
SANDBOXED_KIND = "bwrap"
UNSANDBOXED_KIND = "none"


class PolicyRefused(RetryElsewhere, RuntimeError):
    """This worker will not run the task as asked."""


class CeilingRefused(PolicyRefused):
    """A task's limit is above this worker's ceiling: it hands the task back (another worker
    may serve it) instead of playing it under other limits."""


@dataclass(frozen=True)
class LimitCeiling:
    """The most any task may get on this worker (None: no cap beyond the config's)."""

    move_wall_s: float | None = 60.0
    memory_mb: int | None = 4096
    processes: int | None = 256
    open_files: int | None = 1024
    file_size_mb: int | None = 256
    output_kb: int | None = 16384
    game_wall_s: float | None = None


@dataclass(frozen=True)
class WorkerPolicy:
    allow_unsandboxed: bool = False
    ceiling: LimitCeiling = field(default_factory=LimitCeiling)
    #: False when the start-up check found no working sandbox (only unsandboxed tasks, if allowed)
    sandbox_works: bool = True

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> WorkerPolicy:
        d = json.loads(text)
        return cls(
            bool(d.get("allow_unsandboxed", False)),
            LimitCeiling(**d.get("ceiling", {})),
            bool(d.get("sandbox_works", True)),
        )

    @classmethod
    def from_env(cls) -> WorkerPolicy:
        """The policy ``tourney worker`` exported for its pool processes (strict default)."""
        raw = os.environ.get(POLICY_ENV)
        return cls.from_json(raw) if raw else cls()

    def sandbox_for(self, requested: str, worker: str) -> str:
        if requested == UNSANDBOXED_KIND:
            if not self.allow_unsandboxed:
                raise PolicyRefused(
                    f"worker {worker} refuses sandbox 'none': it was not started with --allow-unsandboxed"
                )
            return UNSANDBOXED_KIND
        if not self.sandbox_works:
            raise PolicyRefused(f"worker {worker} has no working sandbox; it only runs 'sandbox: none' tasks")
        return SANDBOXED_KIND

    def limits_for(self, requested: Limits) -> Limits:
        """``requested`` itself if every limit is within this worker's ceilings; else
        ``CeilingRefused`` naming the first one above: a ceiling refuses a task, it never
        rewrites it (a match played at tighter limits than its config says would charge the
        entries with timeouts the rules do not have; docs/fleet.md)."""
        c = self.ceiling
        move_cpu = requested.move_cpu_s if requested.move_cpu_s is not None else requested.move_wall_s
        checks: list[tuple[str, float | None, float | None, str]] = [
            ("move_wall_s", requested.move_wall_s, c.move_wall_s, "--max-move-wall-s"),
            ("move_cpu_s", move_cpu, c.move_wall_s, "--max-move-wall-s"),
            ("memory_mb", requested.memory_mb, c.memory_mb, "--max-memory-mb"),
            ("processes", requested.processes, c.processes, "its process ceiling"),
            ("open_files", requested.open_files, c.open_files, "its open-file ceiling"),
            ("file_size_mb", requested.file_size_mb, c.file_size_mb, "its file-size ceiling"),
            ("output_kb", requested.output_kb, c.output_kb, "its output ceiling"),
            ("game_wall_s", requested.game_wall_s, c.game_wall_s, "its game-time ceiling"),
        ]
        for name, value, ceiling, flag in checks:
            if ceiling is not None and (value is None or value > ceiling):
                asked = "no bound" if value is None else f"{value:.12g}"
                raise CeilingRefused(
                    f"ceiling: limits.{name} {asked} is above this worker's {ceiling:.12g} ({flag})"
                )
        return requested

    def apply(self, spec: MatchSpec, worker: str) -> MatchSpec:
        """The spec as this worker will run it; ``PolicyRefused`` if it will not."""
        return dataclasses.replace(
            spec, sandbox=self.sandbox_for(spec.sandbox, worker), limits=self.limits_for(spec.limits)
        )
