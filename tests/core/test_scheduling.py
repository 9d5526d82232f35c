"""How ``make test`` hands the suite to its workers (tests/scheduling.py): the units it makes
and the order it gives them, on the suite's own modules."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests import scheduling


def test_a_module_with_a_module_scoped_fixture_is_one_unit_and_any_other_test_its_own() -> None:
    # tests/report/test_html.py renders one report for its module (scope="module")
    assert scheduling.unit_of("tests/report/test_html.py::test_the_page_is_self_contained") == (
        "tests/report/test_html.py"
    )
    assert scheduling.unit_of("tests/report/test_html.py::test_write_report_writes_one_file") == (
        "tests/report/test_html.py"
    )
    alone = "tests/core/test_entry_caps.py::test_the_caps_are_the_configs_own"
    assert scheduling.unit_of(alone) == alone


class _Item:
    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid


class _Config:
    def __init__(self, units: bool) -> None:
        self.units = units

    def getoption(self, name: str) -> bool:
        assert name == "units"
        return self.units


def test_units_go_longest_first_and_a_units_tests_keep_their_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    durations = tmp_path / "durations.json"
    html = "tests/report/test_html.py::"
    measured = {"tests/a.py::short": 2.0, "tests/b.py::long": 90.0, html + "second": 5.0, html + "first": 1.0}
    durations.write_text(json.dumps(measured))
    monkeypatch.setattr(scheduling, "DURATIONS", durations)
    ids = ["tests/a.py::short", html + "first", "tests/c.py::unknown", html + "second", "tests/b.py::long"]
    items = [_Item(i) for i in ids]
    scheduling.order(_Config(units=True), items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == [
        "tests/b.py::long",
        html + "first",  # the module's 6 s, its tests in their order
        html + "second",
        "tests/a.py::short",
        "tests/c.py::unknown",  # not measured: counts as short
    ]
    unchanged = [_Item(i) for i in ids]
    scheduling.order(_Config(units=False), unchanged)  # type: ignore[arg-type]
    assert [i.nodeid for i in unchanged] == ids
