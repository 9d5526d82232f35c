"""What an entry sees inside its bubblewrap sandbox (docs/architecture.md, row 14):
the bwrap command line and the sizes of the sandbox's writable places.

* the system's runtime directories read-only, and nothing else of the host
  (an allow-list, ``system_view``: no checkout, run, cache or other entry);
* ``/entry``: its private working copy (cwd), on a size- and inode-capped tmpfs;
* ``/tmp`` and ``/dev/shm``: private size- and inode-capped tmpfs, kept for the
  whole game (POTM's ``/tmp/arena.<MARK>`` persists across the entry's own
  moves and is gone with the sandbox); ``/run`` empty;
* its own cgroup (``cgroups.py``): every byte it pins, its tasks and its CPU
  are charged by the kernel, and a persistent process is frozen between its
  turns;
* its own PID, network (loopback only, with nothing listening: no Redis),
  IPC, UTS and user namespaces, and no way to make more user namespaces;
* a clean environment (``SANDBOX_ENV``).
"""

from __future__ import annotations

import contextlib
import functools
import os
import stat
from dataclasses import dataclass

from runner.domain.match_values import Limits
from runner.domain.registry import SANDBOX_BINDS_ENV, sandbox_bind_problem
from workers.sandbox.base import HostError
from workers.sandbox.checks import sandbox_user

#: the working copy and the launcher, as paths inside the sandbox
ENTRY_DIR = "/entry"
LAUNCHER_PATH = "/.tourney/launcher"
#: host top-level directories the sandbox replaces with its own
REPLACED = frozenset({"tmp", "proc", "dev", "run"})
#: what every sandboxed program finds in its environment, and nothing else
SANDBOX_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "HOME": ENTRY_DIR,
    "TMPDIR": "/tmp",
    "LANG": "C.UTF-8",
    "PYTHONDONTWRITEBYTECODE": "1",
}
#: each private tmpfs (/tmp, /dev/shm, room to grow in /entry) holds this many
#: times the file-size limit
SCRATCH_FILES = 4
BUILD_SCRATCH_BYTES = 1 << 30


#: inode caps of the private tmpfs (files, directories and links each take one):
#: a game's /tmp and /dev/shm, and the room a game or a build has beyond the
#: entry's own files in /entry (a build's output is capped by it: count and bytes)
GAME_SCRATCH_INODES = 4096
BUILD_SCRATCH_INODES = 20000


@dataclass(frozen=True)
class Layout:
    """Sizes of the sandbox's writable places in bytes, and their inode caps."""

    tmp: int
    entry: int
    shm: int
    tmp_inodes: int = GAME_SCRATCH_INODES
    entry_inodes: int = GAME_SCRATCH_INODES
    shm_inodes: int = GAME_SCRATCH_INODES

    @classmethod
    def for_game(cls, entry_bytes: int, limits: Limits, entry_inodes: int = 0) -> Layout:
        scratch = SCRATCH_FILES * (limits.file_size_mb << 20)
        return cls(
            tmp=scratch, entry=entry_bytes + scratch, shm=scratch,
            entry_inodes=entry_inodes + GAME_SCRATCH_INODES,
        )  # fmt: skip

    @classmethod
    def for_build(cls, entry_bytes: int, entry_inodes: int = 0) -> Layout:
        return cls(
            tmp=BUILD_SCRATCH_BYTES, entry=entry_bytes + BUILD_SCRATCH_BYTES, shm=64 << 20,
            tmp_inodes=BUILD_SCRATCH_INODES, entry_inodes=entry_inodes + BUILD_SCRATCH_INODES,
        )  # fmt: skip

    def mounts(self) -> str:
        """The launcher's mount spec: each private tmpfs with its size and inode cap
        (bwrap's own --tmpfs has no inode option; the launcher mounts over it)."""
        places = (("/tmp", self.tmp, self.tmp_inodes), ("/dev/shm", self.shm, self.shm_inodes),
                  (ENTRY_DIR, self.entry, self.entry_inodes))  # fmt: skip
        return ",".join(f"{path}:{size}:{inodes}" for path, size, inodes in places)


#: the system's runtime directories: all an entry (or its build) may see of the host
RUNTIME_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
#: secrets under /etc, hidden even where the sandbox's user could read them
#: (besides every top-level /etc entry that is not world-readable)
ETC_SECRETS = (
    "/etc/shadow", "/etc/shadow-", "/etc/gshadow", "/etc/gshadow-", "/etc/sudoers", "/etc/sudoers.d",
    "/etc/ssh", "/etc/ssl/private", "/etc/security/opasswd", "/etc/krb5.keytab", "/etc/pip.conf",
    "/etc/npmrc", "/etc/gitconfig", "/etc/machine-id", "/etc/.pwd.lock",
)  # fmt: skip


