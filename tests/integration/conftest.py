"""Integration tests: real Redis, real Celery workers, real processes (docs/architecture.md)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "tests/integration" in str(item.fspath):
            item.add_marker(pytest.mark.integration)


def bwrap_problem() -> str | None:
    """Why the real sandbox cannot run here (None when it can)."""
    from workers.sandbox import HostError, host_factory

    try:
        host_factory("bwrap")
    except HostError as e:
        return str(e)
    return None


@pytest.fixture
def entry_files() -> Iterator[Path]:
    """A directory for files a ``sandbox: none`` entry must read or rename (a control file).

    A root worker runs such entries as the sandbox user (nobody: docs/sandbox.md), which
    cannot cross pytest's ``tmp_path`` (under root's 0700 ``/tmp/pytest-of-root``), so this
    one is made in ``/tmp``, owned by that user when we are root, and removed afterwards."""
    from workers.sandbox.checks import sandbox_user

    directory = Path(tempfile.mkdtemp(prefix="tourney-entry-files-"))
    try:
        uid = sandbox_user()
        if uid is not None:
            os.chown(directory, uid, uid)
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)
