"""``sandbox: none``: entries as plain subprocesses. For trusted entries only
(docs/architecture.md, row 14).

Each game gets a private temporary copy of the entry directory (its cwd, so ICFP'98
``support/`` state stays inside one game) and a private ``TMPDIR``; its programs are
started, limited and killed by ``plain_run`` (one move) and ``plain_process`` (a
persistent process).

What this host does *not* do, and why it is for trusted entries only:

* no namespaces: an entry sees the real file system and network;
* a descendant that calls ``setsid()`` (or ``setpgid()`` into another group of
  the worker's session) leaves the process group and escapes both the leftover
  check and the final kill;
* ``/tmp/arena.<MARK>`` (POTM, seed 002) is a literal path, so it is the
  machine's real ``/tmp`` file. The host deletes it when a game opens and when
  it closes, which keeps state from leaking from one game to the next, and
  never lets two games with the same mark run at once on one machine: a game
  holds an exclusive lock on ``/tmp/arena.<MARK>.tourney-lock`` (``flock``:
  across threads and worker processes, released by the kernel if the worker
  dies), so a second such game waits for the first to end instead of wiping
  its state (the opponent of the same game can still read the file: trusted
  entries only);
* no process-count limit: ``RLIMIT_NPROC`` counts every process of the user,
  not of the entry, so it would break unrelated work (and root ignores it);
* if the referee itself is killed (SIGKILL), the move in flight runs on until
  it exits by itself (a persistent brain sees EOF on stdin), and the game's
  temporary directory stays behind until ``sweep_stale_dirs`` removes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from runner.domain.contracts import Limits
from workers.sandbox.base import EntryHost, HostError, HostFactory, InteractiveProcess, RunOutcome
from workers.sandbox.build_output import (
    BUILD_OUTPUT_BYTES,
    BuildOutputError,
    apparent_bytes,
    build_output_failure,
    check_output_size,
)
from workers.sandbox.limits import BUILD_LOG_TAIL
from workers.sandbox.plain_process import PlainProcess
from workers.sandbox.plain_run import entry_env, run_process

log = logging.getLogger(__name__)

#: temporary directories: per game (working copy + TMPDIR) and per build, named with our pid
GAME_DIR_PREFIX = "tourney-game-"
BUILD_DIR_PREFIX = "tourney-build-"
#: a directory of a dead process this old is debris (see ``sweep_stale_dirs``)
STALE_DIR_S = 600.0


def arena_file(mark: str) -> Path | None:
    """POTM's ``/tmp/arena.<MARK>``, for a mark that is a harmless file-name character."""
    if len(mark) == 1 and (mark.isalnum() or mark in "_-+="):
        return Path(f"/tmp/arena.{mark}")
    return None


def _speaks_potm_arena(entry_dir: Path) -> bool:
    """Whether the entry keeps ``/tmp/arena.<MARK>`` (its entry.yaml names potm-arena)."""
    try:
        text = (entry_dir / "entry.yaml").read_text(errors="replace")
    except OSError:
        return True  # cannot tell: be safe
    return re.search(r"^protocol:\s*['\"]?potm-arena", text, re.MULTILINE) is not None


def _lock_arena(arena: Path) -> int:
    """Hold ``arena``'s game lock (an fd; closing it releases the lock), waiting for
    a game that has it: two games with one mark must not share ``/tmp/arena.<MARK>``."""
    path = arena.with_name(arena.name + ".tourney-lock")
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError as e:
        raise HostError(f"cannot lock {path} for the game's arena file: {e}") from e
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log.warning(
                "sandbox none: waiting for another game to end before using %s "
                "(without a sandbox every game shares the machine's /tmp)",
                arena,
            )
            fcntl.flock(fd, fcntl.LOCK_EX)
    except OSError as e:
        os.close(fd)
        raise HostError(f"cannot lock {path} for the game's arena file: {e}") from e
    return fd


def new_game_dir(entry_dir: Path) -> Path:
    """A fresh game directory: ``work/`` a copy of ``entry_dir``, ``tmp/`` empty."""
    root = Path(tempfile.mkdtemp(prefix=f"{GAME_DIR_PREFIX}{os.getpid()}-"))
    try:
        shutil.copytree(entry_dir, root / "work", symlinks=True)
        (root / "tmp").mkdir()
    except OSError as e:
        shutil.rmtree(root, ignore_errors=True)
        raise HostError(f"cannot make a working copy of {entry_dir}: {e}") from e
    return root


class PlainHost(EntryHost):
    """One entry for one game: a private copy of its directory and a private TMPDIR.

    ``root``: a game directory as ``new_game_dir`` makes it, handed over by the caller
    (``workers.sandbox.plain_reuse`` keeps untouched ones for the entry's next game)."""

    def __init__(self, entry_dir: Path, mark: str, root: Path | None = None):
        self._closed = False
        self._procs: list[PlainProcess] = []
        self._root = root if root is not None else new_game_dir(entry_dir)
        self.workdir = self._root / "work"
        self._tmp = self._root / "tmp"
        self._arena = arena_file(mark)
        self._arena_lock: int | None = None
        if self._arena is not None and _speaks_potm_arena(entry_dir):
            try:
                self._arena_lock = _lock_arena(self._arena)
            except HostError:
                shutil.rmtree(self._root, ignore_errors=True)
                raise
        self._remove_arena()

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

    def _remove_arena(self) -> None:
        # only under the arena's lock: an entry of another protocol with the same mark
        # must not delete the file of a potm-arena game playing beside it
        if self._arena is not None and self._arena_lock is not None:
            with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
                self._arena.unlink()

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._end_game()
        shutil.rmtree(self._root, ignore_errors=True)

    def _end_game(self) -> None:
        """Everything of ``close`` but removing the game directory: its processes killed,
        the arena file removed and its lock released."""
        for p in self._procs:
            p.close()
        self._remove_arena()
        if self._arena_lock is not None:
            os.close(self._arena_lock)  # the next game with this mark may start
            self._arena_lock = None


def sweep_stale_dirs(older_than_s: float = STALE_DIR_S) -> int:
    """Remove game and build directories left by processes that died without closing
    their hosts (a worker killed mid-match). A directory goes only when the pid in its
    name is gone *and* it is old, so a live process in another PID namespace sharing
    this ``/tmp`` keeps its directories. Returns how many were removed."""
    removed = 0
    now = time.time()
    for prefix in (GAME_DIR_PREFIX, BUILD_DIR_PREFIX):
        for d in Path(tempfile.gettempdir()).glob(f"{prefix}*-*"):
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
        return PlainHost(entry_dir, mark)

    def run_build(self, entry_dir: Path, command: str, limits: Limits) -> RunOutcome:
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
