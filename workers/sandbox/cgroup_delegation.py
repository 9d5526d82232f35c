"""A worker whose own cgroup is delegated to it (systemd ``Delegate=yes``) makes its sandboxes'
cgroups there, so the kernel charges their memory (docs/deploy.md, docs/sandbox.md).

systemd hands a service's cgroup v2 to its ``User=`` with ``Delegate=yes``, with the memory and
pids controllers available, but cgroup v2 lets a cgroup enable controllers for its children
only while no process is in it (the "no internal processes" rule), and the worker is in it.
So, at start, before anything else runs in it, a worker that is alone in its own cgroup, may
write it, and is offered memory and pids there, moves itself into a leaf ``worker`` of that
cgroup, enables memory and pids for the cgroup's children, and names the cgroup in
``TOURNEY_CGROUP_ROOT`` (its pool processes inherit it): each sandbox's cgroup is then made
beside the leaf (``workers.sandbox.cgroups``). A worker that shares its cgroup (started from a
shell, or by ``tourney run``) or is given ``TOURNEY_CGROUP_ROOT`` changes nothing.
"""

from __future__ import annotations

import os
from pathlib import Path

from workers.sandbox.cgroups import CGROUP_FS, read_knob, write_knob

ROOT_ENV = "TOURNEY_CGROUP_ROOT"
#: the leaf the worker moves into, beside its sandboxes' cgroups
LEAF = "worker"
NEEDED = ("memory", "pids")


def _own_unified_path(proc_cgroup: Path) -> str | None:
    for line in read_knob(proc_cgroup).splitlines():
        if line.startswith("0::"):
            return line[3:]
    return None


def adopt_delegated_cgroup(fs: Path = CGROUP_FS, proc_cgroup: Path = Path("/proc/self/cgroup")) -> str | None:
    """Take the worker's delegated cgroup for its sandboxes (see the module doc). Returns one
    line saying what was done, or None when nothing was to be done; never raises: where a step
    fails, the worker says so and its sandboxes fall back to what ``Cgroups`` finds."""
    if os.environ.get(ROOT_ENV):
        return None
    path = _own_unified_path(proc_cgroup)
    unified = fs / "unified" if (fs / "unified" / "cgroup.controllers").exists() else fs
    if path is None or path in ("", "/") or not (unified / "cgroup.controllers").exists():
        return None  # no cgroup v2 of our own (the root, or v1 only)
    own = unified / path.lstrip("/")
    if set(NEEDED) <= set(read_knob(own / "cgroup.subtree_control").split()):
        return None  # already usable as it is
    if not set(NEEDED) <= set(read_knob(own / "cgroup.controllers").split()):
        return None  # not delegated with memory and pids
    files = [own, own / "cgroup.procs", own / "cgroup.subtree_control"]
    if not all(os.access(f, os.W_OK) for f in files):
        return None
    if read_knob(own / "cgroup.procs").split() != [str(os.getpid())]:
        return None  # others live in it too: it cannot enable controllers for its children
    leaf = own / LEAF
    try:
        leaf.mkdir(exist_ok=True)
        write_knob(leaf / "cgroup.procs", str(os.getpid()))
        write_knob(own / "cgroup.subtree_control", " ".join(f"+{c}" for c in NEEDED))
    except OSError as e:
        return f"cgroup {own} is delegated but could not be used for sandboxes ({e.strerror or e})"
    os.environ[ROOT_ENV] = str(own)
    return f"cgroup {own} delegated: this worker moved into {LEAF}/, sandboxes' cgroups beside it"
