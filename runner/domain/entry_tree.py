"""Reading what a contestant hands in without following links (docs/config.md#what-an-entry-may-hold).

An entry directory, and any file a config names (a board file), is read with
the organiser's rights, so it must never lead the reader elsewhere: a symbolic
link in an entry to another entry's source, to a run's ``run.key`` or to
``/etc/shadow`` would otherwise be packed as that file's content and shipped
to every worker. The rule is to refuse, not to pack links as links: an entry
holds regular files and directories only. Refused, each with the path that
breaks the rule:

* a symbolic link anywhere (wherever it points, inside or out), and an entry
  root that is itself a link;
* a hard link (a regular file with ``st_nlink > 1``): the packer cannot tell
  where else that inode lives, so it may be another entry's file or a key;
* a fifo, socket or device.

Every file is opened with ``O_NOFOLLOW`` relative to its directory's fd, and
every directory with ``O_NOFOLLOW | O_DIRECTORY``; what was opened is checked
with ``fstat`` on the fd, so a race that swaps a checked name for a link or a
fifo between the listing and the open is refused too.

Pure standard library: a worker imports it to check the artifacts it unpacks.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from runner.errors import UsageError

# Files that never belong to an entry's code (editor droppings, build output): skipped unread.
IGNORED_NAMES = frozenset({".git", "__pycache__", ".DS_Store"})

_RULE = "entries hold regular files and directories only"
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK  # NONBLOCK: a fifo never hangs us
_DIR_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_DIRECTORY


class RefusedPath(UsageError, ValueError):
    """A path in an entry (or a named file) that breaks the rule; ``rel`` is relative to ``root``."""

    def __init__(self, root: Path, rel: PurePosixPath, what: str) -> None:
        self.root = root
        self.rel = rel
        self.what = what
        super().__init__(f"{self.path}: {what}")

    @property
    def path(self) -> Path:
        return self.root if self.rel == PurePosixPath(".") else self.root / self.rel


@dataclass(frozen=True)
class TreeItem:
    """One directory or regular file of an entry, its path relative to the entry root."""

    rel: PurePosixPath
    is_dir: bool
    executable: bool = False
    data: bytes = b""
    empty_dir: bool = False  # a directory with nothing packed under it


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a fifo"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "not a regular file or directory"


def _refusal(mode: int, link_target: str | None) -> str:
    if link_target is not None:
        return f"a symbolic link (to {link_target}); {_RULE}"
    return f"{_kind(mode)}; {_RULE}"


def _link_target(name: str, dir_fd: int | None) -> str | None:
    try:
        return os.readlink(name, dir_fd=dir_fd)
    except OSError:
        return None


def _check_regular(root: Path, rel: PurePosixPath, st: os.stat_result) -> None:
    if not stat.S_ISREG(st.st_mode):
        raise RefusedPath(root, rel, _refusal(st.st_mode, None))
    if st.st_nlink > 1:
        raise RefusedPath(
            root,
            rel,
            f"a hard link ({st.st_nlink} names for one file); hard links are refused because the packer "
            f"cannot tell where else the file lives; {_RULE}",
        )


def _read_fd(fd: int) -> bytes:
    with os.fdopen(os.dup(fd), "rb") as f:
        return f.read()


def _open_at(root: Path, rel: PurePosixPath, name: str, dir_fd: int | None, flags: int) -> int:
    """``name`` opened without following a link; a refusal (not an OSError) when it is one."""
    try:
        return os.open(name, flags, dir_fd=dir_fd)
    except OSError as e:
        target = _link_target(name, dir_fd)
        if target is not None:  # O_NOFOLLOW met a link (ELOOP, or ENOTDIR with O_DIRECTORY)
            raise RefusedPath(root, rel, _refusal(0, target)) from None
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except OSError:
            raise e from None
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
            raise RefusedPath(root, rel, _refusal(st.st_mode, None)) from None
        raise


def read_named_file(path: Path, *, shown_as: Path | None = None) -> bytes:
    """The bytes of a file a config names (a board file), under the entry rule: the
    last component opened with ``O_NOFOLLOW``, a regular file with one name.
    ``RefusedPath`` (naming ``shown_as`` or ``path``) otherwise; OSError if unreadable."""
    return read_regular_file(path, shown_as=shown_as)[0]


def read_regular_file(path: Path, *, shown_as: Path | None = None) -> tuple[bytes, os.stat_result]:
    """``read_named_file``, with the ``fstat`` of what was read (its mode, owner ...)."""
    shown = shown_as if shown_as is not None else path
    fd = _open_at(shown, PurePosixPath("."), str(path), None, _FILE_FLAGS)
    try:
        st = os.fstat(fd)
        _check_regular(shown, PurePosixPath("."), st)
        return _read_fd(fd), st
    finally:
        os.close(fd)


def check_root(root: Path) -> None:
    """Refuse an entry root that is itself a symbolic link (before anyone resolves it)."""
    try:
        st = os.lstat(root)
    except OSError:
        return  # a missing root is reported by whoever looks for entry.yaml
    if stat.S_ISLNK(st.st_mode):
        raise RefusedPath(root, PurePosixPath("."), _refusal(st.st_mode, os.readlink(root)))


def walk_entry(root: Path) -> list[TreeItem]:
    """Every directory and regular file of the entry at ``root`` (ignored names skipped), sorted by
    path: the digest's and the packer's order. ``RefusedPath`` at the first path that breaks the rule."""
    check_root(root)
    fd = _open_at(root, PurePosixPath("."), str(root), None, _DIR_FLAGS)
    try:
        items = list(_walk(root, PurePosixPath("."), fd))
    finally:
        os.close(fd)
    return sorted(items, key=lambda it: it.rel.as_posix())


def _walk(root: Path, rel_dir: PurePosixPath, dir_fd: int) -> Iterator[TreeItem]:
    for name in sorted(os.listdir(dir_fd)):
        if name in IGNORED_NAMES or name.endswith(".pyc"):
            continue
        rel = rel_dir / name
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise RefusedPath(root, rel, _refusal(st.st_mode, _link_target(name, dir_fd)))
        if stat.S_ISDIR(st.st_mode):
            sub = _open_at(root, rel, name, dir_fd, _DIR_FLAGS)
            try:
                if not stat.S_ISDIR(os.fstat(sub).st_mode):
                    raise RefusedPath(root, rel, _refusal(os.fstat(sub).st_mode, None))
                below = list(_walk(root, rel, sub))
            finally:
                os.close(sub)
            yield TreeItem(rel, is_dir=True, empty_dir=not any(not it.is_dir for it in below))
            yield from below
        elif stat.S_ISREG(st.st_mode):
            f = _open_at(root, rel, name, dir_fd, _FILE_FLAGS)
            try:
                fst = os.fstat(f)  # what was opened, not what the listing saw
                _check_regular(root, rel, fst)
                data = _read_fd(f)
            finally:
                os.close(f)
            yield TreeItem(rel, is_dir=False, executable=bool(fst.st_mode & 0o111), data=data)
        else:
            raise RefusedPath(root, rel, _refusal(st.st_mode, None))
