"""Taking a build's output: what it may hold and what it is charged (docs/config.md#builds).

A build is the entry's own business, and so is its output: a fifo or socket,
an unreadable file, more files or more bytes than the caps make it
``build_failed``, never a ``system_error``. Bytes are counted as the files'
*apparent* size (``st_size``), not the blocks they take: a sparse file made
with ``truncate -s 250M`` takes nothing on the sandbox's tmpfs but becomes
250 MiB on the worker's disk once copied, and again in every game's sandbox.
The whole tree is sized before anything is copied, so an output over the cap
never reaches the worker's disk, not even in part; so is its shape: a path
longer than an entry's paths may be (``MAX_PATH_BYTES``) or deeper than
``BUILD_OUTPUT_DEPTH`` is refused before it is copied (twenty nested
directories of 250-character names fit the build's tmpfs, never a full path
on the worker's disk).

Copying out can still fail on the worker's side. Only a failure this machine
shows to be its own (``machine_fault``: its disk or quota full, a read-only
or failing disk, out of memory or file descriptors, a cache it cannot write)
is the host's ``HostError``; any other is the build's (``build_failed``).
"""

from __future__ import annotations

import dataclasses
import errno
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from runner.domain.entry_tree import MAX_PATH_BYTES
from runner.domain.match_values import VerdictKind
from runner.errors import EntryFault
from workers.sandbox.base import RunOutcome

#: what a build's output may add to its source, by apparent size (docs/config.md#builds)
BUILD_OUTPUT_BYTES = 256 << 20

#: how deep a build's output may nest (its paths are capped at ``MAX_PATH_BYTES`` too)
BUILD_OUTPUT_DEPTH = 64

#: the errors that are a machine's own, whatever it was doing (docs/config.md#builds)
MACHINE_ERRNOS = frozenset(
    {errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EIO, errno.ENOMEM, errno.EMFILE, errno.ENFILE}
)

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_COPY_CHUNK = 1 << 20


class BuildOutputError(EntryFault):
    """A build's output cannot become the entry: the entry's own fault (``build_failed``)."""


@dataclass
class _Budget:
    files: int
    bytes: int
    cap: int  # the byte cap, for the message

    def charge_file(self, size: int) -> None:
        self.bytes -= size
        if self.bytes < 0:
            raise BuildOutputError(
                f"build output over {self.cap} bytes (files count their apparent size, holes included)"
            )

    def charge_entry(self) -> None:
        self.files -= 1
        if self.files < 0:
            raise BuildOutputError("the build's output has too many files")


def _budget(max_files: int | None, max_bytes: int | None) -> _Budget:
    cap = max_bytes if max_bytes is not None else 1 << 62
    return _Budget(files=max_files if max_files is not None else 1 << 62, bytes=cap, cap=cap)


def machine_fault(e: OSError, cache: Path) -> bool:
    """Whether ``e`` is this machine's own fault, not the entry's: one of ``MACHINE_ERRNOS``, or
    a refused permission where this machine cannot write its own ``cache`` any more (tried)."""
    if e.errno in MACHINE_ERRNOS:
        return True
    if e.errno in (errno.EACCES, errno.EPERM):
        return not _writable(cache)
    return False


def _writable(directory: Path) -> bool:
    try:
        with tempfile.TemporaryFile(dir=directory, prefix=".probe-"):
            return True
    except OSError:
        return False


def _check_shape(rel: str, name: str) -> None:
    """Refuse an output path the worker could not hold (``MAX_PATH_BYTES``, ``BUILD_OUTPUT_DEPTH``)."""
    path = f"{rel}{name}"
    size = len(path.encode(errors="surrogateescape"))
    if size > MAX_PATH_BYTES:
        top = path.split("/", 1)[0]
        raise BuildOutputError(
            f"the build's output holds a path of {size} bytes (under {top[:60]!r}); paths are at most "
            f"{MAX_PATH_BYTES} bytes"
        )
    if path.count("/") + 1 > BUILD_OUTPUT_DEPTH:
        raise BuildOutputError(f"the build's output nests deeper than {BUILD_OUTPUT_DEPTH} directories")


def _open_top(src: Path) -> int:
    try:
        return os.open(src, _DIR_FLAGS)
    except OSError as e:
        raise BuildOutputError(f"the build left no readable working directory: {e.strerror}") from e


def apparent_bytes(src: Path) -> int:
    """The apparent size of the regular files under ``src`` (links not followed)."""
    budget = _budget(None, None)
    top = _open_top(src)
    try:
        _size_dir(top, budget, "")
    finally:
        os.close(top)
    return budget.cap - budget.bytes


