"""Writes files into every writable place until 1 GB or a refusal.
Exit 45: the caps held (ENOSPC/EFBIG/ENOMEM); "HELD" instead of a move: it
pinned 1 GB (bad_output)."""

import os
import sys

FILE = 8 << 20
chunk = b"\1" * (1 << 20)
sys.stdin.read()
held = 0
refused = None
for place in ("/tmp", "/dev/shm", "."):
    i = 0
    while held < (1 << 30):
        try:
            with open(os.path.join(place, f"hoard{i}"), "wb") as f:
                for _ in range(FILE // len(chunk)):
                    f.write(chunk)
                    f.flush()
                    held += len(chunk)
        except OSError as e:
            refused = e
            break
        i += 1
if held >= (1 << 30):
    print("HELD 1 GB in tmpfs files")
    sys.exit(0)
sys.stderr.write(f"held {held >> 20} MiB, then refused: {refused}\n")
sys.exit(45)
