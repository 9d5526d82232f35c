#!/usr/bin/env python3
"""random -- a Boxing player (POTM, January 1994) that plays any legal box.

Usage: python3 main.py MARK [--seed N]

It picks a vacant cell uniformly as the box's top-left corner, then a side
uniformly among those that fit there (1..16). Without --seed every run draws
fresh randomness; with --seed N the choice is a function of N and the arena,
so a rerun replays the same game while differently seeded copies differ.
"""

import random
import sys


def main() -> int:
    args = sys.argv[1:]
    if not args:
        sys.stderr.write("usage: main.py MARK [--seed N]\n")
        return 2
    mark = args[0][:1]
    seed = None
    rest = args[1:]
    while rest:
        if rest[0] == "--seed" and len(rest) > 1:
            seed = rest[1]
            rest = rest[2:]
        else:
            sys.stderr.write(f"unknown option {rest[0]}\n")
            return 2
    data = sys.stdin.read()
    lines = data.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    rows = [list(line.rstrip("\r")) for line in lines]
    width = min((len(r) for r in rows), default=0)
    height = len(rows)

    # side of the biggest vacant square whose top-left corner is (x, y)
    side = [[0] * (width + 1) for _ in range(height + 1)]
    for y in range(height - 1, -1, -1):
        for x in range(width - 1, -1, -1):
            if rows[y][x] == "-":
                side[y][x] = 1 + min(side[y + 1][x], side[y][x + 1], side[y + 1][x + 1])
    vacant = [(x, y) for y in range(height) for x in range(width) if rows[y][x] == "-"]
    if not vacant:
        sys.stdout.write(data)
        return 0
    rng = random.Random(f"{seed}\n{data}") if seed is not None else random.Random()
    x, y = rng.choice(vacant)
    s = rng.randint(1, min(16, side[y][x]))
    for yy in range(y, y + s):
        for xx in range(x, x + s):
            rows[yy][xx] = mark
    out = []
    for line, row in zip(lines, rows, strict=True):
        cr = "\r" if line.endswith("\r") else ""
        out.append("".join(row) + cr)
    sys.stdout.write("\n".join(out) + ("\n" if data.endswith("\n") else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
