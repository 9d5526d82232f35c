"""Walks every directory it can see (but /proc, /sys and /dev) for anything of
a run or another entry. Prints what it found instead of a move (bad_output),
or exits 43 ("looked everywhere, found nothing")."""

import os
import re
import sys

#: file names that only the organiser's side has: a run's store, the embedded
#: Redis's files, a worker's pid file and build-cache markers, entry manifests
RUN_FILES = {
    "tournament.sqlite", "tournament.sqlite-wal", "appendonly.aof", "redis.conf", "worker.pid",
    "build_failed", "entry.yaml", "arena.A", "arena.B",
}  # fmt: skip
#: packed artifacts are named by their sha256
ARTIFACT = re.compile(r"^[0-9a-f]{64}(\.tar\.gz)?$")
SKIP = {"/proc", "/sys", "/dev"}

sys.stdin.read()
own = os.path.realpath(".")
found = []
for top, dirs, files in os.walk("/", onerror=lambda e: None):
    dirs[:] = [d for d in dirs if os.path.join(top, d) not in SKIP]
    if top == own or top.startswith(own + "/"):
        continue  # its own working copy
    for name in files:
        if name in RUN_FILES or ARTIFACT.match(name):
            found.append(os.path.join(top, name))
    found += [os.path.join(top, d) + "/" for d in dirs if ARTIFACT.match(d)]
if found:
    print("FOUND " + " ".join(found[:20]))
    sys.exit(0)
sys.stderr.write("nothing of any run or entry in sight\n")
sys.exit(43)
