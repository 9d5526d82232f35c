"""An entry directory's files, digest and packed artifact (DESIGN §4.1).

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

# Files that never belong to an entry's code (editor droppings, build output).
_IGNORED_NAMES = {".git", "__pycache__", ".DS_Store"}


def entry_files(root: Path) -> list[Path]:
    """The files of an entry, as sorted relative paths (the digest's order)."""
    out: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _IGNORED_NAMES)
        for fn in filenames:
            if fn in _IGNORED_NAMES or fn.endswith(".pyc"):
                continue
            out.append((Path(dirpath) / fn).relative_to(root))
    return sorted(out, key=lambda p: p.as_posix())


def directory_digest(root: Path) -> str:
    h = hashlib.sha256()
    for rel in entry_files(root):
        p = root / rel
        h.update(rel.as_posix().encode() + b"\0")
        h.update(b"x" if os.access(p, os.X_OK) else b"-")
        data = p.read_bytes()
        h.update(len(data).to_bytes(8, "big"))
        h.update(data)
    return h.hexdigest()


def pack_entry(root: Path) -> bytes:
    """A deterministic tar.gz of the entry's files (same bytes for the same digest)."""
    buf = io.BytesIO()
    with gzip.GzipFile(fileobj=buf, mode="wb", mtime=0) as gz, tarfile.open(fileobj=gz, mode="w") as tar:
        for rel in entry_files(root):
            p = root / rel
            data = p.read_bytes()
            info = tarfile.TarInfo(rel.as_posix())
            info.size = len(data)
            info.mode = 0o755 if os.access(p, os.X_OK) else 0o644
            info.mtime = 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def unpack_entry(blob: bytes, dest: Path) -> None:
    """Unpack an artifact made by ``pack_entry`` into ``dest`` (refusing unsafe paths)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as tar:
        tar.extractall(dest, filter="data")
