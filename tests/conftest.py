"""Settings for the whole suite.

No test writes into the working tree: Hypothesis would keep its example
database and cached source constants in ``./.hypothesis``; its home is the
system temp directory instead (failing examples are still replayed from there
on the next run).

The entries the tests play are started by name (``run: [python3, main.py]``),
so through ``PATH`` under ``sandbox: none``: the suite runs with the
interpreter it was started with first on ``PATH``, as in an activated
virtual environment (``_interpreter_first_on_path``).
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis.configuration import set_hypothesis_home_dir

from tests import scheduling

set_hypothesis_home_dir(str(Path(tempfile.gettempdir()) / "tourney-hypothesis"))


@pytest.fixture(scope="session", autouse=True)
def _interpreter_first_on_path() -> Iterator[None]:
    """Entries, builds and ``tourney`` commands find this interpreter's ``python3`` first.

    Without it ``python3`` is whatever ``PATH`` finds first, which can be a version
    manager's shim (pyenv's is a shell script that runs ``pyenv exec``): then every
    move of a Python entry starts two more processes and costs about four times the
    CPU of the interpreter itself, hundreds of times in a run of the suite.
    """
    bin_dir = str(Path(sys.executable).parent)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PATH", os.pathsep.join([bin_dir, os.environ.get("PATH", os.defpath)]))
        yield


@pytest.fixture(scope="session", autouse=True)
def _organiser_home(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The organiser's keys and fleet registry (``runner.domain.fleet``) in a directory of the
    test session's own, never the user's ``~/.config/tourney``; every ``tourney`` a test starts
    inherits it. A test that needs another organiser sets ``TOURNEY_HOME`` itself."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("TOURNEY_HOME", str(tmp_path_factory.mktemp("organiser")))
        yield


@pytest.fixture(autouse=True)
def _kept_sandboxes_closed() -> Iterator[None]:
    """A test that plays a match in its own process leaves the entries' sandboxes kept for
    reuse (``workers.sandbox.pool``), as a worker would; they are closed when it ends, so no
    test runs beside another's idle sandboxes, and each cgroup check sees only its own."""
    yield
    if "workers.sandbox.pool" in sys.modules:  # not imported: nothing was kept
        sys.modules["workers.sandbox.pool"].close_idle_sandboxes()  # and sandbox: none's directories
    elif "workers.sandbox.plain_reuse" in sys.modules:
        sys.modules["workers.sandbox.plain_reuse"].shared.close_mine()


# -- how the suite is handed to pytest-xdist's workers, and what each test cost (tests/scheduling.py)
_timings = scheduling.Timings()


def pytest_addoption(parser: pytest.Parser) -> None:
    scheduling.add_options(parser)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    scheduling.order(config, items)


def pytest_collection_finish() -> None:
    # what collection made (every module of the project, the libraries and the tests) lives to
    # the end: frozen, the collector's full passes no longer walk it, which halves the time
    # each worker spends collecting garbage (1.3 s of CPU a worker in make test-fast, 0.6 frozen)
    gc.freeze()


@pytest.hookimpl(optionalhook=True)  # pytest-xdist's hook: unknown under -p no:xdist
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> scheduling.UnitScheduling | None:
    return scheduling.make_scheduler(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol() -> None:
    _timings.reset()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport() -> Iterator[None]:
    outcome = yield
    _timings.stamp(outcome.get_result())  # type: ignore[attr-defined]


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    _timings.add(report)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter, config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):
        return
    if config.getoption("cpu_durations"):
        _timings.summary(terminalreporter, config.getoption("cpu_durations"))
    if config.getoption("update_durations"):
        _timings.write_durations()
        terminalreporter.write_line(f"durations written to {scheduling.DURATIONS}")
