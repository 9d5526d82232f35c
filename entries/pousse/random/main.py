#!/usr/bin/env python3
"""random -- an ICFP'98 Pousse player that slides in anywhere at random.

Usage: ./runme [--seed N]   (stdin: N, then the moves so far; stdout: a move)

Every one of the 4N insertions is always a legal move in pousse (a bad one
merely loses), so it picks one uniformly. With --seed N the choice is a
function of N and the game so far: a rerun replays the same game.
"""

import random
import sys


def main() -> int:
    args = sys.argv[1:]
    seed = None
    if len(args) == 2 and args[0] == "--seed":
        seed = args[1]
    elif args:
        sys.stderr.write("usage: runme [--seed N]\n")
        return 2
    data = sys.stdin.read()
    lines = data.split()
    n = int(lines[0]) if lines else 4
    rng = random.Random(f"{seed}\n{data}") if seed is not None else random.Random()
    sys.stdout.write(f"{rng.choice('LRTB')}{rng.randint(1, n)}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
