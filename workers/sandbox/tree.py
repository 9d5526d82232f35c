"""One walk of a directory tree, for the checks that tell whether it changed.

The sandbox pool keys a kept entry directory by its files (``tree_signature``)
and a ``sandbox: none`` worker keeps a game directory only while its game left it
as given (``plain_reuse.copy_state``): both read every path's ``lstat`` in the
same stable order, and differ only in which fields they keep.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path


def walk_lstat(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    """Every path under ``root`` (directories, then files, each sorted by name, depth
    first), relative to ``root``, with its ``lstat`` (links are not followed)."""
    top = os.path.normpath(root)
    cut = len(top) + 1  # os.walk's paths start with ``top``: slicing is relpath without its cost
    for dirpath, dirnames, filenames in os.walk(top):
        dirnames.sort()
        for name in [*dirnames, *sorted(filenames)]:
            path = os.path.join(dirpath, name)
            yield path[cut:], os.lstat(path)


def tree_signature(root: Path) -> tuple[tuple[str, int, int, int], ...]:
    """What identifies the contents of ``root`` cheaply: each path with its mode, size and
    modification time (a changed entry directory is a new key, never a stale copy)."""
    return tuple((rel, st.st_mode, st.st_size, st.st_mtime_ns) for rel, st in walk_lstat(root))
