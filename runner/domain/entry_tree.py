"""Reading what a contestant hands in without following links, within its caps
(docs/config.md#what-an-entry-may-hold).

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
* a fifo, socket or device;
* anything past the entry's caps (``EntryCaps``: its files' total apparent
  size, its count of files and directories, its depth, a path's length),
  found by the listing, before a byte of any file is read: a 16 KB entry
  holding a 512 MiB sparse file is refused by its ``st_size``.

Every file is opened with ``O_NOFOLLOW`` relative to its directory's fd, and
every directory with ``O_NOFOLLOW | O_DIRECTORY``; what was opened is checked
with ``fstat`` on the fd, so a race that swaps a checked name for a link or a
fifo between the listing and the open is refused too, and so is a file whose
size changed since the listing (the caps were checked on the listing's sizes).

Files are streamed (``read_entry``): each is read once, in chunks, and never
held whole in memory; the digest and the packed artifact are made from the
same chunks (``runner.domain.packing``), so the digest is the digest of the
bytes packed. The caps are this module's (``EntryCaps``, ``check_caps``) so
that any intake of entries (a config's entry directories, an uploaded
submission once unpacked) applies the same ones.

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
#: how much of a file is read at once: memory stays this small whatever the file's size
READ_CHUNK = 1 << 20

#: the caps' defaults (docs/config.md#what-an-entry-may-hold): a real contest's entries (a C
#: program, a Python one with its tables, a Java jar) fit many times over
DEFAULT_ENTRY_MB = 256
DEFAULT_ENTRY_FILES = 10_000
DEFAULT_ENTRY_DEPTH = 32
#: a path inside an entry, in bytes: a worker puts the entry under its cache directory and
#: every game's sandbox, and a full path must stay under the kernel's PATH_MAX (4096)
MAX_PATH_BYTES = 1024


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


class EntryOverCap(RefusedPath):
    """An entry past one of its caps (``EntryCaps``); ``rel`` is where the listing passed it."""


@dataclass(frozen=True)
class EntryCaps:
    """What one entry may hold at most, by its listing (never by reading its files).

    ``max_bytes``: its regular files' total *apparent* size (``st_size``: a sparse file
    counts its holes, since packing, unpacking and every game's copy write them out);
    ``max_files``: its files and directories together; ``max_depth``: the components of
    its deepest path (``a/b/c`` is 3); ``max_path_bytes``: the longest path inside it.
    ``names`` says which setting each cap is, for the refusal (a config's ``limits.entry_mb``)."""

    max_bytes: int = DEFAULT_ENTRY_MB << 20
    max_files: int = DEFAULT_ENTRY_FILES
    max_depth: int = DEFAULT_ENTRY_DEPTH
    max_path_bytes: int = MAX_PATH_BYTES
    names: tuple[str, str, str] = ("limits.entry_mb", "limits.entry_files", "limits.entry_depth")

    @classmethod
    def of(cls, entry_mb: int, entry_files: int, entry_depth: int) -> EntryCaps:
        return cls(max_bytes=entry_mb << 20, max_files=entry_files, max_depth=entry_depth)


#: what a worker checks an artifact it unpacked with: the coordinator's caps were applied when
#: it was packed (whatever the config set them to), so the worker's digest check adds none
UNCAPPED = EntryCaps(max_bytes=1 << 62, max_files=1 << 62, max_depth=1 << 30, max_path_bytes=1 << 30)


@dataclass
class _Tally:
    """What the listing found so far, refused (``EntryOverCap``) as soon as it passes a cap."""

    caps: EntryCaps
    root: Path
    bytes: int = 0
    items: int = 0

    def item(self, rel: PurePosixPath) -> None:
        c = self.caps
        self.items += 1
        if self.items > c.max_files:
            raise EntryOverCap(
                self.root, rel, f"more than {c.max_files} files and directories ({c.names[1]}: {c.max_files})"
            )
        if len(rel.parts) > c.max_depth:
            deep = f"{len(rel.parts)} levels deep, over {c.max_depth} ({c.names[2]}: {c.max_depth})"
            raise EntryOverCap(self.root, rel, deep)
        size = len(rel.as_posix().encode(errors="surrogateescape"))
        if size > c.max_path_bytes:
            raise EntryOverCap(
                self.root,
                PurePosixPath(rel.parts[0]),  # the whole path would not fit a line
                f"holds a path of {size} bytes under this directory; an entry's paths are at most "
                f"{c.max_path_bytes} bytes",
            )

    def file(self, rel: PurePosixPath, size: int) -> None:
        self.bytes += size
        if self.bytes > self.caps.max_bytes:
            mb = self.caps.max_bytes / (1 << 20)
            raise EntryOverCap(
                self.root,
                rel,
                f"the entry's files pass {mb:g} MiB here: this file has {size} bytes (apparent sizes "
                f"count, holes included; {self.caps.names[0]}: {mb:g})",
            )


@dataclass(frozen=True)
class TreeItem:
    """One directory or regular file of an entry, its path relative to the entry root, as the
    listing saw it (``size``: a file's apparent size; its bytes are read by ``read_entry``)."""

    rel: PurePosixPath
    is_dir: bool
    executable: bool = False
    size: int = 0
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


def _open_root(root: Path) -> int:
    check_root(root)
    return _open_at(root, PurePosixPath("."), str(root), None, _DIR_FLAGS)


def walk_entry(root: Path, caps: EntryCaps = UNCAPPED) -> list[TreeItem]:
    """Every directory and regular file of the entry at ``root`` (ignored names skipped), sorted by
    path: the digest's and the packer's order. Lists only (``lstat``, never a file's bytes):
    ``RefusedPath`` at the first path that breaks the rule, ``EntryOverCap`` at the first that
    passes one of ``caps``."""
    fd = _open_root(root)
    try:
        return _listing(root, fd, caps)
    finally:
        os.close(fd)


def check_caps(root: Path, caps: EntryCaps) -> None:
    """Refuse (``EntryOverCap``, ``RefusedPath``) an entry tree past ``caps`` or breaking the
    rule, from its listing alone: what any intake of entries calls first."""
    walk_entry(root, caps)


def _listing(root: Path, fd: int, caps: EntryCaps) -> list[TreeItem]:
    items = list(_walk(root, PurePosixPath("."), fd, _Tally(caps, root)))
    return sorted(items, key=lambda it: it.rel.as_posix())


def _names(root: Path, rel_dir: PurePosixPath, dir_fd: int, tally: _Tally) -> list[str]:
    """The names in a directory, counted as they are read: a directory of a million names is
    refused at the cap, never listed whole."""
    names = []
    with os.scandir(dir_fd) as it:
        for e in it:
            if e.name in IGNORED_NAMES or e.name.endswith(".pyc"):
                continue
            tally.item(rel_dir / e.name)
            names.append(e.name)
    return sorted(names)


def _walk(root: Path, rel_dir: PurePosixPath, dir_fd: int, tally: _Tally) -> Iterator[TreeItem]:
    for name in _names(root, rel_dir, dir_fd, tally):
        rel = rel_dir / name
        st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        if stat.S_ISLNK(st.st_mode):
            raise RefusedPath(root, rel, _refusal(st.st_mode, _link_target(name, dir_fd)))
        if stat.S_ISDIR(st.st_mode):
            sub = _open_at(root, rel, name, dir_fd, _DIR_FLAGS)
            try:
                if not stat.S_ISDIR(os.fstat(sub).st_mode):
                    raise RefusedPath(root, rel, _refusal(os.fstat(sub).st_mode, None))
                below = list(_walk(root, rel, sub, tally))
            finally:
                os.close(sub)
            yield TreeItem(rel, is_dir=True, empty_dir=not any(not it.is_dir for it in below))
            yield from below
        elif stat.S_ISREG(st.st_mode):
            _check_regular(root, rel, st)
            tally.file(rel, st.st_size)
            yield TreeItem(rel, is_dir=False, executable=bool(st.st_mode & 0o111), size=st.st_size)
        else:
            raise RefusedPath(root, rel, _refusal(st.st_mode, None))


class _DirChain:
    """The open directories from the entry root down to the one being read: consecutive files
    in path order mostly share their directory, so each directory is opened about once."""

    def __init__(self, root: Path, root_fd: int) -> None:
        self.root = root
        self.chain: list[tuple[tuple[str, ...], int]] = [((), root_fd)]

    def fd_of(self, parts: tuple[str, ...]) -> int:
        while parts[: len(self.chain[-1][0])] != self.chain[-1][0]:
            os.close(self.chain.pop()[1])
        here, fd = self.chain[-1]
        for part in parts[len(here) :]:
            here = (*here, part)
            rel = PurePosixPath(*here)
            sub = _open_at(self.root, rel, part, fd, _DIR_FLAGS)
            self.chain.append((here, sub))
            if not stat.S_ISDIR(os.fstat(sub).st_mode):
                raise RefusedPath(self.root, rel, _refusal(os.fstat(sub).st_mode, None))
            fd = sub
        return fd

    def close(self) -> None:
        while len(self.chain) > 1:
            os.close(self.chain.pop()[1])


def _chunks(root: Path, item: TreeItem, fd: int) -> Iterator[bytes]:
    """Exactly ``item.size`` bytes of the open file ``fd``, in chunks; a file that ends sooner
    changed while it was read, and is refused."""
    left = item.size
    while left > 0:
        chunk = os.read(fd, min(READ_CHUNK, left))
        if not chunk:
            raise RefusedPath(
                root, item.rel, f"changed while it was read (listed with {item.size} bytes, ended sooner)"
            )
        left -= len(chunk)
        yield chunk


def read_entry(root: Path, caps: EntryCaps = UNCAPPED) -> Iterator[tuple[TreeItem, Iterator[bytes]]]:
    """Every item of the entry at ``root`` in path order (``walk_entry``, caps checked first),
    each file with its bytes as chunks, read once: consume them before the next item.

    A file is opened as the listing saw it or refused (``RefusedPath``): a link or fifo
    swapped in since, another size (the caps were checked on the listed sizes), a hard link."""
    fd = _open_root(root)
    chain = _DirChain(root, fd)
    try:
        for item in _listing(root, fd, caps):
            if item.is_dir:
                yield item, iter(())
                continue
            parent = chain.fd_of(item.rel.parts[:-1])
            f = _open_at(root, item.rel, item.rel.name, parent, _FILE_FLAGS)
            try:
                st = os.fstat(f)  # what was opened, not what the listing saw
                _check_regular(root, item.rel, st)
                if st.st_size != item.size:
                    raise RefusedPath(
                        root,
                        item.rel,
                        f"changed while the entry was read ({item.size} bytes when listed, {st.st_size} "
                        "when opened)",
                    )
                opened = TreeItem(item.rel, is_dir=False, executable=bool(st.st_mode & 0o111), size=item.size)
                yield opened, _chunks(root, opened, f)
            finally:
                os.close(f)
    finally:
        chain.close()
        os.close(fd)