def check_output_size(src: Path, *, max_files: int | None = None, max_bytes: int | None = None) -> None:
    """Refuse (``BuildOutputError``) a build tree at ``src`` with more than ``max_files``
    entries or ``max_bytes`` bytes of apparent size; links are counted, never followed."""
    budget = _budget(max_files, max_bytes)
    top = _open_top(src)
    try:
        _size_dir(top, budget, "")
    finally:
        os.close(top)


def _size_dir(dir_fd: int, budget: _Budget, rel: str) -> None:
    try:
        names = sorted(os.listdir(dir_fd))
    except OSError as e:
        raise BuildOutputError(f"cannot list {rel or '.'}: {e.strerror}") from e
    for name in names:
        budget.charge_entry()
        _check_shape(rel, name)
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError as e:
            raise BuildOutputError(f"cannot read {rel}{name}: {e.strerror}") from e
        if stat.S_ISREG(st.st_mode):
            budget.charge_file(st.st_size)
        elif stat.S_ISDIR(st.st_mode):
            try:
                sub = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError as e:
                raise BuildOutputError(f"cannot read directory {rel}{name}: {e.strerror}") from e
            try:
                _size_dir(sub, budget, f"{rel}{name}/")
            finally:
                os.close(sub)


def copy_out(src: Path, dest: Path, *, max_files: int | None = None, max_bytes: int | None = None) -> None:
    """Copy the tree at ``src`` (inside a sandbox, through /proc) into ``dest``,
    which must not exist yet (a fresh directory: nothing of the build can
    conflict with what was there).

    Symlinks are copied as links and never followed, and every step goes
    through directory fds with ``O_NOFOLLOW``: the tree was written by an
    untrusted build, and a link followed through ``/proc/<pid>/root`` would
    resolve against the host's root. The tree is sized first (apparent
    sizes), and each file is copied no further than the size it was charged,
    so a file that grows during the copy is refused rather than copied on.
    Anything the build's tree makes impossible (an unreadable file, a fifo or
    socket, more than ``max_files`` entries or ``max_bytes`` bytes) raises
    ``BuildOutputError``; a failure to write ``dest`` is an ``OSError`` (whose fault:
    ``machine_fault``).
    """
    check_output_size(src, max_files=max_files, max_bytes=max_bytes)
    budget = _budget(max_files, max_bytes)
    top = _open_top(src)
    try:
        dest.mkdir()
        _copy_dir(top, dest, budget, "")
    finally:
        os.close(top)


def _copy_dir(dir_fd: int, dest: Path, budget: _Budget, rel: str) -> None:
    try:
        entries = sorted(os.scandir(dir_fd), key=lambda e: e.name)
    except OSError as e:
        raise BuildOutputError(f"cannot list {rel or '.'}: {e.strerror}") from e
    for entry in entries:
        name = f"{rel}{entry.name}"
        budget.charge_entry()
        _check_shape(rel, entry.name)
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError as e:
            raise BuildOutputError(f"cannot read {name}: {e.strerror}") from e
        target = dest / entry.name
        if stat.S_ISLNK(st.st_mode):
            os.symlink(os.readlink(entry.name, dir_fd=dir_fd), target)
        elif stat.S_ISDIR(st.st_mode):
            try:
                sub = os.open(entry.name, _DIR_FLAGS, dir_fd=dir_fd)
            except OSError as e:
                raise BuildOutputError(f"cannot read directory {name}: {e.strerror}") from e
            try:
                target.mkdir()
                _copy_dir(sub, target, budget, f"{name}/")
            finally:
                os.close(sub)
        elif stat.S_ISREG(st.st_mode):
            try:
                fd = os.open(entry.name, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            except OSError as e:
                raise BuildOutputError(f"cannot read {name}: {e.strerror}") from e
            with os.fdopen(fd, "rb") as f:
                size = os.fstat(fd).st_size  # what was opened, charged before a byte is written
                budget.charge_file(size)
                with open(target, "xb") as out:
                    _copy_bytes(f, out, size, name)
            os.chmod(target, (st.st_mode & 0o777) | 0o600)
        else:
            raise BuildOutputError(f"{name} is not a regular file, directory or symlink")


def _copy_bytes(f: IO[bytes], out: IO[bytes], size: int, name: str) -> None:
    left = size
    while left > 0:
        try:
            chunk = f.read(min(_COPY_CHUNK, left))
        except OSError as e:
            raise BuildOutputError(f"cannot read {name}: {e.strerror}") from e
        if not chunk:
            return  # it shrank while copied: what there is is the build's output
        out.write(chunk)
        left -= len(chunk)
    if f.read(1):
        raise BuildOutputError(f"{name} grew while its build output was copied")


def build_output_failure(outcome: RunOutcome, why: str) -> RunOutcome:
    """``outcome`` of a build whose output could not be taken: ``build_failed``."""
    return dataclasses.replace(outcome, failure=VerdictKind.BUILD_FAILED, detail=f"unusable output: {why}")
