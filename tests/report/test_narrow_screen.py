"""The report on a 390 px phone screen, in headless Chromium (issue 38, item 5): the bracket
shows every entry's name whole and distinct (three names were all "lookahea…"), a link's
target is not hidden under the sticky navigation, and a 32-column boxing board can be
scrolled to its last column.

Skips cleanly without Chromium and chromedriver (tests/report/browser.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.report.model import ReportData
from runner.report.site import write_html_report
from tests.report.browser import headless_chromium
from tests.report.synth import boxing_permutations, mnk_knockout
from tests.report.test_browser_links import NARROW, open_page, page_fits, wait_for

LOOKAHEADS = ("lookahead-defensive", "lookahead-attacking", "lookahead-f2", "lookahead")


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with headless_chromium(tmp_path_factory.mktemp("chromium-profile")) as d:
        d.set_window_size(*NARROW)
        yield d


def _open(d: Any, data: ReportData, tmp_path: Path, fragment: str = "") -> None:
    page = tmp_path / "report.html"
    write_html_report(data, page)
    open_page(d, page.as_uri() + fragment)


def below_the_nav(d: Any, element_id: str) -> bool:
    """``element_id``'s top is in the window and not under the sticky navigation."""
    ok: bool = d.execute_script(
        "var e = document.getElementById(arguments[0]), n = document.querySelector('nav');"
        "if (!e) { return false; } var r = e.getBoundingClientRect();"
        "return r.height > 0 && r.top >= n.getBoundingClientRect().bottom - 1 && r.top < window.innerHeight;",
        element_id,
    )
    return ok


def test_bracket_names_are_whole_and_distinct_at_390px(driver: Any, tmp_path: Path) -> None:
    data = mnk_knockout(names=LOOKAHEADS)
    _open(driver, data, tmp_path)
    names: list[list[Any]] = driver.execute_script(
        "return Array.from(document.querySelectorAll('.mbox .pl > span:first-child'))"
        ".map(s => [s.textContent.trim(), s.scrollWidth <= s.clientWidth + 1, s.clientWidth])"
    )
    assert len(names) == 6  # two first-round matches and the final, two players each
    cut = [n for n, whole, _ in names if not whole]
    assert cut == [], f"names cut: {cut}"
    shown = {n for n, _, _ in names}
    assert all(any(name in text for text in shown) for name in LOOKAHEADS), shown
    assert not any("…" in text for text in shown)
    assert page_fits(driver)


def test_link_targets_stop_below_the_sticky_nav_at_390px(
    driver: Any, potm_data: ReportData, tmp_path: Path
) -> None:
    # the navigation is one line high, whatever its number of links (it scrolls sideways)
    page = tmp_path / "report.html"
    write_html_report(potm_data, page)
    open_page(driver, page.as_uri())
    nav_h, line_h = driver.execute_script(
        "var n = document.querySelector('nav'), a = n.querySelector('a');"
        "return [n.getBoundingClientRect().height, a.getBoundingClientRect().height];"
    )
    assert nav_h < 3 * line_h, (nav_h, line_h)
    # every stage's link from the nav, and a match deep in a list, land below the nav
    stage_links: list[str] = driver.execute_script(
        "return Array.from(document.querySelectorAll('nav a[href^=\"#\"]')).map(a => a.getAttribute('href'))"
    )
    assert len(stage_links) >= 3
    for href in stage_links:
        driver.execute_script("location.hash = arguments[0];", href)
        wait_for(driver, "return document.getElementById(arguments[0]);", href[1:])
        assert below_the_nav(driver, href[1:]), href
    deep = potm_data.stage_matches("seeding")[-3].match_id
    open_page(driver, f"{page.as_uri()}#m-{deep}")
    wait_for(driver, "var e = document.getElementById(arguments[0]); return e && e.open;", f"m-{deep}")
    assert below_the_nav(driver, f"m-{deep}")


def test_a_32_column_boxing_board_scrolls_to_its_last_column_at_390px(driver: Any, tmp_path: Path) -> None:
    data = boxing_permutations(width=32, height=16)
    m = data.matches[0]
    _open(driver, data, tmp_path, f"#m-{m.match_id}")
    wait_for(driver, "var e = document.getElementById(arguments[0]); return e && e.open;", f"m-{m.match_id}")
    opener = driver.execute_script(
        "return document.querySelector('#m-' + arguments[0] + ' button.open-replay');", m.match_id
    )
    driver.execute_script("arguments[0].click();", opener)
    wait_for(driver, "return document.querySelector('.viewer .board .cell');")
    # the board keeps its 32 columns; its last column can be scrolled into the window
    reach = driver.execute_script(
        "var b = document.querySelector('.viewer .board'), cells = b.querySelectorAll('.cell');"
        "var last = cells[31]; last.scrollIntoView({inline: 'end', block: 'nearest'});"
        "var r = last.getBoundingClientRect();"
        "return [getComputedStyle(b).gridTemplateColumns.split(' ').length, r.right <= window.innerWidth + 1,"
        " r.left >= 0, r.width > 4];"
    )
    assert reach == [32, True, True, True], reach
    assert page_fits(driver)
