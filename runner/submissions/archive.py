"""Unpacking a contestant's archive as if it were hostile (docs/submissions.md, "What an upload may hold").

``.tar.gz``/``.tgz``, ``.tar`` and ``.zip``, told apart by their first bytes (not by the name
a client sent). Two passes:

1. **check every member before anything is written**: its name (not absolute, no ``..``, no
   empty or ``.`` parts beyond a leading ``./``, no backslash or control character, the top level
   by the entry-name rule, at most ``max_depth`` deep, no name twice), its kind (regular files and
   directories only: symbolic and hard links, devices, fifos, sparse or unknown members are
   refused), the member count, and the sizes the headers declare against the unpacked cap;
   decompression itself is counted (a gzip bomb of nothing but padding is stopped at the cap
   while it is read, not after);
2. **write**, each file created new (``O_EXCL|O_NOFOLLOW``) under a fresh directory, its bytes
   counted as they are copied in chunks: a member whose data runs past what its header said,
   or past the cap, or an archive that ends early (truncated), is refused and the directory is
   removed whole.

Nothing is held whole in memory: members stream from the file on disk to files on disk.
Each refusal is one ``ArchiveRefused`` line naming the member.
"""

from __future__ import annotations

import gzip
import os
import re
import shutil
import stat
import tarfile
import zipfile
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import IO

from runner.domain.names import ENTRY_NAME_RULE, entry_name_problem
from runner.errors import UsageError

CHUNK = 64 * 1024
#: what an unpacked tree may weigh, as a multiple of the compressed cap (source code packs 3-10x)
UNPACKED_RATIO = 8
NOT_AN_ARCHIVE = "not a .tar.gz, .tgz, .tar or .zip archive (by its first bytes)"
_CONTROL = re.compile(r"[\x00-\x1f\x7f\\]")


class ArchiveRefused(UsageError, ValueError):
    """An upload that is not unpacked, and why: one line for the page and the API's JSON."""


@dataclass(frozen=True)
class Caps:
    """The limits an archive is unpacked under (``submissions.max_bytes`` and friends)."""

    max_unpacked: int
    max_files: int = 2000
    max_depth: int = 16

    @classmethod
    def for_upload(cls, max_bytes: int, max_files: int, max_depth: int) -> Caps:
        return cls(max_bytes * UNPACKED_RATIO, max_files, max_depth)


@dataclass(frozen=True)
class Member:
    """One member as the check pass saw it."""

    path: PurePosixPath
    is_dir: bool
    size: int
    executable: bool


def archive_kind(path: Path) -> str | None:
    """``tar.gz``, ``tar`` or ``zip`` by the file's first bytes; None for anything else."""
    with open(path, "rb") as f:
        return archive_kind_of_head(f.read(512))


def archive_kind_of_head(head: bytes) -> str | None:
    """``archive_kind`` of a file whose first 512 bytes (or all, if fewer) are ``head``."""
    if head[:2] == b"\x1f\x8b":
        return "tar.gz"
    if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        return "zip"
    if len(head) >= 262 and head[257:262] == b"ustar":
        return "tar"
    return None


def member_path(name: str, caps: Caps) -> PurePosixPath | None:
    """The member's path relative to the tree (None: the archive's own ``./``); ``ArchiveRefused``
    if the name breaks a rule."""
    shown = name.encode("unicode_escape").decode()[:200]
    if not name or _CONTROL.search(name):
        raise ArchiveRefused(f"member {shown!r}: a name with a control character or backslash")
    if name.startswith("/"):
        raise ArchiveRefused(f"member {shown!r}: an absolute path")
    parts = name.rstrip("/").split("/")
    while parts and parts[0] == ".":
        parts = parts[1:]  # tar's ./runme
    if not parts:
        return None
    for part in parts:
        if part == "..":
            raise ArchiveRefused(f"member {shown!r}: a path with '..'")
        if part in ("", "."):
            raise ArchiveRefused(f"member {shown!r}: an empty or '.' part inside the path")
        if len(part.encode()) > 255:
            raise ArchiveRefused(f"member {shown[:60]!r}...: a name longer than 255 bytes")
    if len(parts) > caps.max_depth:
        raise ArchiveRefused(f"member {shown!r}: nested {len(parts)} deep (at most {caps.max_depth})")
    if entry_name_problem(parts[0]) is not None:
        raise ArchiveRefused(f"member {shown!r}: a top-level name must be {ENTRY_NAME_RULE}")
    return PurePosixPath(*parts)


