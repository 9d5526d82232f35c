"""A large run's report: a small page plus data files loaded on demand (``runner.report.site``).

The run is a real run directory (``bench.report_run``: store, frozen config,
``resolved.json``) of 1,275 matches, written by ``tourney report``; the page is
opened from ``file://`` in headless Chromium, as someone would open it from
the run directory, offline. The 50,000-match case and its timing are in
``make bench-report`` (``bench/report_bench.py``), not here.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bench.report_run import make_run
from runner.cli import main
from runner.report.loader import load_report_data
from runner.report.model import ReportData
from runner.report.site import MARKER, PAGE_SIZE, SPLIT_ABOVE_MATCHES, data_dir_for, write_html_report
from tests.report.browser import headless_chromium

#: a 1,275-match run, reported and opened in a browser: the full suite's job, not the fast lane's
pytestmark = pytest.mark.integration

ENTRIES, BOARDS, CUP = 36, 2, 16
LEAGUE = ENTRIES * (ENTRIES - 1) // 2 * BOARDS  # 1,260 matches: 13 pages
#: the page's elements with every stage's list closed: independent of the number of matches
MAX_ELEMENTS = 6_000


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    rd = tmp_path_factory.mktemp("scale") / "scale-run"
    assert make_run(rd, entries=ENTRIES, boards=BOARDS, cup=CUP) == LEAGUE + CUP - 1
    assert main(["report", str(rd)]) == 0
    return rd


@pytest.fixture(scope="module")
def data(run: Path) -> ReportData:
    return load_report_data(run)


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with headless_chromium(tmp_path_factory.mktemp("chromium-profile")) as d:
        yield d


def test_a_large_run_gets_a_small_page_and_data_files(run: Path, data: ReportData) -> None:
    page = (run / "report.html").read_text()
    files = {p.name for p in (run / "report-data").iterdir()}
    assert len(data.matches) > SPLIT_ABOVE_MATCHES
    # the generated run reads back as a finished run: every match done, by the store's own record
    assert data.tournament.finished and all(m.state == "done" and m.attempt == 1 for m in data.matches)
    assert data.meta["run_id"] == "synthetic-1" and data.meta["finished"]
    assert '<details class="match"' not in page  # no match row in the page itself
    assert "http://" not in page and "https://" not in page  # offline: data comes from report-data/
    assert len(page) < 200_000
    league_pages = -(-LEAGUE // PAGE_SIZE)
    assert {f"matches-0-{p}.js" for p in range(1, league_pages + 1)} <= files
    assert {"matches-1-1.js", "index-0.js", "index-1.js", MARKER} <= files
    # every match is on exactly one page, in plan order
    ids = []
    for p in range(1, league_pages + 1):
        ids += re.findall(r'id=\\"m-([0-9a-f]+)\\"', (run / "report-data" / f"matches-0-{p}.js").read_text())
    assert ids == [m.match_id for m in data.stage_matches("league")]


def test_rewriting_keeps_layouts_apart(pousse_data: ReportData, tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    assert len(pousse_data.stage_matches("seeding")) == 15  # stage 0: 4 pages of 4, or 10 and 5
    write_html_report(pousse_data, out, layout="split", page_size=4)
    assert len(list(data_dir_for(out).glob("matches-0-*.js"))) == 4
    write_html_report(pousse_data, out, layout="split", page_size=10)  # replaced, not mixed
    assert sorted(p.name for p in data_dir_for(out).glob("matches-0-*.js")) == [
        "matches-0-1.js",
        "matches-0-2.js",
    ]
    assert [p.name for p in tmp_path.iterdir() if ".new-" in p.name or ".old-" in p.name] == []
    write_html_report(pousse_data, out)  # a small run: one page, and the stale directory goes
    assert not data_dir_for(out).exists()
    assert '<details class="match"' in out.read_text()
    # a directory that is not a report's data is never replaced or removed
    foreign = data_dir_for(out)
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError):
        write_html_report(pousse_data, out, layout="split")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r-data", "r.html"]  # no half-written data left
    write_html_report(pousse_data, out, layout="single")
    assert (foreign / "notes.txt").read_text() == "mine"


def _open(driver: Any, page: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(page.as_uri())
    WebDriverWait(driver, 30).until(
        lambda d: (
            d.execute_script("return document.readyState") == "complete"
            and d.find_elements(By.CSS_SELECTOR, "footer")
        )
    )


def _elements(driver: Any) -> int:
    n: int = driver.execute_script("return document.getElementsByTagName('*').length")
    return n


def _wait_rows(driver: Any, box: Any, first_id: str) -> list[str]:
    """The ids of the match rows shown in ``box`` once its page starting with ``first_id`` is in."""
    from selenium.webdriver.support.ui import WebDriverWait

    script = "return Array.from(arguments[0].querySelectorAll('.match-page > details.match')).map(d => d.id)"
    WebDriverWait(driver, 10).until(lambda d: (d.execute_script(script, box) or [""])[0] == f"m-{first_id}")
    ids: list[str] = driver.execute_script(script, box)
    return ids


def test_the_page_shows_standings_and_bracket_and_loads_matches_on_demand(
    driver: Any, run: Path, data: ReportData
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    _open(driver, run / "report.html")
    assert _elements(driver) < MAX_ELEMENTS
    assert not driver.find_elements(By.CSS_SELECTOR, "details.match")  # nothing loaded yet

    # standings: both stages' tables, leaders first, visible
    tables = driver.find_elements(By.CSS_SELECTOR, "table.standings")
    assert len(tables) == 2 and all(t.is_displayed() for t in tables)
    for table, stage in zip(tables, data.stages, strict=True):
        assert table.find_elements(By.CSS_SELECTOR, "tbody tr")[0].text.startswith(
            f"1 {stage.standings[0].entry} "
        )
        assert len(table.find_elements(By.CSS_SELECTOR, "tbody tr")) == len(stage.standings)
    # the cup's bracket: one box per match, visible
    cup = data.stage_matches("cup")
    boxes = driver.find_elements(By.CSS_SELECTOR, "section#stage-cup .bracket a.mbox")
    assert len(boxes) == len(cup) == CUP - 1 and boxes[0].is_displayed()

    # the league's match list: opening it loads page 1, the pager the next one
    league = data.stage_matches("league")
    box = driver.find_element(By.CSS_SELECTOR, "section#stage-league details.matches")
    box.find_element(By.TAG_NAME, "summary").click()
    assert _wait_rows(driver, box, league[0].match_id) == [f"m-{m.match_id}" for m in league[:PAGE_SIZE]]
    box.find_element(By.CSS_SELECTOR, ".pager .page-next").click()
    page2 = _wait_rows(driver, box, league[PAGE_SIZE].match_id)
    assert page2 == [f"m-{m.match_id}" for m in league[PAGE_SIZE : 2 * PAGE_SIZE]]
    box.find_element(By.CSS_SELECTOR, ".pager .page-last").click()
    last = (LEAGUE - 1) // PAGE_SIZE * PAGE_SIZE
    assert _wait_rows(driver, box, league[last].match_id) == [f"m-{m.match_id}" for m in league[last:]]
    assert _elements(driver) < MAX_ELEMENTS + PAGE_SIZE * 60  # one page of rows, not the stage

    # a replay loads on click: the board of the match's first game, then its first move
    match = league[last]
    row = driver.find_element(By.ID, f"m-{match.match_id}")
    driver.execute_script("arguments[0].open = true; arguments[0].scrollIntoView({block: 'center'});", row)
    row.find_element(By.CSS_SELECTOR, f'button.open-replay[data-key="{match.match_id}:1"]').click()
    viewer = WebDriverWait(driver, 10).until(
        lambda d: d.find_elements(By.CSS_SELECTOR, f"#m-{match.match_id} .viewer .board")
    )[0]
    width, height = (int(x) for x in data.boards[match.board_id].split()[:2])
    assert len(viewer.find_elements(By.CSS_SELECTOR, ".cell")) == width * height
    driver.find_element(By.CSS_SELECTOR, f"#m-{match.match_id} .viewer button.next").click()
    info = driver.find_element(By.CSS_SELECTOR, f"#m-{match.match_id} .viewer .info").text
    first = match.games[0].moves[0]
    assert info.startswith(f"Move 1 / {len(match.games[0].moves)}") and first.move in info

    # a bracket box opens its match in the cup's list
    final = cup[-1]
    driver.find_element(By.CSS_SELECTOR, f'section#stage-cup a.mbox[href="#m-{final.match_id}"]').click()
    opened = WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, f"m-{final.match_id}"))[0]
    assert opened.get_attribute("open") is not None and opened.is_displayed()

    # the search box looks through every page; a hit opens its page at the match
    target = league[7 * PAGE_SIZE + 3]
    search = box.find_element(By.CSS_SELECTOR, "input.filter")
    driver.execute_script("arguments[0].scrollIntoView({block: 'center'});", search)
    search.send_keys(target.match_id[:10])
    hit = WebDriverWait(driver, 10).until(
        lambda d: box.find_elements(By.CSS_SELECTOR, ".filter-results a.hit")
    )
    assert len(hit) == 1 and " vs ".join(target.players) in hit[0].text
    hit[0].click()
    assert f"m-{target.match_id}" in _wait_rows(driver, box, league[7 * PAGE_SIZE].match_id)
    assert driver.find_element(By.ID, f"m-{target.match_id}").get_attribute("open") is not None


def test_a_link_to_a_match_opens_its_page(driver: Any, run: Path, data: ReportData) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    target = data.stage_matches("league")[5 * PAGE_SIZE + 42]
    driver.get((run / "report.html").as_uri() + f"#m-{target.match_id}")
    row = WebDriverWait(driver, 20).until(lambda d: d.find_elements(By.ID, f"m-{target.match_id}"))[0]
    assert row.get_attribute("open") is not None and row.is_displayed()


def test_a_large_field_shows_its_first_standings_and_final_rows_and_the_rest_on_demand(
    driver: Any, data: ReportData, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    out = tmp_path / "report.html"
    write_html_report(data, out, layout="split", standings_rows=10)
    _open(driver, out)
    league = data.stage("league")
    assert league is not None
    table = driver.find_element(By.CSS_SELECTOR, "section#stage-league table.standings")
    rows = table.find_elements(By.CSS_SELECTOR, "tbody tr")
    assert [r.text.split()[1] for r in rows] == [r.entry for r in league.standings[:10]]
    table.find_element(By.CSS_SELECTOR, "button.more-standings").click()
    WebDriverWait(driver, 10).until(
        lambda d: len(table.find_elements(By.CSS_SELECTOR, "tbody tr")) == len(league.standings)
    )
    assert not table.find_elements(By.CSS_SELECTOR, "tfoot")
    last = table.find_elements(By.CSS_SELECTOR, "tbody tr")[-1].text
    assert last.split()[1] == league.standings[-1].entry

    # the final ranking likewise: its first rows, then every place
    places = data.tournament.final_places
    final = driver.find_element(By.CSS_SELECTOR, "table.final-ranking")
    assert [r.text.split()[1] for r in final.find_elements(By.CSS_SELECTOR, "tbody tr")] == [
        p.entry for p in places[:10]
    ]
    final.find_element(By.CSS_SELECTOR, "button.more-final").click()
    WebDriverWait(driver, 10).until(
        lambda d: len(final.find_elements(By.CSS_SELECTOR, "tbody tr")) == len(places)
    )
    assert final.find_elements(By.CSS_SELECTOR, "tbody tr")[-1].text.split()[1] == places[-1].entry


def test_a_large_bracket_draws_its_last_rounds_and_the_rest_on_demand(
    driver: Any, data: ReportData, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    out = tmp_path / "report.html"
    write_html_report(data, out, layout="split", bracket_boxes=7)  # the cup: rounds of 8, 4, 2, 1
    _open(driver, out)
    heads = "section#stage-cup .bracket .round-head"
    assert [h.text for h in driver.find_elements(By.CSS_SELECTOR, heads)] == ["Round 2", "Round 3", "Round 4"]
    assert len(driver.find_elements(By.CSS_SELECTOR, "section#stage-cup .bracket a.mbox")) == 7
    driver.find_element(By.CSS_SELECTOR, "section#stage-cup button.more-bracket").click()
    WebDriverWait(driver, 10).until(lambda d: len(d.find_elements(By.CSS_SELECTOR, heads)) == 4)
    boxes = driver.find_elements(By.CSS_SELECTOR, "section#stage-cup .bracket a.mbox")
    assert len(boxes) == CUP - 1 and not driver.find_elements(By.CSS_SELECTOR, "button.more-bracket")
    # a box of the loaded rounds still opens its match
    first = data.stage_matches("cup")[0]
    driver.find_element(By.CSS_SELECTOR, f'section#stage-cup a.mbox[href="#m-{first.match_id}"]').click()
    row = WebDriverWait(driver, 10).until(lambda d: d.find_elements(By.ID, f"m-{first.match_id}"))[0]
    assert row.get_attribute("open") is not None


def test_the_command_can_force_either_layout(run: Path, tmp_path: Path) -> None:
    single, split = tmp_path / "one.html", tmp_path / "two.html"
    assert main(["report", str(run), "--html", str(single), "--layout", "single"]) == 0
    assert main(["report", str(run), "--html", str(split), "--layout", "split"]) == 0
    assert not data_dir_for(single).exists() and '<details class="match"' in single.read_text()
    assert (data_dir_for(split) / "matches-0-1.js").is_file()
