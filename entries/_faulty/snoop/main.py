"""Tries to read another entry's /tmp/arena.* (POTM forbids it; the sandbox makes it impossible).

If it finds any arena file but its own, it prints what it saw instead of a
move (bad_output). If it finds none it exits 43 (expected verdict: crash,
exit code 43), which tells the tests it looked and saw nothing.
"""

import glob
import sys

mark = sys.argv[1]
sys.stdin.read()
theirs = [p for p in glob.glob("/tmp/arena.*") if p != f"/tmp/arena.{mark}"]
if theirs:
    for path in theirs:
        with open(path, errors="replace") as f:
            print(f"SAW {path}: {f.read()[:40]!r}")
    sys.exit(0)
sys.stderr.write("no arena file but mine\n")
sys.exit(43)
