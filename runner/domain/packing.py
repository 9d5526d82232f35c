"""An entry directory's files, digest and packed artifact (docs/config.md).

Apart from ``runner.domain.entries`` (entry.yaml's pydantic models) because a
worker unpacks artifacts for its first match, and importing pydantic there
cost a pool process about 0.15 s before that match's first move.

The digest and the artifact come from one read of each file
(``runner.domain.entry_tree.read_entry``): ``pack_entry_to`` returns the digest
of the very bytes it packed, so an entry rewritten while it is packed can never
travel under the digest of what it was before.

An artifact is a deterministic tar.gz, or, for an entry its organiser could not
pack (``refused_artifact``), a short statement of why: the worker makes that the
entry's ``build_failed`` (docs/config.md#builds), and the run goes on.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO

from runner.domain.entry_tree import READ_CHUNK, UNCAPPED, EntryCaps, TreeItem, read_entry, walk_entry
from runner.domain.entry_tree import RefusedPath as RefusedPath

#: how an artifact that stands for a refusal starts (a tar.gz starts with 0x1f 0x8b)
REFUSED_MAGIC = b"tourney-refused-artifact\n"


def entry_files(root: Path, caps: EntryCaps = UNCAPPED) -> list[Path]:
    """The files of an entry, as sorted relative paths (the digest's order); ``RefusedPath``
    for a link, fifo, socket, device or hard link anywhere in it (``runner.domain.entry_tree``)."""
    return [Path(it.rel) for it in walk_entry(root, caps) if not it.is_dir]


def _hash_item(h: hashlib._Hash, it: TreeItem) -> None:
    """The digest's record of one item before its bytes. A directory with no file under it is
    hashed by its path (an added empty ``support/`` changes the digest); any other directory's
    path is already in its files' paths, so entries without empty directories keep the digests
    they always had."""
    if it.is_dir:
        if it.empty_dir:
            h.update(it.rel.as_posix().encode() + b"/\0d")
        return
    h.update(it.rel.as_posix().encode() + b"\0")
    h.update(b"x" if it.executable else b"-")
    h.update(it.size.to_bytes(8, "big"))


def directory_digest(root: Path, caps: EntryCaps = UNCAPPED) -> str:
    """sha256 of the entry's paths, executable bits and bytes (each file streamed, read once)."""
    h = hashlib.sha256()
    for it, chunks in read_entry(root, caps):
        _hash_item(h, it)
        for chunk in chunks:
            h.update(chunk)
    return h.hexdigest()


class _Feed(io.RawIOBase):
    """A file's chunks as the reader ``tarfile`` copies from, each chunk hashed as it passes."""

    def __init__(self, chunks: Iterator[bytes], h: hashlib._Hash) -> None:
        self._chunks = chunks
        self._h = h
        self._left = b""

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        if not self._left:
            self._left = next(self._chunks, b"")
            self._h.update(self._left)
        n = len(self._left) if size < 0 else size
        out, self._left = self._left[:n], self._left[n:]
        return out


def pack_entry_to(root: Path, out: BinaryIO, caps: EntryCaps = UNCAPPED) -> str:
    """Write the entry's deterministic tar.gz (same bytes for the same digest) to ``out`` and
    return the digest of what was written; ``RefusedPath`` (``EntryOverCap``) as ``read_entry``."""
    h = hashlib.sha256()
    with (
        gzip.GzipFile(filename="", fileobj=out, mode="wb", mtime=0) as gz,  # no name in the header
        tarfile.TarFile(fileobj=gz, mode="w", copybufsize=READ_CHUNK) as tar,
    ):
        for it, chunks in read_entry(root, caps):
            _hash_item(h, it)
            info = tarfile.TarInfo(it.rel.as_posix())
            info.mtime = 0
            if it.is_dir:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
                continue
            info.size = it.size
            info.mode = 0o755 if it.executable else 0o644
            tar.addfile(info, _Feed(chunks, h))
    return h.hexdigest()


def pack_entry(root: Path, caps: EntryCaps = UNCAPPED) -> bytes:
    """``pack_entry_to`` into memory: the artifact's bytes."""
    buf = io.BytesIO()
    pack_entry_to(root, buf, caps)
    return buf.getvalue()


def refused_artifact(reason: str) -> bytes:
    """What stands for an entry's artifact when it could not be packed: the reason, one line."""
    return REFUSED_MAGIC + " ".join(reason.split()).encode()


def artifact_refusal(blob: bytes) -> str | None:
    """The reason in a ``refused_artifact``; None for an artifact proper."""
    if not blob.startswith(REFUSED_MAGIC):
        return None
    return blob[len(REFUSED_MAGIC) :].decode(errors="replace")


def _files_and_dirs_only(member: tarfile.TarInfo, dest: str) -> tarfile.TarInfo | None:
    # the packer makes nothing else, so anything else is a forged artifact (docs/config.md)
    if not (member.isfile() or member.isdir()):
        raise tarfile.TarError(f"{member.name}: not a regular file or directory")
    return tarfile.data_filter(member, dest)


def _checked_member(member: tarfile.TarInfo, dest: Path) -> tarfile.TarInfo:
    """``tarfile.data_filter``'s checks for Pythons without extraction filters (3.11.0-3.11.3,
    Debian 12's 3.11.2): a regular file or directory only, a relative path that stays inside
    ``dest``, no set-id or group/other write bits, owned by whoever unpacks it."""
    if not (member.isfile() or member.isdir()):
        raise tarfile.TarError(f"{member.name}: not a regular file or directory")
    name = member.name
    if name.startswith("/") or ".." in Path(name).parts:
        raise tarfile.TarError(f"{name}: an absolute path or one with '..'")
    target = (dest / name).resolve()
    if target != dest and dest not in target.parents:
        raise tarfile.TarError(f"{name}: outside the destination")
    member.mode = (member.mode or 0o644) & 0o755
    member.uid, member.gid, member.uname, member.gname = os.getuid(), os.getgid(), "", ""
    return member


def unpack_entry(blob: bytes, dest: Path) -> None:
    """Unpack an artifact made by ``pack_entry`` into ``dest`` (refusing unsafe paths)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        if hasattr(tarfile, "data_filter"):  # Python 3.11.4 and later
            tar.extractall(dest, filter=_files_and_dirs_only)
            return
        root = dest.resolve()
        members = [_checked_member(m, root) for m in tar.getmembers()]  # all checked, then written
        tar.extractall(root, members=members)
