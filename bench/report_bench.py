"""The HTML report of a 50,000-match run (issue 13, item 5): ``make bench-report``.

Generates a synthetic finished run (``bench.report_run``: 101 entries, a round
robin on 10 boards, then a 32-entry knockout: 50,531 matches, 101,062 games)
unless ``--run-dir`` names one made earlier, then writes its report in both
layouts and opens each in headless Chromium from ``file://``:

* ``single``: the one self-contained page (the only layout before the split);
* ``split``: the page plus ``report-data/`` files loaded on demand (``runner.report.site``).

Printed per layout: CPU seconds to write the report (loading the run is
shared and printed once), the page's size and the data directory's, the
page's element count, and the time to open it: from navigation until the
standings tables and the bracket are displayed (median of ``--opens``
fresh loads). Then the ratios between the layouts. The issue's target is an
open time under 3 s for the split page.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.report_run import make_run
from runner.report.model import load_report_data
from runner.report.site import data_dir_for, write_html_report

OPEN_TIMEOUT_S = 300


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0


def _open_s(driver: Any, page: Path) -> tuple[float, int]:
    """Seconds from navigation to standings and bracket displayed; the page's element count."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get("about:blank")
    t0 = time.perf_counter()
    driver.get(page.as_uri())
    WebDriverWait(driver, OPEN_TIMEOUT_S, poll_frequency=0.02).until(
        lambda d: (
            all(e.is_displayed() for e in d.find_elements(By.CSS_SELECTOR, "table.standings, .bracket"))
            and d.find_elements(By.CSS_SELECTOR, ".bracket a.mbox")
        )
    )
    elapsed = time.perf_counter() - t0
    elements: int = driver.execute_script("return document.getElementsByTagName('*').length")
    return elapsed, elements


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.report_bench", description=__doc__.splitlines()[0])
    ap.add_argument("--run-dir", type=Path, help="a run made by bench.report_run (made here if missing)")
    ap.add_argument("--entries", type=int, default=101)
    ap.add_argument("--boards", type=int, default=10)
    ap.add_argument("--opens", type=int, default=3, help="page loads per layout (median)")
    ap.add_argument("--layouts", default="single,split")
    args = ap.parse_args(argv)

    from tests.report.browser import headless_chromium

    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        work = Path(tmp)
        run_dir = args.run_dir or work / "run"
        if not (run_dir / "tournament.sqlite").exists():
            t0 = time.perf_counter()
            n = make_run(run_dir, entries=args.entries, boards=args.boards)
            print(f"generated {run_dir}: {n} matches in {time.perf_counter() - t0:.1f} s", flush=True)
        c0, t0 = time.process_time(), time.perf_counter()
        data = load_report_data(run_dir)
        games = sum(1 for _ in data.games())
        print(
            f"run: {len(data.matches)} matches, {games} games; loading it: "
            f"{time.process_time() - c0:.1f} s CPU ({time.perf_counter() - t0:.1f} s wall)",
            flush=True,
        )
        results: dict[str, dict[str, float]] = {}
        for layout in args.layouts.split(","):
            out = work / layout / "report.html"
            c0, t0 = time.process_time(), time.perf_counter()
            write_html_report(data, out, layout=layout)  # type: ignore[arg-type]
            cpu, wall = time.process_time() - c0, time.perf_counter() - t0
            page, extra = _size(out), _size(data_dir_for(out))
            with headless_chromium(work / f"profile-{layout}") as driver:
                driver.set_page_load_timeout(OPEN_TIMEOUT_S)
                opens = [_open_s(driver, out) for _ in range(args.opens)]
            open_s = statistics.median(o[0] for o in opens)
            elements = opens[-1][1]
            results[layout] = {"open": open_s, "page": page, "elements": elements, "cpu": cpu}
            print(
                f"{layout:>6}: write {cpu:.1f} s CPU ({wall:.1f} s wall) · page {page / 1e6:.2f} MB"
                f" + data {extra / 1e6:.1f} MB · {elements} elements · open {open_s:.2f} s"
                f" (median of {len(opens)}: {', '.join(f'{o[0]:.2f}' for o in opens)})",
                flush=True,
            )
        if "split" in results:
            print(f"split page open time (target < 3 s): {results['split']['open']:.2f} s")
        if {"single", "split"} <= set(results):
            a, b = results["single"], results["split"]
            print(f"open time ratio (split / single): {b['open'] / a['open']:.3f}")
            print(f"page size ratio (split / single): {b['page'] / a['page']:.4f}")
            print(f"element count ratio (split / single): {b['elements'] / a['elements']:.4f}")
            print(f"write CPU ratio (split / single): {b['cpu'] / a['cpu']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