class _Checked:
    """The running totals of the check pass."""

    def __init__(self, caps: Caps) -> None:
        self.caps = caps
        self.members: list[Member] = []
        self.seen: set[PurePosixPath] = set()
        self.total = 0

    def add(self, name: str, *, is_dir: bool, size: int, executable: bool) -> None:
        path = member_path(name, self.caps)
        if path is None:
            return
        if len(self.members) + 1 > self.caps.max_files:
            raise ArchiveRefused(f"more than {self.caps.max_files} members")
        if path in self.seen:
            raise ArchiveRefused(f"member {str(path)!r} appears twice")
        for parent in path.parents:
            if parent != PurePosixPath(".") and any(m.path == parent and not m.is_dir for m in self.members):
                raise ArchiveRefused(f"member {str(path)!r}: under {str(parent)!r}, which is a file")
        self.seen.add(path)
        if size < 0:
            raise ArchiveRefused(f"member {str(path)!r}: a negative size")
        self.total += size
        if size > self.caps.max_unpacked or self.total > self.caps.max_unpacked:
            raise ArchiveRefused(
                f"member {str(path)!r}: unpacked, the archive would exceed {self.caps.max_unpacked} bytes "
                f"(it declares {size} for this member)"
            )
        self.members.append(Member(path, is_dir, size, executable))


class _CappedReader:
    """A file whose reads stop the unpacking once ``cap`` bytes came out of it (a gzip stream:
    the bytes decompressed, whatever the members declare)."""

    def __init__(self, raw: gzip.GzipFile, cap: int) -> None:
        self.raw = raw
        self.cap = cap
        self.count = 0

    def read(self, n: int = -1) -> bytes:
        data = self.raw.read(n)
        self.count += len(data)
        if self.count > self.cap:
            raise ArchiveRefused(f"decompresses to more than {self.cap} bytes (a compression bomb?)")
        return data


def _tar_kind(m: tarfile.TarInfo) -> str | None:
    """Why a tar member is refused by its kind (None: a regular file or directory)."""
    if m.issym():
        return f"a symbolic link (to {m.linkname[:100]!r})"
    if m.islnk():
        return f"a hard link (to {m.linkname[:100]!r})"
    if m.ischr() or m.isblk():
        return "a device"
    if m.isfifo():
        return "a fifo"
    if m.issparse():
        return "a sparse file"
    if not (m.isreg() or m.isdir()):
        return "not a regular file or directory"
    return None


def _open_tar(path: Path, kind: str, caps: Caps) -> tuple[tarfile.TarFile, IO[bytes]]:
    raw: IO[bytes] = open(path, "rb")  # noqa: SIM115 - closed by the caller with the tar
    stream: IO[bytes] | _CappedReader = raw
    if kind == "tar.gz":
        # tar's own headers and padding count too: a little over the cap is still refused early
        stream = _CappedReader(gzip.GzipFile(fileobj=raw, mode="rb"), caps.max_unpacked + 1024 * 1024)
    # "r|": a stream, read once front to back (no seeking back to a member a header points at)
    return tarfile.open(fileobj=stream, mode="r|"), raw  # type: ignore[call-overload]


def _tar_members(path: Path, kind: str, caps: Caps) -> Iterator[tuple[tarfile.TarInfo, tarfile.TarFile]]:
    tar, raw = _open_tar(path, kind, caps)
    try:
        for m in tar:
            yield m, tar
    finally:
        tar.close()
        raw.close()


_READ_ERRORS = (tarfile.TarError, EOFError, zlib.error, gzip.BadGzipFile, zipfile.BadZipFile, OSError)


