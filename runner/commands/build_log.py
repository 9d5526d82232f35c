"""``tourney build-log RUN [ENTRY]``: a failed build's full log, on the organiser's machine.

A ``build_failed`` verdict names the build log's first error-like lines; the
whole log (its last 64 KiB) travels back from the worker with the match result
(``MatchResult.build_logs``) and is kept in the run's store, so it can be read
here whatever machine built the entry. Without ENTRY: every entry whose build
failed, with its verdict line. Exit 2 when the run has no failed build of ENTRY.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from runner.config import ConfigError
from runner.domain.inert import inert
from runner.errors import UsageError
from runner.report.entry_notes import build_logs
from runner.report.loader import load_report_data
from runner.storage.store import StoreError


def cmd_build_log(args: argparse.Namespace) -> int:
    try:
        data = load_report_data(Path(args.run_dir))
    except (FileNotFoundError, StoreError, ConfigError) as e:
        raise UsageError(str(e)) from e
    logs = build_logs(data.matches)
    if not args.entry:
        if not logs:
            print("no entry's build failed in this run")
        for b in logs:
            print(f"{b.entry}: {inert(b.detail, one_line=True)}")
        return 0
    found = next((b for b in logs if b.entry == args.entry), None)
    if found is None:
        failed = ", ".join(b.entry for b in logs) or "none"
        raise UsageError(f"no failed build of {args.entry!r} in {args.run_dir} (failed builds: {failed})")
    print(f"# {found.entry}: build failed (match {found.match_id})", file=sys.stderr)
    if not found.log:
        print(f"(this result carries no log; its verdict: {inert(found.detail, one_line=True)})")
        return 0
    sys.stdout.write(inert(found.log if found.log.endswith("\n") else found.log + "\n"))
    return 0
