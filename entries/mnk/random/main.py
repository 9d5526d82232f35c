#!/usr/bin/env python3
"""random -- an m,n,k player that marks a uniformly random empty cell.

Usage: python3 main.py [--seed N]
stdin: "W H K", then the moves so far as "x y" (1-based), X first.
stdout: one "x y" line.

With --seed N the choice is a function of N and the game so far, so a rerun
replays the same game while differently seeded copies differ.
"""

import random
import sys


def main() -> int:
    args = sys.argv[1:]
    seed = None
    if len(args) == 2 and args[0] == "--seed":
        seed = args[1]
    elif args:
        sys.stderr.write("usage: main.py [--seed N]\n")
        return 2
    data = sys.stdin.read()
    numbers = [int(t) for t in data.split()]
    w, h = numbers[0], numbers[1]
    taken = set(zip(numbers[3::2], numbers[4::2], strict=False))
    empty = [(x, y) for y in range(1, h + 1) for x in range(1, w + 1) if (x, y) not in taken]
    rng = random.Random(f"{seed}\n{data}") if seed is not None else random.Random()
    x, y = rng.choice(empty)
    sys.stdout.write(f"{x} {y}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
