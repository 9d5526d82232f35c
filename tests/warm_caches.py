"""Compile the project and rewrite the test modules once, before pytest-xdist's workers start
(``make test`` runs this after each install: the Makefile's ``$(WARM)``).

On a fresh clone nothing is compiled yet: every xdist worker then rewrites the assertions of
every test module it collects, and compiles every project module it imports, all at once and
each for itself. On 2 cores six cold collections cost 57 s of CPU where warm ones cost 19 s
(``pytest --collect-only`` six at a time, as ``make test``'s six workers); this costs 15 s.
Here the project is compiled on every core, then the test files are split between one
collecting process per core, so the caches are filled once and each worker reads them.
Its exit code is the first failing step's. ``--compile-only`` (``make test-fast``, whose
workers lose more than they gain from the collecting) compiles and stops there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent


#: the project's modules (and the tests' helpers; not the entry programs they play), compiled
#: on every core by compileall's workers
COMPILE = [
    sys.executable, "-m", "compileall", "-q", "-j", "0", "-x", "/(fixtures|entries)/",
    "runner", "workers", "bench", "tests",
]  # fmt: skip


def main(argv: list[str]) -> int:
    # the project's modules first: each collecting process (each xdist worker, under
    # --compile-only: make test-fast) would otherwise compile all those it imports, the same
    # ones, at the same time
    compiled = subprocess.run(COMPILE, cwd=TESTS.parent, stdout=subprocess.DEVNULL)
    if argv == ["--compile-only"]:
        return compiled.returncode
    files = sorted(str(p.relative_to(TESTS.parent)) for p in TESTS.rglob("test_*.py"))
    parts = max(1, min(os.cpu_count() or 1, 4))
    collect = [
        sys.executable,
        "-m",
        "pytest",
        "--collect-only",
        "-q",
        "-p",
        "no:xdist",
        "-p",
        "no:cacheprovider",
    ]
    procs = [
        subprocess.Popen([*collect, *files[i::parts]], cwd=TESTS.parent, stdout=subprocess.DEVNULL)
        for i in range(parts)
        if files[i::parts]
    ]
    codes = [compiled.returncode, *(p.wait() for p in procs)]
    return next((c for c in codes if c != 0), 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
