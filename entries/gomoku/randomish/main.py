#!/usr/bin/env python3
"""randomish -- a Gomocup brain that plays near the stones at random.

Usage: python3 main.py [--seed N]   (Gomocup brain protocol on stdin/stdout)

It completes a line of K (INFO win_length, default 5) when it can; otherwise
it plays a random empty cell next to a stone (the centre on an empty board).
With --seed N its choices are a function of N and the position.
Answers START/RECTSTART/RESTART/TAKEBACK with OK, ABOUT with its name,
BEGIN/TURN/BOARD..DONE with a move "x,y" (0-based), ignores INFO, exits on END.
"""

import random
import sys

ME, OPP = 1, 2


class Brain:
    def __init__(self, seed: str | None) -> None:
        self.seed = seed
        self.w = self.h = 15
        self.k = 5
        self.cells: dict[tuple[int, int], int] = {}

    def inside(self, x: int, y: int) -> bool:
        return 0 <= x < self.w and 0 <= y < self.h

    def wins_at(self, x: int, y: int, p: int) -> bool:
        for dx, dy in ((1, 0), (0, 1), (1, 1), (1, -1)):
            n = 1
            for sgn in (1, -1):
                cx, cy = x + sgn * dx, y + sgn * dy
                while self.inside(cx, cy) and self.cells.get((cx, cy)) == p:
                    n += 1
                    cx, cy = cx + sgn * dx, cy + sgn * dy
            if n >= self.k:
                return True
        return False

    def move(self) -> str:
        empty = [(x, y) for y in range(self.h) for x in range(self.w) if (x, y) not in self.cells]
        if not empty:
            return "ERROR the board is full"
        if not self.cells:
            x, y = self.w // 2, self.h // 2
        else:
            wins = [c for c in empty if self.wins_at(c[0], c[1], ME)]
            near = [
                (x, y)
                for (x, y) in empty
                if any((x + dx, y + dy) in self.cells for dx in (-1, 0, 1) for dy in (-1, 0, 1))
            ]
            key = f"{self.seed}\n{sorted(self.cells.items())}"
            rng = random.Random(key) if self.seed is not None else random.Random()
            x, y = wins[0] if wins else rng.choice(near or empty)
        self.cells[(x, y)] = ME
        return f"{x},{y}"


def main() -> int:
    args = sys.argv[1:]
    seed = args[1] if len(args) == 2 and args[0] == "--seed" else None
    brain = Brain(seed)
    lines = iter(sys.stdin.readline, "")
    for raw in lines:
        parts = raw.strip().split(None, 1)
        if not parts:
            continue
        cmd, arg = parts[0].upper(), (parts[1] if len(parts) > 1 else "")
        if cmd in ("START", "RECTSTART"):
            try:
                w, h = (int(v) for v in arg.split(",")) if cmd == "RECTSTART" else (int(arg), int(arg))
            except ValueError:
                out = "ERROR bad size"
            else:
                if 1 <= w <= 100 and 1 <= h <= 100:
                    brain.w, brain.h, brain.cells = w, h, {}
                    out = "OK"
                else:
                    out = "ERROR unsupported size"
        elif cmd == "RESTART":
            brain.cells = {}
            out = "OK"
        elif cmd == "INFO":
            key, _, value = arg.partition(" ")
            if key == "win_length" and value.strip().isdigit():
                brain.k = int(value)
            continue
        elif cmd == "BEGIN":
            out = brain.move()
        elif cmd == "TURN":
            x, y = (int(v) for v in arg.split(","))
            brain.cells[(x, y)] = OPP
            out = brain.move()
        elif cmd == "BOARD":
            brain.cells = {}
            for row in lines:
                row = row.strip()
                if row.upper().startswith("DONE"):
                    break
                x, y, f = (int(v) for v in row.split(","))
                brain.cells[(x, y)] = ME if f == 1 else OPP
            out = brain.move()
        elif cmd == "TAKEBACK":
            x, y = (int(v) for v in arg.split(","))
            brain.cells.pop((x, y), None)
            out = "OK"
        elif cmd == "ABOUT":
            out = 'name="randomish", version="1.0", author="tourney sample entries", country="-"'
        elif cmd == "END":
            return 0
        else:
            out = f"UNKNOWN command {cmd}"
        sys.stdout.write(out + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
