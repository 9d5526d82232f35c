"""PlainHost (sandbox: none) starts each program as the leader of a process group of
its own, inside the worker's session: the group is what the leftover check and the
kill use, and a session per move would cost a scheduler autogroup per move (issue 13)."""

from __future__ import annotations

import os
from pathlib import Path

from runner.domain.match_values import Limits, VerdictKind
from workers.sandbox.plain import PlainHostFactory

#: the system's python3: as root, sandbox: none runs entries as another user
#: (workers/sandbox/plain_user.py), to which a virtualenv in a root-only home is closed
PY = "python3"
REPORT = "import os; print(os.getpid(), os.getpgid(0), os.getsid(0))"


def test_a_move_leads_its_own_group_in_the_workers_session(tmp_path: Path) -> None:
    with PlainHostFactory().open(tmp_path, Limits(), "A") as host:
        out = host.run([PY, "-c", REPORT], b"", Limits(move_wall_s=10))
    assert out.failure is None, out.detail
    pid, pgid, sid = (int(x) for x in out.stdout.split())
    assert pgid == pid != os.getpgid(0)
    assert sid == os.getsid(0)


def test_a_leftover_of_the_group_is_still_charged_and_killed(tmp_path: Path) -> None:
    leave = "import subprocess; print(subprocess.Popen(['sleep', '30']).pid)"
    with PlainHostFactory().open(tmp_path, Limits(), "A") as host:
        out = host.run([PY, "-c", leave], b"", Limits(move_wall_s=10, exit_grace_ms=0))
    assert out.failure is VerdictKind.LEFT_PROCESSES, out
    assert "sleep" in out.detail
    assert not _running(int(out.stdout))


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (not a zombie waiting for init to reap it)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")
