"""``python -m bench [--quick] [NAME...]``: run the benchmarks (all by default)."""

from __future__ import annotations

import argparse
import importlib
import sys

#: benchmark modules, in the order they run; each has ``main(quick: bool) -> None``
BENCHMARKS = {
    "sandbox": "bench.sandbox_bench",
    "throughput": "bench.throughput_bench",
    "e2e": "bench.e2e_bench",
    "verify": "bench.verify_bench",
    "exit_grace": "bench.exit_grace_bench",
    "fairtime": "bench.fairtime_bench",
    "coordinator": "bench.coordinator_bench",
    "engine": "bench.engine_bench",
    "clock_depth": "bench.clock_depth",
    "whole_command": "bench.whole_command",
    "engine-scale": "bench.engine_scale_bench",
    "submissions": "bench.submissions_bench",
    "engine_strength": "bench.engine_strength",
}
#: those whose ``main`` also takes ``rounds: int`` (``--rounds``)
TAKES_ROUNDS = {"e2e", "clock_depth", "whole_command", "engine-scale"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(allow_abbrev=False, prog="python -m bench", description=__doc__)
    parser.add_argument("names", nargs="*", help=f"benchmarks to run: {', '.join(BENCHMARKS)} (default: all)")
    parser.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke run)")
    parser.add_argument(
        "--rounds",
        type=int,
        metavar="N",
        help=f"rounds of {', '.join(sorted(TAKES_ROUNDS))} (default: its own)",
    )
    args = parser.parse_args(argv)
    if args.rounds is not None and args.rounds < 1:
        parser.error(f"--rounds: {args.rounds} is not a number of rounds; expected 1 or more")
    unknown = [n for n in args.names if n not in BENCHMARKS]
    if unknown:
        parser.error(f"unknown benchmark(s): {', '.join(unknown)}; known: {', '.join(BENCHMARKS)}")
    for name in args.names or list(BENCHMARKS):
        print(f"== {name}", flush=True)
        module = importlib.import_module(BENCHMARKS[name])
        if args.rounds is not None and name in TAKES_ROUNDS:
            module.main(args.quick, rounds=args.rounds)
        else:
            module.main(args.quick)
    return 0


if __name__ == "__main__":
    sys.exit(main())
