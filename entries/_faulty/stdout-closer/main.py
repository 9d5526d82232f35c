"""Answers, closes stdout, then keeps running (expected verdict: timeout:
the move is over when the program exits, not when its stdout closes)."""

import os
import sys
import time

mark = sys.argv[1]
arena = sys.stdin.read()
i = arena.find("-")
sys.stdout.write(arena if i < 0 else arena[:i] + mark + arena[i + 1 :])
sys.stdout.flush()
os.close(1)
while True:
    time.sleep(1)
