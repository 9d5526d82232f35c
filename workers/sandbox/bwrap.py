"""The bubblewrap host (docs/architecture.md, row 14; docs/config.md): one sandbox
per entry per game.

``BwrapHostFactory.open`` gives a game a ``BwrapHost`` over a new ``Sandbox``
(``bwrap_sandbox``); what the entry sees in it is ``bwrap_view``, a persistent
process is ``bwrap_process``. ``run_build`` builds in such a sandbox and copies
the built tree back into the entry directory, never following a link it finds
there (``build_output``).

Close a host from the thread that opened it: ``--die-with-parent`` ties the
sandbox to that thread.
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from runner.domain.match_values import Limits, VerdictKind
from runner.errors import EntryFault
from workers.sandbox.base import EntryHost, HostError, HostFactory, InteractiveProcess, RunOutcome
from workers.sandbox.build_output import (
    BUILD_OUTPUT_BYTES,
    BuildOutputError,
    build_output_failure,
    copy_out,
    machine_fault,
)
from workers.sandbox.bwrap_sandbox import Sandbox
from workers.sandbox.bwrap_view import BUILD_SCRATCH_BYTES, SANDBOX_ENV, Layout, extra_binds, system_view
from workers.sandbox.cgroups import LAUNCHER_SLACK_BYTES, PIDS_SLACK, Cgroups, SandboxCgroup, shared_cgroups
from workers.sandbox.checks import find_bwrap, sandbox_problem, sandbox_user
from workers.sandbox.launcher import launcher_binary, tree_stats
from workers.sandbox.limits import BUILD_LOG_TAIL

log = logging.getLogger(__name__)


class BwrapHost(EntryHost):
    """One entry for one game, in its own sandbox."""

    def __init__(self, sandbox: Sandbox):
        self._sandbox = sandbox

    @property
    def workdir(self) -> Path:  # type: ignore[override]  # read-only here: never assigned
        """Looked up when asked (the current game's init): not on every game's way in."""
        return self._sandbox.workdir

    @property
    def launcher_pid(self) -> int:
        """The sandbox's PID 1 as the host sees it (every entry process descends from it)."""
        return self._sandbox.pid

    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        return self._sandbox.run(argv, stdin, limits)

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        return self._sandbox.spawn(argv, limits)

    def close(self) -> None:
        self._sandbox.close()


class EntryOverMemory(EntryFault):
    """The entry's own files alone are more than its ``memory_mb`` (``detail`` says so)."""

    def __init__(self, detail: str):
        super().__init__(detail)
        self.detail = detail


def entry_over_memory(entry_bytes: int, limits: Limits) -> EntryOverMemory | None:
    """Why an entry of ``entry_bytes`` cannot be played under ``limits``, or None.

    Its working copy lives on a tmpfs, in memory, charged to the sandbox's cgroup within
    ``memory_mb`` (docs/sandbox.md, "A cgroup per sandbox"): files past it leave its
    programs nothing, and putting them in would have the kernel kill the launcher."""
    if entry_bytes <= limits.memory_mb << 20:
        return None
    return EntryOverMemory(
        f"memory limit {limits.memory_mb} MiB exceeded (by the entry's own files, "
        f"{entry_bytes / (1 << 20):.1f} MiB, which live in memory and count)"
    )


class OverMemoryHost(EntryHost):
    """An entry whose files do not fit in its memory limit: every program it would run
    is ``memory_limit`` at once, nothing is started."""

    def __init__(self, why: EntryOverMemory, entry_dir: Path):
        self.detail = why.detail
        self.workdir = entry_dir

    def _outcome(self) -> RunOutcome:
        return RunOutcome(b"", b"", None, None, 0.0, 0.0, 0, VerdictKind.MEMORY_LIMIT, self.detail)

    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        return self._outcome()

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        return _NeverStarted(self._outcome())

    def close(self) -> None:
        return None


class _NeverStarted(InteractiveProcess):
    def __init__(self, outcome: RunOutcome):
        self.outcome = outcome

    def send(self, text: str) -> None:
        return None

    def read_line(self, timeout_s: float, *, pause: bool = True) -> str | RunOutcome:
        return self.outcome

    @property
    def cpu_ms(self) -> float:
        return 0.0

    def close(self) -> None:
        return None


class BwrapHostFactory(HostFactory):
    """Hosts that run every entry program in a bubblewrap sandbox.

    Raises ``HostError`` with what is wrong and how to fix it when sandboxes
    cannot work on this machine (``checks.sandbox_problem``).
    """

    name = "bwrap"

    def __init__(self) -> None:
        problem = sandbox_problem()
        if problem is not None:
            raise HostError(problem)
        bwrap = find_bwrap()
        assert bwrap is not None  # sandbox_problem found it
        self.bwrap = bwrap
        self.launcher = launcher_binary()
        self.sandbox_uid = sandbox_user()
        self.binds = extra_binds()
        self.cgroups: Cgroups = shared_cgroups()
        if self.cgroups.problem is not None:
            log.warning("%s", self.cgroups.problem)

    @property
    def memory_mode(self) -> str:
        """What charges an entry's memory: "memory: cgroup v1", "... v2" or "memory: rlimit only"."""
        return self.cgroups.memory_mode

    def _cgroup(self, memory_bytes: int, processes: int) -> SandboxCgroup | None:
        if self.cgroups.version is None:
            return None  # rlimits only: said once, at start
        # what the sandbox may hold and the launcher: it can never pin more than this of the machine
        return self.cgroups.create(memory_bytes + LAUNCHER_SLACK_BYTES, processes + PIDS_SLACK)

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        try:
            return BwrapHost(self.game_sandbox(entry_dir, limits))
        except EntryOverMemory as why:
            return OverMemoryHost(why, entry_dir)

    def game_sandbox(self, entry_dir: Path, limits: Limits) -> Sandbox:
        """A new sandbox for one game of the entry at ``entry_dir`` (what ``open`` hosts).

        Its memory is exactly ``memory_mb`` (and the launcher's slack): the entry's own files,
        on the tmpfs of its working copy, count in it, so deleting them at run time frees
        nothing it may then use beyond ``memory_mb`` (issue 34). ``EntryOverMemory`` if the
        files alone do not fit."""
        entry_bytes, entry_inodes = tree_stats(entry_dir)
        over = entry_over_memory(entry_bytes, limits)
        if over is not None:
            raise over
        layout = Layout.for_game(entry_bytes, limits, entry_inodes)
        cgroup = self._cgroup(limits.memory_mb << 20, limits.processes)
        return self._sandbox(layout, entry_dir, cgroup)

    def _sandbox(self, layout: Layout, entry_dir: Path, cgroup: SandboxCgroup | None) -> Sandbox:
        try:
            return Sandbox(self.bwrap, self.launcher, layout, entry_dir, binds=self.binds, cgroup=cgroup)
        except BaseException:
            if cgroup is not None:
                cgroup.destroy()  # whatever failed, no cgroup outlives its sandbox
            raise

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        """Build in a sandbox like a game's, then copy the built tree back into ``entry_dir``."""
        entry_bytes, entry_inodes = tree_stats(entry_dir)
        # a build's source and scratch on top of its (build) memory limit: a compiler's output is
        # files, and the build limits are the organiser's, not a game's
        cgroup = self._cgroup((limits.memory_mb << 20) + entry_bytes + BUILD_SCRATCH_BYTES, limits.processes)
        layout = Layout.for_build(entry_bytes, entry_inodes)
        sandbox = self._sandbox(layout, entry_dir, cgroup)
        try:
            # the build cache raised ``limits`` to ``limits.build_limits`` already
            outcome = sandbox.run(["sh", "-c", command], b"", limits, stderr_keep=BUILD_LOG_TAIL)
            if outcome.failure is not None or outcome.exit_code != 0:
                return outcome  # nothing to take: the build failed already
            # into a fresh directory, then in place of the source: what the build
            # removed or replaced (a file by a directory) cannot conflict
            fresh = entry_dir.with_name(f".{entry_dir.name}.built")
            if fresh.exists():
                shutil.rmtree(fresh)
            try:
                # apparent sizes: a sparse file costs its full length on this disk (docs/config.md#builds)
                cap = entry_bytes + BUILD_OUTPUT_BYTES
                copy_out(sandbox.workdir, fresh, max_files=layout.entry_inodes, max_bytes=cap)
            except BuildOutputError as e:
                shutil.rmtree(fresh, ignore_errors=True)
                return build_output_failure(outcome, str(e))
            except OSError as e:
                shutil.rmtree(fresh, ignore_errors=True)
                if machine_fault(e, entry_dir.parent):
                    raise HostError(f"cannot copy the build of {entry_dir} out of its sandbox: {e}") from e
                # anything else the build's tree makes impossible is the build's (build_output)
                return build_output_failure(outcome, f"cannot be copied out: {e.strerror or e}")
            shutil.rmtree(entry_dir)
            os.rename(fresh, entry_dir)
            return outcome
        finally:
            sandbox.close()


#: importable from here: what an entry sees (bwrap_view) is part of the host's public face
__all__ = ["SANDBOX_ENV", "BwrapHost", "BwrapHostFactory", "system_view"]
