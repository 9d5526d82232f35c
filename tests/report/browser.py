"""Headless Chromium driven by selenium, for the report's browser tests.

Skips the test cleanly without Chromium and chromedriver (Debian:
``apt-get install chromium chromium-driver``) or selenium. Nothing leaves the
machine: pages are local files with no external references, and Chromium
runs with background networking, sync and component updates off.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest


def _browser() -> tuple[str, str] | None:
    chrome = next((p for n in ("chromium", "chromium-browser") if (p := shutil.which(n))), None)
    driver = shutil.which("chromedriver")
    return (chrome, driver) if chrome and driver else None


@contextmanager
def headless_chromium(profile: Path, *, page_load_strategy: str = "normal") -> Iterator[Any]:
    """A selenium ``webdriver.Chrome`` on a fresh profile in ``profile``; quit on exit.
    ``page_load_strategy="none"``: ``get`` returns at once (timing a page as it loads)."""
    found = _browser()
    if found is None:
        pytest.skip("chromium and chromedriver are not installed")
    webdriver = pytest.importorskip("selenium.webdriver")
    from selenium.webdriver.chrome.service import Service

    chrome, chromedriver = found
    opts = webdriver.ChromeOptions()
    opts.binary_location = chrome
    opts.page_load_strategy = page_load_strategy
    for arg in (
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-dev-shm-usage",
        f"--user-data-dir={profile}",
        "--window-size=1400,1000",
    ):
        opts.add_argument(arg)
    d = webdriver.Chrome(service=Service(chromedriver), options=opts)
    d.set_page_load_timeout(60)
    try:
        yield d
    finally:
        d.quit()
