"""Do the shipped engines play at their strength? (issue 35, item 1; docs/engines.md, "Clocks")

    .venv/bin/python -m bench engine_strength [--quick]

Two runs through ``tourney run`` as a user starts them (the embedded Redis, real workers,
the sandbox), judged from the ``games.pgn`` they write:

* stockfish against gnuchess at 2+0.05 from tourney's book (each opening twice, colours
  swapped): stockfish must score at least 90% with a median search depth above 8 plies
  (stockfish 15.1 reaches 12 to 20 at this clock; a starved time manager, as with the
  ``Move Overhead: 100`` once shipped, gives depth 1 to 8 and loses to gnuchess);
* the shipped ``configs/engines.yaml`` (stockfish, gnuchess, phalanx): stockfish must finish
  first.

Printed: ``stockfish vs gnuchess at 2+0.05: S% of G games, median depth D (plausible: ...)``
and ``configs/engines.yaml standings: ... (plausible: ...)``. Skipped, with a line saying so,
where an engine is not installed. ``tests/integration/test_engine_strength.py`` asserts the
same checks.
"""

from __future__ import annotations

import io
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import chess.pgn
import yaml

ROOT = Path(__file__).resolve().parents[1]
ENGINES = ("stockfish", "gnuchess", "phalanx")
STRENGTH_TC = "2+0.05"
#: what stockfish must show against gnuchess at STRENGTH_TC
MIN_SCORE, MIN_MEDIAN_DEPTH = 0.90, 8
#: openings of the stockfish-gnuchess run (each played twice), by default and --quick
OPENINGS, OPENINGS_QUICK = 10, 5
#: the load per core above which the figures say more about the machine than the engines
MAX_LOAD_PER_CORE = 4.0
#: a move comment's ``+0.31/14 0.120s``: score / depth
_DEPTH = re.compile(r"(?:^|\s)[+-](?:\d+\.\d+|M\d+)/(\d+)\b")


@dataclass(frozen=True)
class Tally:
    """What a run's PGN says: points and games per engine, and each engine's move depths."""

    points: dict[str, float]
    games: dict[str, int]
    depths: dict[str, list[int]]

    def score(self, name: str) -> float:
        return self.points[name] / self.games[name] if self.games.get(name) else 0.0

    def median_depth(self, name: str) -> float:
        return statistics.median(self.depths[name]) if self.depths.get(name) else 0.0

    def standings(self) -> list[tuple[str, float]]:
        return sorted(self.points.items(), key=lambda kv: -kv[1])


def load_per_core() -> float:
    """The machine's 1-minute load average per core: above MAX_LOAD_PER_CORE an engine on a
    2+0.05 clock is not scheduled soon enough after its turn starts to show its strength (at
    4.5 to 5.5 here stockfish lost 7 of 20 games on time at depth 5 to 6; at 3.5 to 4, 1)."""
    return os.getloadavg()[0] / (os.cpu_count() or 1)


def missing_engines() -> list[str]:
    return [p for p in ENGINES if shutil.which(p, path="/usr/games") is None]


def tally(pgn_text: str) -> Tally:
    points: dict[str, float] = defaultdict(float)
    games: dict[str, int] = defaultdict(int)
    depths: dict[str, list[int]] = defaultdict(list)
    stream = io.StringIO(pgn_text)
    while (game := chess.pgn.read_game(stream)) is not None:
        white, black, result = game.headers["White"], game.headers["Black"], game.headers["Result"]
        won = {"1-0": (1.0, 0.0), "0-1": (0.0, 1.0), "1/2-1/2": (0.5, 0.5)}.get(result, (0.0, 0.0))
        for name, got in zip((white, black), won, strict=True):
            points[name] += got
            games[name] += 1
        for node in game.mainline():
            m = _DEPTH.search(node.comment)
            if m:
                mover = black if node.turn() == chess.WHITE else white  # the side that just moved
                depths[mover].append(int(m[1]))
    return Tally(dict(points), dict(games), dict(depths))


def _absolute(config: dict[str, Any]) -> dict[str, Any]:
    for source in config["entries"]:
        source["path"] = str((ROOT / "configs" / source["path"]).resolve())
    if "openings" in config:
        config["openings"]["file"] = str(ROOT / "configs" / config["openings"]["file"])
    return config


def shipped_config() -> dict[str, Any]:
    """``configs/engines.yaml`` as shipped, its paths made absolute (run from anywhere)."""
    return _absolute(yaml.safe_load((ROOT / "configs" / "engines.yaml").read_text()))


def stockfish_gnuchess_config(openings: int) -> dict[str, Any]:
    """The shipped config's settings, only stockfish and gnuchess, on ``openings`` openings."""
    config = yaml.safe_load((ROOT / "configs" / "engines.yaml").read_text())
    config["name"] = "sf-gnuchess"
    config["each"]["tc"] = STRENGTH_TC
    config["openings"] = {**config["openings"], "count": openings}
    config["entries"] = [e for e in config["entries"] if Path(e["path"]).name in ("stockfish", "gnuchess")]
    return _absolute(config)


def run_tourney(config: dict[str, Any], directory: Path, workers: int = 2, timeout: float = 1800) -> Tally:
    """``tourney run CONFIG`` in ``directory``; the tally of the ``games.pgn`` it writes."""
    path = directory / f"{config['name']}.yaml"
    path.write_text(yaml.safe_dump(config))
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    (directory / "tmp").mkdir(exist_ok=True)
    env["TMPDIR"] = str(directory / "tmp")
    done = subprocess.run(
        [sys.executable, "-m", "runner.cli", "run", str(path), "--workers", str(workers), "--no-progress"],
        cwd=directory,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    if done.returncode != 0:
        raise RuntimeError(f"tourney run {path.name} failed ({done.returncode}): {done.stderr[-2000:]}")
    return tally((directory / "runs" / config["name"] / "games.pgn").read_text())


def main(quick: bool = False) -> None:
    missing = missing_engines()
    if missing:
        print(f"engine strength: skipped ({', '.join(missing)} not installed)")
        return
    with tempfile.TemporaryDirectory(prefix="tourney-strength-") as tmp:
        openings = OPENINGS_QUICK if quick else OPENINGS
        load = load_per_core()
        print(f"load per core at the start: {load:.1f} (the figures mean little above {MAX_LOAD_PER_CORE:g})")
        t = run_tourney(stockfish_gnuchess_config(openings), Path(tmp))
        score, depth = t.score("stockfish"), t.median_depth("stockfish")
        ok = score >= MIN_SCORE and depth > MIN_MEDIAN_DEPTH
        print(
            f"stockfish vs gnuchess at {STRENGTH_TC}: {score:.0%} of {t.games['stockfish']} games, "
            f"median depth {depth:g} (gnuchess {t.median_depth('gnuchess'):g}) "
            f"(plausible: {'yes' if ok else 'NO'}; needs >= {MIN_SCORE:.0%} and depth > {MIN_MEDIAN_DEPTH})",
            flush=True,
        )
        s = run_tourney(shipped_config(), Path(tmp))
        standings = s.standings()
        table = ", ".join(f"{name} {points:g}/{s.games[name]}" for name, points in standings)
        first = standings[0][0] == "stockfish" and standings[0][1] > standings[1][1]
        verdict = "yes" if first else "NO"
        print(f"configs/engines.yaml standings: {table} (plausible: {verdict}; stockfish first)", flush=True)


if __name__ == "__main__":
    main("--quick" in sys.argv)