def check_archive(path: Path, kind: str, caps: Caps) -> list[Member]:
    """Pass 1: every member checked, nothing written; ``ArchiveRefused`` at the first broken rule."""
    checked = _Checked(caps)
    try:
        if kind == "zip":
            with zipfile.ZipFile(path) as z:
                for info in z.infolist():
                    mode = info.external_attr >> 16
                    if stat.S_ISLNK(mode):
                        raise ArchiveRefused(f"member {info.filename[:200]!r}: a symbolic link")
                    # writers that set no file type (Python's own zipfile among them) mean a file
                    if stat.S_IFMT(mode) and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
                        raise ArchiveRefused(
                            f"member {info.filename[:200]!r}: not a regular file or directory"
                        )
                    if info.flag_bits & 0x1:
                        raise ArchiveRefused(f"member {info.filename[:200]!r}: encrypted")
                    checked.add(
                        info.filename,
                        is_dir=info.is_dir(),
                        size=info.file_size,
                        executable=bool(mode & 0o111),
                    )
        else:
            for m, _ in _tar_members(path, kind, caps):
                why = _tar_kind(m)
                if why is not None:
                    raise ArchiveRefused(f"member {m.name[:200]!r}: {why}")
                checked.add(m.name, is_dir=m.isdir(), size=m.size, executable=bool(m.mode & 0o111))
    except ArchiveRefused:
        raise
    except _READ_ERRORS as e:
        raise ArchiveRefused(f"not a readable {kind} archive (truncated or corrupt): {e}") from None
    if not checked.members:
        raise ArchiveRefused("the archive is empty")
    return checked.members


def _create(dest: Path, m: Member) -> int:
    target = dest.joinpath(*m.path.parts)
    target.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    return os.open(target, flags, 0o755 if m.executable else 0o644)


def _copy(src: IO[bytes], fd: int, m: Member, budget: list[int]) -> None:
    """Copy ``m``'s data in chunks; refuse more than it declared or than the budget left."""
    written = 0
    while True:
        chunk = src.read(CHUNK)
        if not chunk:
            break
        written += len(chunk)
        budget[0] -= len(chunk)
        if written > m.size or budget[0] < 0:
            raise ArchiveRefused(f"member {str(m.path)!r}: more data than its header declares")
        os.write(fd, chunk)
    if written != m.size:
        raise ArchiveRefused(f"member {str(m.path)!r}: {written} of its {m.size} bytes (truncated)")


def _write(path: Path, kind: str, caps: Caps, members: list[Member], dest: Path) -> None:
    """Pass 2: the members checked in pass 1, written under ``dest``."""
    by_path = {m.path: m for m in members}
    budget = [caps.max_unpacked]
    if kind == "zip":
        with zipfile.ZipFile(path) as z:
            for info in z.infolist():
                p = member_path(info.filename, caps)
                m = by_path.get(p) if p is not None else None
                if m is None:
                    continue
                if m.is_dir:
                    dest.joinpath(*m.path.parts).mkdir(parents=True, exist_ok=True)
                    continue
                fd = _create(dest, m)
                try:
                    with z.open(info) as src:
                        _copy(src, fd, m, budget)
                finally:
                    os.close(fd)
        return
    for t, tar in _tar_members(path, kind, caps):
        p = member_path(t.name, caps)
        m = by_path.get(p) if p is not None else None
        if m is None or _tar_kind(t) is not None:
            raise ArchiveRefused(f"member {t.name[:200]!r} changed between the passes")
        if m.is_dir:
            dest.joinpath(*m.path.parts).mkdir(parents=True, exist_ok=True)
            continue
        fd = _create(dest, m)
        try:
            data = tar.extractfile(t)
            if data is None:
                raise ArchiveRefused(f"member {t.name[:200]!r}: no data")
            _copy(data, fd, m, budget)
        finally:
            os.close(fd)


def unpack_archive(path: Path, dest: Path, caps: Caps) -> list[Member]:
    """Unpack the archive at ``path`` into the new directory ``dest`` (it must not exist), or
    refuse it with one line and leave nothing behind."""
    kind = archive_kind(path)
    if kind is None:
        raise ArchiveRefused(NOT_AN_ARCHIVE)
    members = check_archive(path, kind, caps)
    dest.mkdir(mode=0o700)
    try:
        _write(path, kind, caps, members, dest)
    except ArchiveRefused:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    except _READ_ERRORS as e:
        shutil.rmtree(dest, ignore_errors=True)
        raise ArchiveRefused(f"not a readable {kind} archive (truncated or corrupt): {e}") from None
    except BaseException:
        shutil.rmtree(dest, ignore_errors=True)
        raise
    return members


def tree_root(dest: Path) -> Path:
    """The entry's root in an unpacked tree: ``dest``, or the one directory it holds alone
    (``tar czf x.tgz myentry/``)."""
    children = [p for p in dest.iterdir()]
    if len(children) == 1 and children[0].is_dir() and not children[0].is_symlink():
        return children[0]
    return dest
