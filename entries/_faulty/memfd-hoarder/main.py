"""Holds 1 GB in unmapped memfd pages (each file under the file-size limit).
Exit 45: a write was refused (the limit held); "HELD" instead of a move: the
sandbox let it pin it all (bad_output)."""

import os
import sys

FILE = 8 << 20
chunk = b"\1" * (1 << 20)
sys.stdin.read()
fds = []
try:
    for i in range((1 << 30) // FILE):
        fd = os.memfd_create(f"hoard{i}")
        for _ in range(FILE // len(chunk)):
            os.write(fd, chunk)
        fds.append(fd)
except OSError as e:
    sys.stderr.write(f"memfd refused: {e}\n")
    sys.exit(45)
print("HELD 1 GB in memfd")
