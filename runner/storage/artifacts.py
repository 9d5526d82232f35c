"""A run's packed entries: ``artifacts/<digest>.tar.gz``, or ``<digest>.refused`` (docs/config.md#builds).

Every entry is packed once, from one read of each file
(``runner.domain.packing.pack_entry_to``), and kept under the digest the run
recorded for it only when the bytes packed have that digest. An entry that
cannot be packed as recorded (rewritten since the config was loaded, a file
swapped for a link or grown past the caps meanwhile, unreadable) is the
entry's fault, never the run's: its artifact is a refusal, ``<digest>.refused``,
which stands in for the tar.gz everywhere one travels (Redis, the inline
dispatcher), and which a worker makes that entry's ``build_failed`` with the
reason in one line. Every other match is played as usual.
"""

from __future__ import annotations

import contextlib
import errno
import os
from dataclasses import dataclass
from pathlib import Path

from runner.domain.entry_tree import UNCAPPED, EntryCaps, RefusedPath
from runner.domain.packing import pack_entry_to, refused_artifact


@dataclass(frozen=True)
class Packed:
    """One entry's artifact in a run directory: its file, and the refusal's reason if it is one."""

    path: Path
    refused: str = ""


def artifact_paths(artifacts: Path, digest: str) -> tuple[Path, Path]:
    """Where the artifact of ``digest`` lives: the tar.gz, and the refusal that may stand for it."""
    return artifacts / f"{digest}.tar.gz", artifacts / f"{digest}.refused"


def read_artifact(artifacts: Path, digest: str) -> bytes:
    """The artifact of ``digest`` (a tar.gz, else its refusal); OSError when there is neither."""
    packed, refused = artifact_paths(artifacts, digest)
    try:
        return packed.read_bytes()
    except FileNotFoundError:
        return refused.read_bytes()


def pack_artifact(artifacts: Path, name: str, path: Path, digest: str, caps: EntryCaps = UNCAPPED) -> Packed:
    """The artifact of the entry ``name`` at ``path``, recorded with ``digest``: kept if packed
    already, else packed once and kept as ``<digest>.tar.gz`` if what was packed has that digest,
    else ``<digest>.refused`` saying why. Raises only for this machine's own failure to write
    ``artifacts`` (OSError): the run cannot go on without its artifacts directory."""
    artifacts.mkdir(parents=True, exist_ok=True)
    packed, refused = artifact_paths(artifacts, digest)
    if packed.exists():
        return Packed(packed)
    tmp = packed.with_name(packed.name + ".tmp")
    reason = ""
    try:
        with open(tmp, "wb") as out:
            try:
                got = pack_entry_to(path, out, caps)
            except RefusedPath as e:
                reason = f"cannot be packed: {e.what} ({e.rel.as_posix()})"
            except OSError as e:
                if _ours(e):
                    raise
                reason = f"cannot be packed: {e.strerror or e} ({e.filename or path})"
            else:
                if got != digest:
                    reason = (
                        f"changed after the run read it (digest {digest[:12]} when loaded, {got[:12]} "
                        "when packed); its code is not what this run recorded (run again to play it)"
                    )
        if not reason:
            tmp.replace(packed)
            with contextlib.suppress(FileNotFoundError):
                refused.unlink()  # an earlier session's refusal: the entry is as recorded again
            return Packed(packed)
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    line = f"entry {name}: {reason}"
    tmp_refused = refused.with_name(refused.name + ".tmp")
    tmp_refused.write_bytes(refused_artifact(line))
    tmp_refused.replace(refused)
    return Packed(refused, line)


def _ours(e: OSError) -> bool:
    """A failure of this machine's side (writing the artifact), not of reading the entry."""
    return e.errno in (errno.ENOSPC, errno.EDQUOT, errno.EROFS) or (
        e.filename is not None and os.fspath(e.filename).endswith(".tar.gz.tmp")
    )


__all__ = ["Packed", "artifact_paths", "pack_artifact", "read_artifact"]
