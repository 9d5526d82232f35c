"""Integration tests: real Redis, real Celery workers, real processes (docs/architecture.md)."""

from __future__ import annotations

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
def entry_dir(tmp_path: Path) -> Iterator[Path]:
    """A directory entry programs can read and write, even run as another user (as root):
    ``tests.integration.helpers.entry_shared_dir``."""
    from tests.integration.helpers import entry_shared_dir

    with entry_shared_dir(tmp_path) as shared:
        yield shared
