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
from tests.report.synth import boxing_permutations, mnk_knockout, pousse_tournament
from tests.report.test_browser_links import NARROW, open_page, page_fits, wait_for

# a real headless Chromium, seconds a test: the full suite only (make test)
pytestmark = pytest.mark.integration

LOOKAHEADS = ("lookahead-defensive", "lookahead-attacking", "lookahead-f2", "lookahead")
LOOKAHEADS_6 = (*LOOKAHEADS, "lookahead-quick", "lookahead-deep")


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


#: every table the page shows, as the reader meets it at 390 px: whether it scrolls in a box of
#: its own inside the window, its links and buttons (each reachable by scrolling that box; a
#: game's ▶ replay on screen without scrolling it), and its rows more than a line high
TABLES_AT_390 = """
var out = [];
document.querySelectorAll('table').forEach(function (t) {
  if (!t.offsetParent) { return; }  /* in a closed <details> */
  var box = t.parentElement, b = box.getBoundingClientRect();
  var lh = parseFloat(getComputedStyle(t).lineHeight), overflow = getComputedStyle(box).overflowX;
  var rec = {table: t.className, box: box.className, scrolls: overflow === 'auto' || overflow === 'scroll',
             inWindow: b.left >= 0 && b.right <= document.documentElement.clientWidth + 1,
             scrollLeft: box.scrollLeft, links: [], tall: []};
  t.querySelectorAll('tr').forEach(function (tr) {
    if (!tr.querySelector('br, td:last-child > code') && tr.getBoundingClientRect().height > 2 * lh + 10) {
      rec.tall.push(tr.textContent.trim().slice(0, 60));
    }
  });
  t.querySelectorAll('a, button').forEach(function (a) {
    var r = a.getBoundingClientRect();
    rec.links.push({text: a.textContent.trim(), replay: a.matches('button.open-replay, a.to-replay'),
                    reachable: r.right - b.left + box.scrollLeft <= box.scrollWidth + 1,
                    onScreen: r.left >= b.left - 1 && r.right <= Math.min(b.right, window.innerWidth) + 1});
  });
  out.push(rec);
});
return out;
"""


def tables_at_390(d: Any) -> list[dict[str, Any]]:
    tables: list[dict[str, Any]] = d.execute_script(TABLES_AT_390)
    return tables


def table_problems(tables: list[dict[str, Any]]) -> list[str]:
    """What a reader at 390 px would trip on, table by table (nothing: an empty list)."""
    problems = []
    for t in tables:
        where = f"table.{t['table'] or '(no class)'}"
        if not (t["box"] == "scroll-x" and t["scrolls"] and t["inWindow"] and t["scrollLeft"] == 0):
            problems.append(f"{where} does not scroll in a box of its own inside the window: {t}")
        if t["tall"]:
            problems.append(f"{where}: {len(t['tall'])} rows wrapped onto more lines, e.g. {t['tall'][0]!r}")
        unreachable = [a["text"] for a in t["links"] if not a["reachable"]]
        if unreachable:
            problems.append(f"{where}: links beyond the box's scroll width: {unreachable}")
        hidden = [a["text"] for a in t["links"] if a["replay"] and not a["onScreen"]]
        if hidden:
            problems.append(f"{where}: {len(hidden)} ▶ replay off screen")
    return problems


@pytest.mark.parametrize("layout", ["single", "split"])
def test_tables_scroll_in_their_own_box_and_keep_replay_on_screen_at_390px(
    driver: Any, tmp_path: Path, layout: str
) -> None:
    from selenium.webdriver.common.by import By

    # round robin, a two-bracket elimination and a final among six lookaheads (names up to 19
    # characters, games tables about 700 px wide)
    data = pousse_tournament(entries=LOOKAHEADS_6)
    page = tmp_path / "report.html"
    write_html_report(data, page, layout=layout, page_size=10)  # type: ignore[arg-type]
    open_page(driver, page.as_uri())
    # every match list open (a split report loads each list's first page when opened) and an
    # entry's panel (a split report reads it when its name is clicked)
    driver.execute_script("document.querySelectorAll('details.matches').forEach(d => { d.open = true; });")
    wait_for(
        driver,
        "return Array.from(document.querySelectorAll('details.matches'))"
        ".every(d => d.querySelector('details.match'));",
    )
    driver.execute_script("document.querySelectorAll('details.match').forEach(d => { d.open = true; });")
    name = driver.find_element(By.CSS_SELECTOR, "section.stage table.standings a.entry-link")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", name)
    name.click()
    wait_for(driver, "return document.querySelector('details.entry[open] table.entry-games');")

    tables = tables_at_390(driver)
    kinds = {t["table"] for t in tables}
    assert {"standings sortable", "final-ranking", "games", "entry-games", "stages-summary"} <= kinds, kinds
    assert table_problems(tables) == []
    # every game row of the match lists and the entry's panel has its ▶ replay (all embedded here)
    game_rows = driver.execute_script(
        "return document.querySelectorAll('table.games tr:has(td), table.entry-games tr:has(td)').length"
    )
    assert sum(a["replay"] for t in tables for a in t["links"]) == game_rows > 0
    # the knockout rounds (the bracket diagram) scroll in their own box too, every match's box
    # within its scroll width
    brackets = driver.execute_script(
        "return Array.from(document.querySelectorAll('.bracket')).map(function (box) {"
        "  var b = box.getBoundingClientRect();"
        "  return [b.left >= 0 && b.right <= document.documentElement.clientWidth + 1,"
        "          getComputedStyle(box).overflowX, box.querySelectorAll('a.mbox').length,"
        "          Array.from(box.querySelectorAll('a.mbox')).every(a =>"
        "            a.getBoundingClientRect().right - b.left + box.scrollLeft <= box.scrollWidth + 1)];"
        "});"
    )
    assert [b[:2] for b in brackets] == [[True, "auto"]], brackets  # the elimination stage's
    assert brackets[0][2] == len(data.stage_matches("elimination")) and brackets[0][3], brackets
    assert page_fits(driver)

    # a real click (refused if anything covers the button) opens the replay, and the page still
    # does not scroll sideways
    for selector in ("details.entry[open] table.entry-games a.to-replay", "table.games button.open-replay"):
        link = driver.find_elements(By.CSS_SELECTOR, selector)[-1]
        key = link.get_attribute("data-key")
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", link)
        link.click()
        wait_for(driver, "return document.querySelector('.viewer[data-key=\"' + arguments[0] + '\"]');", key)
        assert page_fits(driver), selector


def test_match_and_entry_names_move_to_the_next_line_whole_at_390px(driver: Any, tmp_path: Path) -> None:
    data = pousse_tournament(entries=LOOKAHEADS_6)
    _open(driver, data, tmp_path)
    driver.execute_script("document.querySelectorAll('details').forEach(d => { d.open = true; });")
    # each name in a match's summary line and an entry panel's heading is on one line
    split: list[str] = driver.execute_script(
        "return Array.from(document.querySelectorAll("
        "'details.match > summary .nm, details.entry > summary > b'))"
        ".filter(s => s.getClientRects().length > 1).map(s => s.textContent)"
    )
    assert split == []
    assert driver.execute_script(
        "return document.querySelectorAll('details.match > summary .nm').length"
    ) == 2 * len(data.matches)
    assert page_fits(driver)
