"""An entry directory's files, digest and packed artifact (docs/config.md).

Apart from ``runner.domain.entries`` (entry.yaml's pydantic models) because a
worker unpacks artifacts for its first match, and importing pydantic there
cost a pool process about 0.15 s before that match's first move.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
from pathlib import Path

from runner.domain.entry_tree import RefusedPath as RefusedPath
from runner.domain.entry_tree import TreeItem, walk_entry


def entry_files(root: Path) -> list[Path]:
    """The files of an entry, as sorted relative paths (the digest's order); ``RefusedPath``
    for a link, fifo, socket, device or hard link anywhere in it (``runner.domain.entry_tree``)."""
    return [Path(it.rel) for it in walk_entry(root) if not it.is_dir]


def directory_digest(root: Path) -> str:
    """sha256 of the entry's paths, executable bits and bytes. A directory with no file under
    it is hashed by its path (an added empty ``support/`` changes the digest); any other
    directory's path is already in its files' paths, so entries without empty directories keep
    the digests they always had."""
    return digest_items(walk_entry(root))


def digest_items(items: list[TreeItem]) -> str:
    h = hashlib.sha256()
    for it in items:
        if it.is_dir:
            if it.empty_dir:
                h.update(it.rel.as_posix().encode() + b"/\0d")
            continue
        h.update(it.rel.as_posix().encode() + b"\0")
        h.update(b"x" if it.executable else b"-")
        h.update(len(it.data).to_bytes(8, "big"))
        h.update(it.data)
    return h.hexdigest()


def pack_entry(root: Path) -> bytes:
    """A deterministic tar.gz of the entry's directories and files (same bytes for the same
    digest); ``RefusedPath`` as ``entry_files``."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for it in walk_entry(root):
            info = tarfile.TarInfo(it.rel.as_posix())
            info.mtime = 0
            if it.is_dir:
                info.type = tarfile.DIRTYPE
                info.mode = 0o755
                tar.addfile(info)
                continue
            info.size = len(it.data)
            info.mode = 0o755 if it.executable else 0o644
            tar.addfile(info, io.BytesIO(it.data))
    return buf.getvalue()


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
