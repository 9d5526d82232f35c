"""Tries to write files outside its own directory.

Targets: a few well-known places plus every line of ``targets.txt`` next to
this file. If any write succeeds it prints the path instead of a move
(bad_output); if all fail it exits 44 (expected verdict: crash, exit code 44)
with the errors on stderr.
"""

import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
targets = ["/etc/tourney-escape", "/var/tmp/tourney-escape", "/work/tourney-escape", "/tourney-escape"]
try:
    with open(os.path.join(here, "targets.txt")) as f:
        targets = [ln.strip() for ln in f if ln.strip()] + targets
except OSError:
    pass

sys.stdin.read()
for path in targets:
    try:
        with open(path, "w") as f:
            f.write("escaped\n")
        print(f"WROTE {path}")
        sys.exit(0)
    except OSError as e:
        sys.stderr.write(f"{path}: {e.strerror}\n")
sys.exit(44)
