"""Shared fixtures for the referee tests: where the real contest records live."""

from __future__ import annotations

from pathlib import Path

import pytest

PROJECT_ROOT = Path(__file__).resolve().parents[2]
SHARED = PROJECT_ROOT.parent / "shared"
ICFP98_GAMES = SHARED / "conformance" / "icfp98" / "games"
SEEDS = SHARED / "seeds"


@pytest.fixture(scope="session")
def icfp98_games() -> Path:
    if not ICFP98_GAMES.is_file():
        pytest.skip(f"conformance records not present ({ICFP98_GAMES})")
    return ICFP98_GAMES
