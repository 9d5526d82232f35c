"""Integration tests: real Redis, real Celery workers, real processes (docs/architecture.md)."""

from __future__ import annotations

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
