"""Start-up of two source trees, paired: what moving imports costs each command's start.

    python -m bench.startup_pair BEFORE_TREE [AFTER_TREE] [--pairs N]

A tree is a checkout of this repository (``git archive REV | tar -x -C DIR`` makes one);
AFTER_TREE defaults to this one. Each is imported through ``PYTHONPATH`` by this venv's
interpreter, with its bytecode cached (outside both trees) and warmed once. For each case
the two trees run one after the other, the order alternating from pair to pair, and the
medians of wall and CPU (user + system) time are compared as after / before. Beside the
times, which a shared machine makes noisy, the modules each case leaves loaded are compared:
that part is exact.

The cases are the start-up paths docs/benchmarks.md names: ``tourney --version`` (the CLI
alone), ``tourney run``'s own imports and its config load (made while the standby worker
imports), the standby worker's preload, ``validate``'s imports and config load (every
``validate`` loads one), and ``report``'s imports (before it reads the run).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: name -> Python source; ``{tree}`` is the tree's path (its configs/)
CASES = {
    "tourney --version": "from runner.cli import main\nmain(['--version'])",
    "tourney run's imports + config load": (
        "import runner.commands.run\nfrom runner.config import load_config\n"
        "load_config('{tree}/configs/potm94.yaml')"
    ),
    "standby worker preload": "import workers.standby\nworkers.standby._preload()",
    "tourney validate's imports + config load": (
        "import runner.commands.validate\nfrom runner.config import load_config\n"
        "load_config('{tree}/configs/potm94.yaml')"
    ),
    "tourney report's imports": "import runner.commands.report",
}
MODULES_SUFFIX = "\nimport json as _j, sys as _s\nprint(_j.dumps(sorted(_s.modules)))"


@dataclass
class Samples:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def environment(tree: Path, cache: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPATH": str(tree), "PYTHONPYCACHEPREFIX": str(cache)}


def timed(tree: Path, source: str, cache: Path, into: Samples) -> None:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", source.format(tree=tree)],
        env=environment(tree, cache),
        cwd=tree,
        stdout=subprocess.DEVNULL,
        check=False,  # --version exits 0 through SystemExit; a failure shows in the module check
        timeout=120,
    )
    into.wall.append(time.perf_counter() - started)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    into.cpu.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)


def loaded_modules(tree: Path, source: str, cache: Path) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", source.format(tree=tree).replace("main(['--version'])", "") + MODULES_SUFFIX],
        env=environment(tree, cache),
        cwd=tree,
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    return set(json.loads(done.stdout.splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("before", type=Path)
    p.add_argument("after", type=Path, nargs="?", default=ROOT)
    p.add_argument("--pairs", type=int, default=10)
    args = p.parse_args(argv)
    trees = {"before": args.before.resolve(), "after": args.after.resolve()}
    with tempfile.TemporaryDirectory(prefix="tourney-startup-") as tmp:
        cache = Path(tmp)
        for name, source in CASES.items():
            modules = {side: loaded_modules(tree, source, cache) for side, tree in trees.items()}
            samples = {side: Samples() for side in trees}
            for tree in trees.values():  # warm the bytecode cache and the page cache
                timed(tree, source, cache, Samples())
            for pair in range(args.pairs):
                for side in list(trees) if pair % 2 == 0 else list(reversed(trees)):
                    timed(trees[side], source, cache, samples[side])
            wall = {s: statistics.median(samples[s].wall) for s in trees}
            cpu = {s: statistics.median(samples[s].cpu) for s in trees}
            added = sorted(modules["after"] - modules["before"])
            gone = sorted(modules["before"] - modules["after"])
            print(
                f"{name}: wall {wall['before'] * 1000:.0f} -> {wall['after'] * 1000:.0f} ms "
                f"({wall['after'] / wall['before']:.3f}), CPU {cpu['before'] * 1000:.0f} -> "
                f"{cpu['after'] * 1000:.0f} ms ({cpu['after'] / cpu['before']:.3f}), medians of "
                f"{args.pairs} pairs; modules {len(modules['before'])} -> {len(modules['after'])}, "
                f"added {added}, gone {gone}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
