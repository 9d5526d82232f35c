"""The report in a real browser: headless Chromium driven by selenium.

Skips cleanly without Chromium and chromedriver (Debian: ``apt-get install
chromium chromium-driver``). Nothing leaves the machine: the page is a local
file with no external references, and Chromium runs with background
networking, sync and component updates off.

The screenshot goes to the test's tmp dir; ``docs/report-screenshot.png`` (the
README's picture) is written when it is missing or when
``TOURNEY_UPDATE_SCREENSHOT=1`` is set, so ordinary test runs leave the
working tree alone.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from runner.report.html import render_report
from runner.report.model import ReportData
from tests.report.browser import headless_chromium

# a real headless Chromium, seconds a test: the full suite only (make test)
pytestmark = pytest.mark.integration

PROJECT = Path(__file__).resolve().parents[2]
DOCS_SHOT = PROJECT / "docs" / "report-screenshot.png"


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with headless_chromium(tmp_path_factory.mktemp("chromium-profile")) as d:
        yield d


def board_cells(d: Any) -> list[str]:
    cells: list[str] = d.execute_script(
        "return Array.from(document.querySelectorAll('.viewer .board .cell'))"
        ".map(c => c.className + '|' + c.textContent)"
    )
    return cells


def test_standings_render_and_a_replay_steps(driver: Any, potm_data: ReportData, tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    page = tmp_path / "report.html"
    page.write_text(render_report(potm_data))
    driver.get(page.as_uri())
    # chromedriver can return before a local file is fully parsed: wait for the end of the page
    WebDriverWait(driver, 30).until(
        lambda d: (
            d.execute_script("return document.readyState") == "complete"
            and d.find_elements(By.CSS_SELECTOR, "footer")
        )
    )

    # standings rendered: every stage's table shows its leader's row
    tables = driver.find_elements(By.CSS_SELECTOR, "table.standings")
    assert len(tables) == len(potm_data.stages)
    for table, stage in zip(tables, potm_data.stages, strict=True):
        first = table.find_elements(By.CSS_SELECTOR, "tbody tr")[0].text
        r = stage.standings[0]
        assert first.startswith(f"1 {r.entry} {r.games} {r.wins} {r.ties} {r.losses}"), first
    assert "Final ranking" in driver.find_element(By.ID, "final").text

    # open a replay in the final stage and step it
    final = potm_data.stage_matches("final")[0]
    button = driver.find_element(By.CSS_SELECTOR, f'#m-{final.match_id} button.open-replay[data-key$=":1"]')
    driver.execute_script(
        "arguments[0].closest('details.matches').open = true;"
        "arguments[0].closest('details.match').open = true;"
        "arguments[0].scrollIntoView({block: 'center'});",
        button,
    )
    button.click()
    viewer = driver.find_element(By.CSS_SELECTOR, f"#m-{final.match_id} .viewer")
    start = board_cells(driver)
    game = final.games[0]
    arena = potm_data.boards[final.board_id].splitlines()
    assert len(start) == len(arena) * len(arena[0])  # one cell per arena square
    assert sum(c.startswith("cell k-blocked|o") for c in start) == sum(r.count("o") for r in arena)
    assert not any("k-seat" in c for c in start)
    assert viewer.find_element(By.CSS_SELECTOR, ".info").text.startswith("Start position")

    viewer.find_element(By.CSS_SELECTOR, "button.next").click()
    after = board_cells(driver)
    assert after != start
    first_move = game.moves[0]
    info = viewer.find_element(By.CSS_SELECTOR, ".info").text
    assert (
        info.startswith(f"Move 1 / {len(game.moves)}")
        and first_move.move in info
        and first_move.player in info
    )
    size = int(first_move.move.split()[2])  # boxing: "x y size"
    assert sum(c.startswith("cell k-seat0") for c in after) == size * size  # A's first box

    for _ in range(4):
        viewer.find_element(By.CSS_SELECTOR, "button.next").click()
    assert not viewer.find_element(By.CSS_SELECTOR, ".end").is_displayed()
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", viewer)
    shot = tmp_path / "report-screenshot.png"
    assert driver.save_screenshot(str(shot))
    assert shot.stat().st_size > 10_000
    if not DOCS_SHOT.exists() or os.environ.get("TOURNEY_UPDATE_SCREENSHOT") == "1":
        DOCS_SHOT.parent.mkdir(exist_ok=True)
        shutil.copyfile(shot, DOCS_SHOT)

    # the last position shows the verdict; "first" goes back to the empty board
    viewer.find_element(By.CSS_SELECTOR, "button.last").click()
    end = viewer.find_element(By.CSS_SELECTOR, ".end")
    assert end.is_displayed() and end.text.startswith("Result: ")
    viewer.find_element(By.CSS_SELECTOR, "button.first").click()
    assert board_cells(driver) == start
