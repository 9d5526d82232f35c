"""Creates up to a million empty files in /tmp. Exit 45: refused before that
(an inode cap or the memory limit held); "HELD" instead of a move: it pinned
them all (bad_output)."""

import os
import sys

sys.stdin.read()
made = 0
try:
    for i in range(1_000_000):
        os.close(os.open(f"/tmp/i{i}", os.O_CREAT | os.O_WRONLY, 0o600))
        made += 1
except OSError as e:
    sys.stderr.write(f"made {made} files, then refused: {e}\n")
    sys.exit(45)
print(f"HELD {made} inodes")
