"""How ``make test`` hands the suite to its pytest-xdist workers (``--units``).

* Units: a module that defines a module-, class- or package-scoped fixture (a whole
  tournament run, a server) is one unit: the fixture is made once, its tests run in their
  order on one worker. Every other test is a unit of its own, so a long module does not hold
  one worker while the others idle.
* Order: units longest first, by the durations measured in ``tests/durations.json``
  (``--update-durations`` rewrites it from the run that passes it), so that the run does not
  end with a 3-minute test started last on one worker while the others have nothing left.
  A test the file does not know counts as short.
* CPU: ``--cpu-durations N`` lists the N tests that used the most CPU (the test's process, the
  children it waited for and the ``tourney`` commands forked for it): unlike wall time, what
  load does not change.

Why not ``--dist loadgroup`` with ``xdist_group`` marks: pytest-xdist 3.8 tells the
controller a test's group by appending ``@group`` to ``item._nodeid``, which pytest 9.2 no
longer reads (the id is ``item._id``): the marks are silently ignored and every test is
handed out alone (pytest-xdist issue 1386). So the controller's scheduler here finds the
units itself, from the test ids and the modules' source (``pytest_xdist_make_scheduler``).
"""

from __future__ import annotations

import functools
import json
import re
import resource
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

from tests import forked_cli

ROOT = Path(__file__).resolve().parents[1]
DURATIONS = Path(__file__).resolve().parent / "durations.json"
#: durations under this are not kept in the file (most of the suite: their order is noise)
KEEP_ABOVE_S = 1.0
_SHARED_FIXTURE = re.compile(r"""@pytest\.fixture\([^)]*scope\s*=\s*["'](module|class|package)["']""")


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("tourney scheduling")
    group.addoption(
        "--units",
        action="store_true",
        help="with -n: hand the tests to the workers as units, longest first (tests/scheduling.py)",
    )
    group.addoption(
        "--update-durations",
        action="store_true",
        help=f"write the tests' measured durations (over {KEEP_ABOVE_S:g} s) to tests/durations.json",
    )
    group.addoption(
        "--cpu-durations",
        type=int,
        default=0,
        metavar="N",
        help="list the N tests that used the most CPU (their process and the children they waited for)",
    )


@functools.cache
def _module_shares_a_fixture(module: str) -> bool:
    try:
        return _SHARED_FIXTURE.search((ROOT / module).read_text()) is not None
    except OSError:
        return False


def unit_of(nodeid: str) -> str:
    """The unit a test goes to a worker in: its module's path, or its own id."""
    module = nodeid.split("::", 1)[0]
    return module if _module_shares_a_fixture(module) else nodeid


def _known_durations() -> dict[str, float]:
    try:
        data = json.loads(DURATIONS.read_text())
    except (OSError, ValueError):
        return {}
    return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}


def order(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--units``: the units longest first, each unit's tests in their order (the same
    on every worker: xdist checks that every worker collected the same tests in one order)."""
    if not config.getoption("units"):
        return
    known = _known_durations()
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(unit_of(item.nodeid), []).append(item)
    seconds = {unit: sum(known.get(i.nodeid, 0.0) for i in members) for unit, members in units.items()}
    ordered = sorted(units, key=lambda unit: -seconds[unit])  # stable: unknown ones keep their order
    items[:] = [item for unit in ordered for item in units[unit]]


class UnitScheduling(LoadScopeScheduling):  # type: ignore[misc]
    """pytest-xdist's scope scheduling with ``unit_of`` for a scope, the units handed out in
    the workers' collection order (``order``: longest first) rather than by their size."""

    def __init__(self, config: pytest.Config, log: Any = None) -> None:
        super().__init__(config, log)
        config.option.loadscopereorder = False

    def _split_scope(self, nodeid: str) -> str:
        return unit_of(nodeid)


def make_scheduler(config: pytest.Config, log: Any) -> UnitScheduling | None:
    return UnitScheduling(config, log) if config.getoption("units") else None


class Timings:
    """Each test's wall time and CPU, gathered from the reports (on the controller under xdist)."""

    def __init__(self) -> None:
        self.wall: dict[str, float] = defaultdict(float)
        self.cpu: dict[str, float] = defaultdict(float)
        self._mark = self._used()

    @staticmethod
    def _used() -> float:
        me, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        # and the `tourney` commands forked for the tests, reaped by their server (tests/forked_cli.py)
        return me.ru_utime + me.ru_stime + children.ru_utime + children.ru_stime + forked_cli.cpu_seconds

    def stamp(self, report: pytest.TestReport) -> None:
        """In the process that ran it: the CPU of this phase (setup, call or teardown) on the report."""
        now = self._used()
        report.user_properties.append(("cpu_s", round(now - self._mark, 3)))
        self._mark = now

    def reset(self) -> None:
        self._mark = self._used()

    def add(self, report: pytest.TestReport) -> None:
        nodeid = report.nodeid
        self.wall[nodeid] += report.duration
        for key, value in report.user_properties:
            if key == "cpu_s" and isinstance(value, (int, float)):
                self.cpu[nodeid] += value

    def write_durations(self) -> None:
        """This run's durations over those of the file (a partial run updates what it ran)."""
        kept = _known_durations()
        for nodeid, seconds in self.wall.items():
            kept.pop(nodeid, None)
            if seconds > KEEP_ABOVE_S:
                kept[nodeid] = round(seconds, 1)
        DURATIONS.write_text(json.dumps(kept, indent=0, sort_keys=True) + "\n")

    def summary(self, terminal: pytest.TerminalReporter, count: int) -> None:
        terminal.write_sep("=", f"most CPU: {count} tests (their process and reaped children)")
        total = sum(self.cpu.values())
        for nodeid, cpu in sorted(self.cpu.items(), key=lambda kv: -kv[1])[:count]:
            terminal.write_line(f"{cpu:8.2f}s cpu {self.wall[nodeid]:8.2f}s wall  {nodeid}")
        terminal.write_line(f"{total:8.2f}s cpu in all tests")
