"""The submission pages in a real browser: headless Chromium (selenium + chromedriver, as the
report's browser test) signs in, uploads through the form, watches the version's page reach
"ready", finds the team on the status board, and sees the first compiler error of an upload
that does not compile (docs/submissions.md, "How to submit").

A real ``tourney serve`` with its embedded Redis and a real worker building and playing the
checks in the sandbox; the browser talks to it over loopback only.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.integration.conftest import bwrap_problem
from tests.integration.submission_server import GOOD, README, Server, serving, targz
from tests.report.browser import headless_chromium

pytestmark = pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}")

#: a check is a build and one smoke game on a loaded shared machine
CHECK_S = 180

DOES_NOT_COMPILE = {
    "runme": (b"#!/bin/sh\nexec ./a.out\n", 0o755),
    "readme": (README, 0o644),
    "src/main.c": (b"int main(void) {\n  return undefined_thing;\n}\n", 0o644),
    "src/Makefile": (b"all:\n\tcc -o ../a.out main.c\n", 0o644),
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    with serving(tmp_path_factory.mktemp("serve-browser")) as served:
        yield served


@pytest.fixture(scope="module")
def driver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with headless_chromium(tmp_path_factory.mktemp("chromium-profile")) as d:
        yield d


def _upload_through_the_form(driver: Any, server: Server, archive: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(f"{server.url}/team")
    driver.find_element(By.ID, "file").send_keys(str(archive))
    driver.find_element(By.ID, "upload").click()
    # the post is answered once the upload is stored and unpacked: on a loaded machine, later
    # than the click returns
    WebDriverWait(driver, 60).until(lambda d: d.current_url != f"{server.url}/team")


def _state_when_settled(driver: Any) -> str:
    """The version page's state once its checks are done (the page refreshes itself meanwhile)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    def settled(d: Any) -> str | bool:
        try:
            text: str = d.find_element(By.ID, "state").text
        except Exception:  # the page is being reloaded by its refresh
            return False
        return text if not text.startswith("checking") else False

    return str(WebDriverWait(driver, CHECK_S, poll_frequency=0.5).until(settled))


def test_a_contestant_uploads_through_the_form_and_sees_each_check(
    driver: Any, server: Server, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    token = server.team("webteam")
    driver.get(f"{server.url}/login")
    driver.find_element(By.ID, "token").send_keys(token)
    driver.find_element(By.ID, "signin").click()
    # the click returns as the form is sent, not always once its answer has loaded (under load)
    WebDriverWait(driver, 30).until(lambda d: d.current_url != f"{server.url}/login")
    assert driver.current_url == f"{server.url}/team", driver.find_element(By.TAG_NAME, "body").text
    assert "No version yet." in driver.find_element(By.ID, "versions").text
    clock = driver.find_element(By.ID, "clock").text
    assert "Deadline 2099-01-01T00:00:00+00:00" in clock and "left" in clock

    good = tmp_path / "good.tar.gz"
    good.write_bytes(targz(GOOD))
    _upload_through_the_form(driver, server, good)
    assert driver.current_url == f"{server.url}/team/v/1"
    state = _state_when_settled(driver)
    assert state.startswith("ready") and "this version counts" in state, state
    steps = {
        row.get_attribute("data-step"): row.get_attribute("data-status")
        for row in driver.find_elements(By.CSS_SELECTOR, "#steps tbody tr")
    }
    assert steps == {s: "ok" for s in ("received", "unpacked", "layout", "built", "smoke", "ready")}, steps
    moves = driver.find_elements(By.CSS_SELECTOR, "#replay tbody tr")
    assert moves and "webteam" in moves[0].text  # the team moves first in its smoke game

    driver.find_element(By.LINK_TEXT, "status board").click()
    row = driver.find_element(By.CSS_SELECTOR, 'tr[data-team="webteam"]')
    assert row.find_elements(By.TAG_NAME, "td")[1].text == "1"
    assert row.find_elements(By.TAG_NAME, "td")[3].text == "v1 ready"
    assert "webteam@example.org" not in driver.page_source  # the board never shows an email

    bad = tmp_path / "bad.tar.gz"
    bad.write_bytes(targz(DOES_NOT_COMPILE))
    _upload_through_the_form(driver, server, bad)
    assert driver.current_url == f"{server.url}/team/v/2"
    state = _state_when_settled(driver)
    assert state.startswith("failed") and "counts" not in state, state
    first = driver.find_element(By.ID, "first-error").text
    assert "main.c:2" in first and "undefined_thing" in first and "error" in first, first
    assert "\n" not in first.strip()  # the first error, one line, not the log
    driver.find_element(By.ID, "build-log").click()
    WebDriverWait(driver, 30).until(lambda d: "make -s -C src" in d.find_element(By.TAG_NAME, "body").text)
    # version 1 still counts: the failed upload did not take the team out
    driver.get(f"{server.url}/")
    row = driver.find_element(By.CSS_SELECTOR, 'tr[data-team="webteam"]')
    assert [td.text for td in row.find_elements(By.TAG_NAME, "td")][1::2] == ["2", "v1 ready"]
