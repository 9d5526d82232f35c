"""``sandbox: none`` entries as another user: the organiser's secrets out of their reach
(issue 34, item 6; docs/sandbox.md, "`sandbox: none`").

Redaction cannot win against encodings (an entry that reads the broker password can
print it in base64, hex, reversed, split over lines), so under ``sandbox: none`` the
entry must not read the secrets at all: the organiser key and worker key files in
``$TOURNEY_HOME``, the broker URL in the local worker's environment, the embedded
Redis's configuration, the run directory. A worker that runs as root starts every
entry program (moves, persistent processes, builds) as the sandbox user (``nobody``,
``workers.sandbox.checks.sandbox_user``) with no supplementary group. That user cannot
open the key files (mode 0600, ours) or the run directories and caches (0700), and
cannot read ``/proc/<pid>/environ`` or the memory of any process of ours (another
uid: the kernel's ptrace access check).

Its working copy and private TMPDIR are then made in ``ENTRY_DIRS`` (``/tmp``'s, never
``$TMPDIR``, which may lie under a directory the entry user cannot cross), owned by it.

A worker that is not root has no other uid to give entries: they run as the organiser
and can read all of the above. It says so at start; the docs say so plainly.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from workers.sandbox.base import HostError
from workers.sandbox.checks import sandbox_user

#: where game and build directories of entries run as another user are made: in the
#: machine's /tmp, reachable by that user, in a directory of ours it may cross but not list
ENTRY_DIRS = Path("/tmp/tourney-entries")


def entry_uid() -> int | None:
    """The uid ``sandbox: none`` entries run as, or None: as ourselves (not root)."""
    return sandbox_user()


def entry_dirs() -> Path:
    """``ENTRY_DIRS``, made if missing and checked: ours, a directory, not a link, mode 0711.

    /tmp is everyone's: a directory of that name someone else made first (the entry
    user, say) could hold links or be listed, so it is refused, never used."""
    try:
        ENTRY_DIRS.mkdir(mode=0o711, exist_ok=True)
        st = os.lstat(ENTRY_DIRS)
    except OSError as e:
        raise HostError(f"cannot make {ENTRY_DIRS} for sandbox: none entries: {e}") from e
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        raise HostError(
            f"{ENTRY_DIRS} is not a directory of uid {os.geteuid()} (uid {st.st_uid}); "
            "remove it: sandbox: none makes its entries' directories there"
        )
    if stat.S_IMODE(st.st_mode) != 0o711:
        os.chmod(ENTRY_DIRS, 0o711)
    return ENTRY_DIRS


def give_to_entry_user(root: Path) -> None:
    """Make the tree at ``root`` (a fresh copy of ours: no links followed) the entry user's."""
    uid = entry_uid()
    if uid is None:
        return
    os.chown(root, uid, uid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)
