"""The HTML report of a 50,000-match run (issue 13, item 5): ``make bench-report``.

Generates a synthetic finished run (``bench.report_run``: 101 entries, a round
robin on 10 boards, then a 32-entry knockout: 50,531 matches, 101,062 games)
unless ``--run-dir`` names one made earlier (``--entries 10000 --swiss-rounds 10``:
a 10,000-entry swiss of 50,000 matches instead), then writes its report in both
layouts and opens each in headless Chromium from ``file://``:

* ``single``: the one self-contained page (the only layout before the split);
* ``split``: the page plus ``report-data/`` files loaded on demand (``runner.report.site``).

Printed per layout: CPU seconds to write the report (loading the run is
shared and printed once), the page's size and its data directory's, and two
open times from navigation (median of ``--opens`` fresh loads): until every
standings table and the bracket are displayed, and until the page has loaded
(its scripts ran, so it responds). A page that has not loaded within
``--timeout`` seconds is reported as at least that. Then the ratios between
the layouts. The issue's target: the split page opens in under 3 s.
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
from runner.report.loader import load_report_data
from runner.report.model import ReportData
from runner.report.site import data_dir_for, write_html_report

POLL_S = 0.02

#: every standings table and a bracket box displayed (offsetParent: laid out and not hidden)
VISIBLE = """
const tables = Array.from(document.querySelectorAll('table.standings'));
const box = document.querySelector('.bracket a.mbox');
return tables.length === arguments[0] && tables.every(t => t.offsetParent !== null)
    && box !== null && box.offsetParent !== null;
"""


def _size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else 0


def _poll(driver: Any, script: str, *args: object) -> bool:
    try:
        return bool(driver.execute_script(script, *args))
    except Exception:  # the renderer is busy (a client read timeout) or the document is being replaced
        return False


def _open(driver: Any, page: Path, tables: int, timeout_s: float) -> tuple[float, float, int]:
    """Seconds until standings and bracket are displayed, until the page has loaded; its elements."""
    driver.get("about:blank")
    t0 = time.perf_counter()
    driver.get(page.as_uri())  # page load strategy "none": returns at once
    visible = loaded = float("inf")
    while time.perf_counter() - t0 < timeout_s and loaded == float("inf"):
        if visible == float("inf") and _poll(driver, VISIBLE, tables):
            visible = time.perf_counter() - t0
        if _poll(driver, "return document.readyState === 'complete'"):
            loaded = time.perf_counter() - t0
            if visible == float("inf") and _poll(driver, VISIBLE, tables):
                visible = loaded
        time.sleep(POLL_S)
    try:
        elements = int(driver.execute_script("return document.getElementsByTagName('*').length") or 0)
    except Exception:  # still busy after the timeout
        elements = -1
    return visible, loaded, elements


def _fmt(s: float, timeout_s: float) -> str:
    return f">{timeout_s:.0f}" if s == float("inf") else f"{s:.2f}"


def _ratio(a: float, b: float) -> str:
    if a == float("inf") and b == float("inf"):
        return "n/a"
    if b == float("inf"):
        return "n/a (the single page did not open in time)"
    return f"{a / b:.4f}" if a != float("inf") else "n/a"


def bench_layout(data: ReportData, layout: str, work: Path, opens: int, timeout_s: float) -> dict[str, float]:
    from tests.report.browser import headless_chromium

    out = work / layout / "report.html"
    c0, t0 = time.process_time(), time.perf_counter()
    write_html_report(data, out, layout=layout)  # type: ignore[arg-type]
    cpu, wall = time.process_time() - c0, time.perf_counter() - t0
    page, extra = _size(out), _size(data_dir_for(out))
    print(
        f"{layout:>6}: write {cpu:.1f} s CPU ({wall:.1f} s wall) · page {page / 1e6:.2f} MB"
        f" + data files {extra / 1e6:.1f} MB",
        flush=True,
    )
    tables = sum(1 for s in data.stages if s.standings)
    with headless_chromium(work / f"profile-{layout}", page_load_strategy="none") as driver:
        runs = [_open(driver, out, tables, timeout_s) for _ in range(opens)]
    visible = statistics.median(r[0] for r in runs)
    loaded = statistics.median(r[1] for r in runs)
    print(
        f"{layout:>6}: open {_fmt(visible, timeout_s)} s to standings and bracket displayed,"
        f" {_fmt(loaded, timeout_s)} s to loaded (median of {len(runs)}:"
        f" {', '.join(_fmt(r[1], timeout_s) for r in runs)}) · {runs[-1][2]} elements",
        flush=True,
    )
    return {"cpu": cpu, "page": page, "visible": visible, "loaded": loaded, "elements": runs[-1][2]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m bench.report_bench", description=__doc__.splitlines()[0]
    )
    ap.add_argument("--run-dir", type=Path, help="a run made by bench.report_run (made here if missing)")
    ap.add_argument("--entries", type=int, default=101)
    ap.add_argument("--boards", type=int, default=10)
    ap.add_argument(
        "--swiss-rounds",
        type=int,
        default=0,
        help="generate a swiss (e.g. --entries 10000 --swiss-rounds 10)",
    )
    ap.add_argument("--opens", type=int, default=3, help="page loads of the split page (median)")
    ap.add_argument("--single-opens", type=int, default=1, help="page loads of the single page (slow)")
    ap.add_argument("--timeout", type=float, default=180.0, help="seconds to wait for a page to load")
    ap.add_argument("--layouts", default="single,split")
    args = ap.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="report-bench-") as tmp:
        work = Path(tmp)
        run_dir = args.run_dir or work / "run"
        if not (run_dir / "tournament.sqlite").exists():
            t0 = time.perf_counter()
            n = make_run(run_dir, entries=args.entries, boards=args.boards, swiss_rounds=args.swiss_rounds)
            print(f"generated {run_dir}: {n} matches in {time.perf_counter() - t0:.1f} s", flush=True)
        c0, t0 = time.process_time(), time.perf_counter()
        data = load_report_data(run_dir)
        games = sum(1 for _ in data.games())
        print(
            f"run: {len(data.matches)} matches, {games} games; loading it: "
            f"{time.process_time() - c0:.1f} s CPU ({time.perf_counter() - t0:.1f} s wall)",
            flush=True,
        )
        results = {
            layout: bench_layout(
                data, layout, work, args.single_opens if layout == "single" else args.opens, args.timeout
            )
            for layout in args.layouts.split(",")
        }
        if "split" in results:
            print(f"split page open time (target < 3 s): {_fmt(results['split']['loaded'], args.timeout)} s")
        if {"single", "split"} <= set(results):
            a, b = results["split"], results["single"]
            print(f"open time ratio (split / single): {_ratio(a['loaded'], b['loaded'])}")
            print(f"page size ratio (split / single): {a['page'] / b['page']:.4f}")
            print(f"element count ratio (split / single): {_ratio(a['elements'], b['elements'])}")
            print(f"write CPU ratio (split / single): {a['cpu'] / b['cpu']:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
