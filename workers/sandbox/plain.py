"""``sandbox: none``: entries as plain subprocesses. For trusted entries only
(docs/architecture.md, row 14).

Each game gets a private temporary copy of the entry directory (its cwd, so ICFP'98
``support/`` state stays inside one game) and a private ``TMPDIR``; its programs are
started, limited and killed by ``plain_run`` (one move) and ``plain_process`` (a
persistent process).

As root, every program runs as the sandbox user in directories it owns
(``workers.sandbox.plain_user``), out of reach of the organiser's secrets.

What this host does *not* do, and why it is for trusted entries only:

* no namespaces: an entry sees the real file system and network;
* a descendant that calls ``setsid()`` (or ``setpgid()`` into another group of
  the worker's session) leaves the process group and escapes both the leftover
  check and the final kill;
* no private ``/tmp`` (``shares_machine_tmp``): a literal path such as POTM's
  ``/tmp/arena.<MARK>`` is the machine's real file, seen by every game on it
  (the potm-arena protocol guards its own: ``workers.protocols.arena_lock``);
* no process-count limit: ``RLIMIT_NPROC`` counts every process of the user,
  not of the entry, so it would break unrelated work (and root ignores it);
* if the referee itself is killed (SIGKILL), the move in flight runs on until
  it exits by itself (a persistent brain sees EOF on stdin), and the game's
  temporary directory stays behind until ``sweep_stale_dirs`` removes it.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
import time
from pathlib import Path

from runner.domain.match_values import Limits
from workers.sandbox.base import EntryHost, HostError, HostFactory, InteractiveProcess, RunOutcome
from workers.sandbox.build_output import (
    BUILD_OUTPUT_BYTES,
    BuildOutputError,
    apparent_bytes,
    build_output_failure,
    check_output_size,
    copy_out,
)
from workers.sandbox.limits import BUILD_LOG_TAIL
from workers.sandbox.plain_process import PlainProcess
from workers.sandbox.plain_run import entry_env, run_process
from workers.sandbox.plain_user import ENTRY_DIRS, entry_dirs, entry_uid, give_to_entry_user

log = logging.getLogger(__name__)

#: temporary directories: per game (working copy + TMPDIR) and per build, named with our pid
GAME_DIR_PREFIX = "tourney-game-"
BUILD_DIR_PREFIX = "tourney-build-"
#: a directory of a dead process this old is debris (see ``sweep_stale_dirs``)
STALE_DIR_S = 600.0


def _entry_tempdir(prefix: str) -> Path:
    """A fresh private directory for an entry's game or build: ours, or, when entries run as
    another user (``workers.sandbox.plain_user``), in ``ENTRY_DIRS`` (given to it by the caller)."""
    base = entry_dirs() if entry_uid() is not None else None
    return Path(tempfile.mkdtemp(prefix=f"{prefix}{os.getpid()}-", dir=base))


def new_game_dir(entry_dir: Path) -> Path:
    """A fresh game directory: ``work/`` a copy of ``entry_dir``, ``tmp/`` empty (the entry
    user's, when entries run as another user)."""
    root = _entry_tempdir(GAME_DIR_PREFIX)
    try:
        shutil.copytree(entry_dir, root / "work", symlinks=True)
        (root / "tmp").mkdir()
        give_to_entry_user(root)
    except OSError as e:
        shutil.rmtree(root, ignore_errors=True)
        raise HostError(f"cannot make a working copy of {entry_dir}: {e}") from e
    return root


class PlainHost(EntryHost):
    """One entry for one game: a private copy of its directory and a private TMPDIR.

    ``root``: a game directory as ``new_game_dir`` makes it, handed over by the caller
    (``workers.sandbox.plain_reuse`` keeps untouched ones for the entry's next game)."""

    shares_machine_tmp = True

    def __init__(self, entry_dir: Path, root: Path | None = None):
        self._closed = False
        self._procs: list[PlainProcess] = []
        self._root = root if root is not None else new_game_dir(entry_dir)
        self.workdir = self._root / "work"
        self._tmp = self._root / "tmp"

    def _env(self) -> dict[str, str]:
        return entry_env(self.workdir, self._tmp)

    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        if self._closed:
            raise HostError("host already closed")
        return run_process(argv, stdin, cwd=self.workdir, env=self._env(), limits=limits)

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        if self._closed:
            raise HostError("host already closed")
        proc = PlainProcess(argv, self.workdir, self._env(), limits)
        self._procs.append(proc)
        return proc

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._end_game()
        shutil.rmtree(self._root, ignore_errors=True)

    def _end_game(self) -> None:
        """Everything of ``close`` but removing the game directory: its processes killed."""
        for p in self._procs:
            p.close()


def sweep_stale_dirs(older_than_s: float = STALE_DIR_S) -> int:
    """Remove game and build directories left by processes that died without closing
    their hosts (a worker killed mid-match). A directory goes only when the pid in its
    name is gone *and* it is old, so a live process in another PID namespace sharing
    this ``/tmp`` keeps its directories. Returns how many were removed."""
    removed = 0
    now = time.time()
    places = [Path(tempfile.gettempdir()), *([ENTRY_DIRS] if ENTRY_DIRS.is_dir() else [])]
    for prefix in (GAME_DIR_PREFIX, BUILD_DIR_PREFIX):
        for d in (d for place in places for d in place.glob(f"{prefix}*-*")):
            pid_text = d.name[len(prefix) :].split("-", 1)[0]
            if not pid_text.isdigit() or int(pid_text) == os.getpid():
                continue
            try:
                os.kill(int(pid_text), 0)
                continue  # its owner lives
            except ProcessLookupError:
                pass
            except PermissionError:
                continue
            try:
                if now - d.stat().st_mtime < older_than_s:
                    continue
            except FileNotFoundError:
                continue
            shutil.rmtree(d, ignore_errors=True)
            removed += 1
    return removed


class PlainHostFactory(HostFactory):
    name = "none"

    def __init__(self) -> None:
        sweep_stale_dirs()

    def open(self, entry_dir: Path, limits: Limits, mark: str) -> EntryHost:
        return PlainHost(entry_dir)

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        if entry_uid() is not None:
            return self._build_as_entry_user(entry_dir, command, limits)
        source = apparent_bytes(entry_dir)
        with tempfile.TemporaryDirectory(prefix=f"{BUILD_DIR_PREFIX}{os.getpid()}-") as tmp:
            outcome = run_process(
                ["sh", "-c", command],
                b"",
                cwd=entry_dir,
                env=entry_env(Path(tmp), Path(tmp)),
                limits=limits,
                stderr_keep=BUILD_LOG_TAIL,
            )
        if outcome.failure is not None or outcome.exit_code != 0:
            return outcome
        # built in place, so nothing is copied here; but every game copies the entry
        # (``_game_dir``), expanding sparse files: the bwrap host's cap (docs/config.md#builds)
        try:
            check_output_size(entry_dir, max_bytes=source + BUILD_OUTPUT_BYTES)
        except BuildOutputError as e:
            shutil.rmtree(entry_dir, ignore_errors=True)  # a failed build's output is never used
            entry_dir.mkdir()
            return build_output_failure(outcome, str(e))
        return outcome

    def _build_as_entry_user(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
        """The build as the entry user (``workers.sandbox.plain_user``): in a copy of the entry
        that user owns, its output copied back in place of the source as the bubblewrap
        host's is (never following a link, capped: docs/config.md#builds)."""
        source = apparent_bytes(entry_dir)
        root = _entry_tempdir(BUILD_DIR_PREFIX)
        try:
            work, tmp = root / "work", root / "tmp"
            try:
                shutil.copytree(entry_dir, work, symlinks=True)
                tmp.mkdir()
                give_to_entry_user(root)
            except OSError as e:
                raise HostError(f"cannot make a build copy of {entry_dir}: {e}") from e
            outcome = run_process(
                ["sh", "-c", command],
                b"",
                cwd=work,
                env=entry_env(tmp, tmp),
                limits=limits,
                stderr_keep=BUILD_LOG_TAIL,
            )
            if outcome.failure is not None or outcome.exit_code != 0:
                return outcome
            fresh = entry_dir.with_name(f".{entry_dir.name}.built")
            if fresh.exists():
                shutil.rmtree(fresh)
            try:
                copy_out(work, fresh, max_bytes=source + BUILD_OUTPUT_BYTES)
            except BuildOutputError as e:
                shutil.rmtree(fresh, ignore_errors=True)
                return build_output_failure(outcome, str(e))
            except OSError as e:
                shutil.rmtree(fresh, ignore_errors=True)
                raise HostError(f"cannot copy the build of {entry_dir} out: {e}") from e
            shutil.rmtree(entry_dir)
            os.rename(fresh, entry_dir)
            return outcome
        finally:
            shutil.rmtree(root, ignore_errors=True)
