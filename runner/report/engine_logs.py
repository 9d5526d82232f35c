"""Engine traffic logs out of the store (``log: engine``; docs/engines.md, "Engine traffic").

A worker returns each game's engine traffic inside the result (``GameRecord.engine_logs``,
capped there: ``workers.engine_log``), so remote workers' logs reach the coordinator like
their moves. As a run ends they are written, one file per engine per game, to
``logs/engines/MATCH-gGAME-ENTRY.log`` in the run directory (the official result of each
done match: a match played again after a dispute has the logs of the game that counts).
"""

from __future__ import annotations

import re
from pathlib import Path

from runner.storage.store import RunStore

#: where the logs go, in the run directory
LOG_DIR = Path("logs") / "engines"

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def log_name(match_id: str, game: int, entry: str) -> str:
    """``MATCH-gGAME-ENTRY.log``, with anything but letters, digits, ``._-`` as ``_``."""
    return _UNSAFE.sub("_", f"{match_id}-g{game}-{entry}") + ".log"


def write_engine_logs(run_dir: Path) -> int:
    """Every stored engine log of the run's done matches as a file; how many were written."""
    count = 0
    with RunStore.open(run_dir) as store:
        for m in store.match_records(states=("done",)):
            if m.result is None:
                continue
            for number, game in enumerate(m.result.games, start=1):
                for entry, text in sorted(game.engine_logs.items()):
                    target = run_dir / LOG_DIR / log_name(m.match_id, number, entry)
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_text(text)
                    count += 1
    return count
