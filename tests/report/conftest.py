"""Synthetic tournaments shared by the report tests (built once per session)."""

from __future__ import annotations

import pytest

from runner.report.model import ReportData
from tests.report.synth import boxing_permutations, mnk_knockout, potm_finals, pousse_tournament


@pytest.fixture(scope="session")
def pousse_data() -> ReportData:
    return pousse_tournament()


@pytest.fixture(scope="session")
def boxing_data() -> ReportData:
    return boxing_permutations()


@pytest.fixture(scope="session")
def mnk_data() -> ReportData:
    return mnk_knockout()


@pytest.fixture(scope="session")
def potm_data() -> ReportData:
    return potm_finals()
