"""Two sandbox launcher sources, paired: what a change to launcher.c costs a game's set-up.

    python -m bench.launcher_pair BEFORE_LAUNCHER_C [--rounds N] [--games N] [--moves N]

``git show main:workers/sandbox/launcher.c > /tmp/before.c`` makes a BEFORE file; the
AFTER is this tree's launcher.c. Both are compiled as ``launcher.py`` compiles the one it
uses, and two sandbox factories that differ only in their launcher binary are measured in
this process, each round in alternating order (before, after; after, before; ...), so that
load drifts hit both alike. Per round and launcher: the median open+close of ``--games``
reused sandboxes back to back (``sandbox_bench.reused_setup_ms``, the ``per-game sandbox
set-up cost`` line), the same with games 10 ms apart, and the median sandboxed native move
against a bare one (``sandbox_bench.overhead_ratio``). The output gives each figure's median
over rounds as after / before ratios, and the set-up in bare moves.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from bench.sandbox_bench import FIRST_FIT_C, overhead_ratio, reused_setup_ms
from runner.domain.games.boxing import Boxing
from runner.domain.match_values import Limits
from workers.sandbox.bwrap import BwrapHostFactory
from workers.sandbox.launcher import LAUNCHER_SOURCE


@dataclass
class Figures:
    """One launcher's figures, one value per round."""

    back_to_back_ms: list[float] = field(default_factory=list)
    spaced_ms: list[float] = field(default_factory=list)
    bare_ms: list[float] = field(default_factory=list)
    boxed_ms: list[float] = field(default_factory=list)

    def setup_in_bare_moves(self) -> float:
        pairs = zip(self.back_to_back_ms, self.bare_ms, strict=True)
        return statistics.median(b2b / bare for b2b, bare in pairs)


def compile_launcher(source: Path, out: Path) -> Path:
    """``source`` compiled the way workers/sandbox/launcher.py compiles the launcher it uses."""
    # -I: launcher.c includes entry_filter.h, which a BEFORE file elsewhere finds here
    flags = ["-O2", "-Wall", "-I", str(LAUNCHER_SOURCE.parent)]
    subprocess.run([os.environ.get("CC", "cc"), *flags, "-o", str(out), str(source)], check=True)
    return out


def measure(factory: BwrapHostFactory, entry: Path, games: int, moves: int, into: Figures) -> None:
    into.back_to_back_ms.append(reused_setup_ms(factory, entry, games))
    into.spaced_ms.append(reused_setup_ms(factory, entry, games, between_s=0.01))
    host = factory.open(entry, Limits(), "A")
    try:
        arena = Boxing().default_board().encode()
        _, bare, boxed = overhead_ratio(host, ["./a.out", "A"], entry, arena, moves)
    finally:
        host.close()
    into.bare_ms.append(bare)
    into.boxed_ms.append(boxed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path, help="the launcher.c to compare this tree's with")
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--games", type=int, default=40, help="reused games per round and launcher")
    parser.add_argument("--moves", type=int, default=60, help="native moves per round and launcher")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="tourney-launcher-pair-") as tmp:
        work = Path(tmp)
        entry = work / "native"
        entry.mkdir()
        (entry / "main.c").write_text(FIRST_FIT_C)
        subprocess.run(["cc", "-O2", "-o", "a.out", "main.c"], cwd=entry, check=True)
        factories = {"before": BwrapHostFactory(), "after": BwrapHostFactory()}
        factories["before"].launcher = compile_launcher(args.before, work / "launcher-before")
        factories["after"].launcher = compile_launcher(LAUNCHER_SOURCE, work / "launcher-after")
        figures = {name: Figures() for name in factories}
        for r in range(args.rounds):
            order = ("before", "after") if r % 2 == 0 else ("after", "before")
            for name in order:
                measure(factories[name], entry, args.games, args.moves, figures[name])
        before, after = figures["before"], figures["after"]
        print(f"load average at the end: {os.getloadavg()[0]:.2f}; {args.rounds} rounds")
        for label, attr in (
            ("reused sandbox open+close, back to back", "back_to_back_ms"),
            ("the same, games 10 ms apart", "spaced_ms"),
            ("sandboxed native move", "boxed_ms"),
            ("bare native move", "bare_ms"),
        ):
            b = statistics.median(getattr(before, attr))
            a = statistics.median(getattr(after, attr))
            print(f"{label}: before {b:.3f} ms, after {a:.3f} ms, after/before {a / b:.3f}")
        for label, attr in (("back to back", "back_to_back_ms"), ("10 ms apart", "spaced_ms")):
            ratios = [a / b for a, b in zip(getattr(after, attr), getattr(before, attr), strict=True)]
            print(f"set-up {label}, after/before per round: {' '.join(f'{x:.2f}' for x in ratios)}")
        print(
            "per-game sandbox set-up cost (back to back, in bare moves): "
            f"before {before.setup_in_bare_moves():.2f}, after {after.setup_in_bare_moves():.2f}"
        )


if __name__ == "__main__":
    main()
