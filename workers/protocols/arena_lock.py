"""POTM's ``/tmp/arena.<MARK>`` on a host that shares the machine's ``/tmp`` (the
potm-arena protocol's own state; docs/config.md "Top level", ``sandbox``).

Seed 002 keeps an entry's state across its moves in ``/tmp/arena.<MARK>``, a
literal path. In a bubblewrap sandbox that is the game's private ``/tmp``; on a
host that ``shares_machine_tmp`` (``sandbox: none``) it is the machine's real
file. There the protocol deletes it when a game begins and when it ends, which
keeps state from leaking from one game to the next, and never lets two games
with the same mark run at once on one machine: a game holds an exclusive lock
on ``/tmp/arena.<MARK>.tourney-lock`` (``flock``: across threads and worker
processes, released by the kernel if the worker dies), so a second such game
waits for the first to end instead of wiping its state (the opponent of the
same game can still read the file: trusted entries only). Entries of other
protocols neither wait for the lock nor touch the file.
"""

from __future__ import annotations

import contextlib
import fcntl
import logging
import os
from pathlib import Path

from workers.sandbox.base import HostError

log = logging.getLogger(__name__)


def arena_file(mark: str) -> Path | None:
    """POTM's ``/tmp/arena.<MARK>``, for a mark that is a harmless file-name character."""
    if len(mark) == 1 and (mark.isalnum() or mark in "_-+="):
        return Path(f"/tmp/arena.{mark}")
    return None


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


class ArenaHold:
    """One game's hold on the machine's ``/tmp/arena.<MARK>``: locked and emptied by
    ``take``, emptied and unlocked by ``release`` (module doc)."""

    def __init__(self, arena: Path, lock_fd: int) -> None:
        self.arena = arena
        self._lock_fd: int | None = lock_fd
        self._remove()  # a new game starts without the last game's state

    @classmethod
    def take(cls, mark: str) -> ArenaHold | None:
        """Wait for and hold the arena of ``mark`` (None: a mark that names no arena file)."""
        arena = arena_file(mark)
        if arena is None:
            return None
        return cls(arena, _lock_arena(arena))

    def _remove(self) -> None:
        # only under the arena's lock: another game's file is never ours to delete
        if self._lock_fd is not None:
            with contextlib.suppress(FileNotFoundError, IsADirectoryError, PermissionError):
                self.arena.unlink()

    def release(self) -> None:
        """Remove the game's arena file and let the next game with this mark start (idempotent)."""
        self._remove()
        if self._lock_fd is not None:
            os.close(self._lock_fd)
            self._lock_fd = None
