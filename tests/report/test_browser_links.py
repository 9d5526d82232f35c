"""The report's links into itself and its narrow-screen layout, in headless Chromium
(docs/config.md, "The HTML report"): an entry's name in the standings opens its panel with
every game it played; ``#m-ID`` opens that match on load and on hashchange; at 390 px the
page never scrolls sideways (a wide table scrolls inside its own box). Both layouts: the
single page, and the split one whose matches and entry panels are data files.

Skips cleanly without Chromium and chromedriver (tests/report/browser.py).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.report.entry_view import entrant_of, entry_anchor
from runner.report.model import ReportData
from runner.report.site import write_html_report
from tests.report.browser import headless_chromium

# a real headless Chromium, seconds a test: the full suite only (make test)
pytestmark = pytest.mark.integration

WIDE, NARROW = (1280, 900), (390, 844)


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with headless_chromium(tmp_path_factory.mktemp("chromium-profile")) as d:
        yield d


def open_page(d: Any, url: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    d.get("about:blank")  # a new document even when only the hash differs
    d.get(url)
    WebDriverWait(d, 30).until(
        lambda d: (
            d.execute_script("return document.readyState") == "complete"
            and d.find_elements(By.CSS_SELECTOR, "footer")
        )
    )


def wait_for(d: Any, script: str, *args: Any) -> Any:
    """Until ``script`` returns something truthy (a split report loads its data files)."""
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(d, 20).until(lambda d: d.execute_script(script, *args))


def in_view(d: Any, element_id: str) -> bool:
    """``element_id`` is open (a <details>), rendered, and its top is inside the window."""
    ok: bool = d.execute_script(
        "var e = document.getElementById(arguments[0]); if (!e || !e.open) { return false; }"
        "var r = e.getBoundingClientRect();"
        "return r.height > 0 && r.top >= 0 && r.top < window.innerHeight;",
        element_id,
    )
    return ok


def page_fits(d: Any) -> bool:
    fits: bool = d.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    return fits


def expected_games(data: ReportData, entry: str) -> list[list[str]]:
    return [[m.match_id, str(k)] for m, k, g in data.games() for seat in g.order if entrant_of(seat) == entry]


@pytest.mark.parametrize("layout", ["single", "split"])
def test_entry_panel_match_links_and_narrow_screen(
    driver: Any, potm_data: ReportData, tmp_path: Path, layout: str
) -> None:
    from selenium.webdriver.common.by import By

    page = tmp_path / "report.html"
    write_html_report(potm_data, page, layout=layout, page_size=10)  # type: ignore[arg-type]
    seeding = potm_data.stage_matches("seeding")
    assert len(seeding) > 12  # its match list starts closed: the link must open it
    entry = potm_data.entries[4]
    anchor = entry_anchor(entry)
    want = expected_games(potm_data, entry)
    assert len(want) > 10

    for size in (WIDE, NARROW):
        driver.set_window_size(*size)
        open_page(driver, page.as_uri())

        # the entry's name in the seeding standings opens its panel with all its games
        link = driver.find_element(
            By.CSS_SELECTOR, f'section.stage table.standings a.entry-link[href="#{anchor}"]'
        )
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", link)
        link.click()
        wait_for(driver, "return document.getElementById(arguments[0]);", anchor)
        panel = driver.find_element(By.ID, anchor)
        assert in_view(driver, anchor)
        rows = panel.find_elements(By.CSS_SELECTOR, "table.entry-games tr[data-match]")
        shown = [[r.get_attribute("data-match"), r.find_elements(By.TAG_NAME, "td")[3].text] for r in rows]
        assert shown == want
        outcomes = [r.find_elements(By.TAG_NAME, "td")[5].text for r in rows]
        games = [g for m, k, g in potm_data.games() if any(entrant_of(s) == entry for s in g.order)]
        assert outcomes == [
            "draw" if g.winner is None else ("won" if entrant_of(g.winner) == entry else "lost")
            for g in games
        ]

        # its replay link opens that game's viewer in the match
        replay = panel.find_element(By.CSS_SELECTOR, "a.to-replay")
        key = replay.get_attribute("data-key")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", replay)
        replay.click()
        match_id = key.rsplit(":", 1)[0]
        wait_for(driver, "return document.querySelector('.viewer[data-key=\"' + arguments[0] + '\"]');", key)
        assert in_view(driver, f"m-{match_id}")
        assert page_fits(driver), f"page scrolls sideways at {size} with a replay open"

        # #m-ID on load: a match deep in the closed seeding list is opened and scrolled to
        deep = seeding[-3].match_id
        open_page(driver, f"{page.as_uri()}#m-{deep}")
        wait_for(driver, "return document.getElementById(arguments[0]);", f"m-{deep}")
        wait_for(driver, "var e = document.getElementById(arguments[0]); return e && e.open;", f"m-{deep}")
        assert in_view(driver, f"m-{deep}")
        # ... and on hashchange
        other = seeding[1].match_id
        driver.execute_script("location.hash = arguments[0];", f"#m-{other}")
        wait_for(driver, "var e = document.getElementById(arguments[0]); return e && e.open;", f"m-{other}")
        assert in_view(driver, f"m-{other}")
        assert page_fits(driver), f"page scrolls sideways at {size}"

    # at 390 px the wide tables scroll inside their own boxes, and the page does not
    boxed = driver.execute_script(
        "return Array.from(document.querySelectorAll('.scroll-x'))"
        ".filter(b => b.offsetParent && b.scrollWidth > b.clientWidth).length"
    )
    assert boxed > 0
    assert page_fits(driver)
    unboxed = driver.execute_script(
        "return Array.from(document.querySelectorAll('table'))"
        ".filter(t => !t.parentElement.classList.contains('scroll-x')).length"
    )
    assert unboxed == 0
