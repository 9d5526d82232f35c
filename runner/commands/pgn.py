"""``tourney pgn RUN [-o FILE]``: a chess run's games as PGN again, from its store (docs/engines.md).

Exit 2 when the run directory has no store, or the run played no chess.
"""

from __future__ import annotations

import argparse
import signal
import sys
from pathlib import Path

from runner.errors import UsageError
from runner.report.pgn import PGN_FILE, print_run_pgn, write_run_pgn
from runner.storage.store import StoreError


def cmd_pgn(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    try:
        if args.output == "-":
            # a reader that stops early (| head) is no error: Python's own handler would print one
            signal.signal(signal.SIGPIPE, signal.SIG_DFL)
            count: int | None = print_run_pgn(run_dir, sys.stdout)
        else:
            target = Path(args.output) if args.output else run_dir / PGN_FILE
            count = write_run_pgn(run_dir, target)
            if count is not None:
                print(f"{target}: {count} game(s)")
    except StoreError as e:
        raise UsageError(str(e)) from e
    if not count:
        raise UsageError(f"{run_dir}: no chess games played (PGN is written for game: chess)")
    return 0
