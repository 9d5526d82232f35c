"""Busy children that would compute on the opponent's time, then first-empty moves."""

import os
import sys

CHILDREN = 20
width = height = 0
taken = set()


def spin() -> None:
    for _ in range(CHILDREN):
        if os.fork() == 0:
            os.setsid()
            while True:
                pass


def move() -> None:
    for y in range(height):
        for x in range(width):
            if (x, y) not in taken:
                taken.add((x, y))
                print(f"{x},{y}")
                return


spin()
for line in sys.stdin:
    words = line.strip().replace(",", " ").split()
    if not words:
        continue
    cmd = words[0].upper()
    if cmd == "START":
        width = height = int(words[1])
        print("OK")
    elif cmd == "RECTSTART":
        width, height = int(words[1]), int(words[2])
        print("OK")
    elif cmd == "BEGIN":
        move()
    elif cmd == "TURN":
        taken.add((int(words[1]), int(words[2])))
        move()
    elif cmd == "BOARD":
        taken.clear()
        for row in sys.stdin:
            if row.strip().upper() == "DONE":
                break
            x, y, _who = (int(v) for v in row.strip().split(","))
            taken.add((x, y))
        move()
    elif cmd == "END":
        break
    elif cmd == "ABOUT":
        print('name="busy-children"')