def _readable_by_sandbox(st: os.stat_result, uid: int) -> bool:
    """Whether the sandbox's user could read it (masking what it cannot read costs
    a mount per file for nothing: about 0.2 ms of set-up each)."""
    if st.st_mode & stat.S_IROTH:
        return True
    by_owner = st.st_uid == uid and bool(st.st_mode & stat.S_IRUSR)
    by_group = st.st_gid == uid and bool(st.st_mode & stat.S_IRGRP)
    return by_owner or by_group


def _etc_secrets() -> list[str]:
    uid = sandbox_user()
    uid = os.getuid() if uid is None else uid
    candidates = set(ETC_SECRETS)
    with contextlib.suppress(OSError):
        candidates.update(e.path for e in os.scandir("/etc"))
    found = []
    for path in candidates:
        try:
            st = os.lstat(path)
        except OSError:
            continue
        named = path in ETC_SECRETS
        # a named secret the sandbox could read, or anything at the top of /etc that is
        # private to someone but readable by the sandbox's user (a worker not run as root)
        private = not st.st_mode & stat.S_IROTH
        if _readable_by_sandbox(st, uid) and (named or private):
            found.append(path)
    return sorted(found)


@functools.cache
def system_view(extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """bwrap arguments that show the system's runtime directories read-only, and nothing else.

    An allow-list (docs/config.md, "What the sandbox refuses and charges"):
    ``RUNTIME_DIRS`` where they exist (top-level symlinks such as
    ``/bin -> usr/bin`` stay links), ``/etc`` with its
    secrets masked, and the read-only ``extra`` paths a worker adds for a
    language runtime (``SANDBOX_BINDS_ENV``). The organiser's checkout,
    run directories, caches, other entries, ``/home``, ``/root``, ``/var``,
    ``/opt``, ``/srv``, ``/mnt`` are simply not there. The sandbox's root
    stays bwrap's own tmpfs, where ``/entry`` can be made.
    """
    args: list[str] = []
    for path in (*RUNTIME_DIRS, *extra):
        if os.path.islink(path) and os.path.dirname(path) == "/":
            args += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            args += ["--ro-bind", path, path]
    for secret in _etc_secrets():
        if os.path.isdir(secret) and not os.path.islink(secret):
            args += ["--perms", "0555", "--tmpfs", secret, "--remount-ro", secret]
        else:
            args += ["--ro-bind", "/dev/null", secret]
    return tuple(args)


def extra_binds() -> tuple[str, ...]:
    """Read-only paths the worker adds to every sandbox (``SANDBOX_BINDS_ENV``,
    colon-separated absolute paths; e.g. a language runtime under ``/opt``).

    The worker's own policy: never taken from a match message.
    """
    paths = []
    for part in os.environ.get(SANDBOX_BINDS_ENV, "").split(":"):
        if not part:
            continue
        problem = sandbox_bind_problem(part)
        if problem is not None:
            raise HostError(f"{SANDBOX_BINDS_ENV}: {problem}")
        if not os.path.exists(part):
            raise HostError(f"{SANDBOX_BINDS_ENV}: {part} does not exist on this machine")
        paths.append(os.path.normpath(part))
    return tuple(paths)


def bwrap_argv(
    bwrap: str,
    layout: Layout,
    *,
    launcher_fd: int,
    ctl_fd: int,
    info_fd: int,
    binds: tuple[str, ...] = (),
    cgroup_fd: int = -1,
) -> list[str]:
    """The bwrap command line for one sandbox (order matters: later mounts go on top)."""
    return [
        bwrap,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--die-with-parent",
        "--as-pid-1",
        "--new-session",
        "--hostname",
        "sandbox",
        *system_view(binds),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--size",
        str(layout.shm),
        "--tmpfs",
        "/dev/shm",
        "--size",
        str(layout.tmp),
        "--tmpfs",
        "/tmp",
        "--dir",
        "/run",
        "--size",
        str(layout.entry),
        "--tmpfs",
        ENTRY_DIR,
        "--perms",
        "0555",
        "--file",
        str(launcher_fd),
        LAUNCHER_PATH,
        # nothing writable but the three tmpfs: not bwrap's root, not /dev
        "--remount-ro",
        "/dev",
        "--remount-ro",
        "/",
        "--chdir",
        ENTRY_DIR,
        "--info-fd",
        str(info_fd),
        # for the launcher's inode-capped mounts and each game's fresh namespaces
        # (/proc, loopback up) only: the process that serves a game drops every
        # capability before it reads a request (launcher.c game_init)
        "--cap-add",
        "CAP_SYS_ADMIN",
        "--cap-add",
        "CAP_NET_ADMIN",
        "--",
        LAUNCHER_PATH,
        str(ctl_fd),
        ENTRY_DIR,
        str(cgroup_fd),
        layout.mounts(),
    ]
