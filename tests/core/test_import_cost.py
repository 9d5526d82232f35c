"""Every `tourney` command imports only what it needs: the heavy libraries load when a
command uses them, not with the command line (each `tourney` process pays for its
imports before doing anything, and the tests start many)."""

from __future__ import annotations

import json
import subprocess
import sys

from runner import cli

#: loaded only where used: numpy by the rating fit of a large pool (scipy by its sparse
#: path), Celery by a worker's tasks, jinja2 by the HTML report, openskill by multi-player
#: ratings
HEAVY = ("numpy", "scipy", "celery", "jinja2", "openskill")

PROBE = """
import importlib, json, sys
for target in sys.argv[1:]:
    importlib.import_module(target.split(":")[0])
print(json.dumps(sorted({name.split(".")[0] for name in sys.modules})))
"""


def top_level_modules_after_importing(*targets: str) -> set[str]:
    """The top-level packages a fresh interpreter holds after importing ``targets``."""
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *targets], capture_output=True, text=True, timeout=120, check=True
    )
    return set(json.loads(done.stdout))


def test_no_command_handler_imports_a_heavy_library() -> None:
    loaded = top_level_modules_after_importing("runner.cli", *cli.HANDLERS.values())
    assert "runner" in loaded and "workers" in loaded  # the probe did import the handlers
    assert sorted(loaded & set(HEAVY)) == []


def test_the_rating_fit_still_loads_numpy_when_used() -> None:
    """The rule above is not vacuous: the probe sees a heavy library that is imported."""
    assert "numpy" in top_level_modules_after_importing("runner.domain.elo_fit")
