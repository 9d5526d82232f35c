"""Secrets kept in files: a broker URL (with its password) or a private key (organiser, worker).

A secret on a command line is visible to every local user (``ps``); in a file
it is private only if no one else may read it, so such a file must be mode
0600 or stricter.
"""

from __future__ import annotations

import stat
from pathlib import Path

from runner.domain.entry_tree import RefusedPath, read_regular_file


def read_private_text(path: Path, what: str, error: type[Exception]) -> str:
    """The stripped text of ``path``; ``error`` (one line naming ``what`` and the fix)
    if it cannot be read or others may read it."""
    try:
        # the one rule for files we read (docs/config.md#what-an-entry-may-hold): never through
        # a link, and the mode checked on the very file read
        data, st = read_regular_file(path)
        text = data.decode()
    except RefusedPath as e:
        kind = e.what.split(";")[0]
        raise error(f"{what} {path}: {kind}; expected a regular file of mode 0600") from None
    except (OSError, UnicodeDecodeError) as e:
        raise error(f"cannot read {what} {path}: {getattr(e, 'strerror', None) or e}") from None
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise error(f"{what} {path} is readable by others: chmod 600 {path}")
    return text.strip()
