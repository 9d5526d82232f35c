"""What a process sees of how it was started, as JSON on stdout (tests/core/test_forked_cli.py
compares a forked one with a fresh one). ``--read`` echoes stdin; ``--exit N`` exits N;
``--sleep S`` waits S seconds first."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import time
from pathlib import Path


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--read", action="store_true")
    parser.add_argument("--exit", type=int, default=0)
    parser.add_argument("--sleep", type=float, default=0.0)
    parser.add_argument("--env", action="append", default=[])
    args = parser.parse_args()
    time.sleep(args.sleep)
    seen = {
        "argv": sys.argv,
        "cwd": os.getcwd(),
        "env": {name: os.environ.get(name) for name in args.env},
        "tmp": tempfile.gettempdir(),
        "path0": sys.path[0],
        "leader": os.getsid(0) == os.getpid(),
        "sigint": signal.getsignal(signal.SIGINT) is signal.default_int_handler,
        "sigterm": signal.getsignal(signal.SIGTERM) == signal.SIG_DFL,
        "stdin": sys.stdin.read() if args.read else None,
        "stdout_tty": sys.stdout.isatty(),
        "main": getattr(sys.modules["__main__"].__spec__, "name", None),
        "cmdline": " ".join(Path("/proc/self/cmdline").read_text().replace("\0", " ").split()),
        "fds": sorted(int(fd) for fd in os.listdir("/proc/self/fd")),  # 0, 1, 2 and the listing's
    }
    print(json.dumps(seen))
    print("to stderr", file=sys.stderr)
    return int(args.exit)


if __name__ == "__main__":
    sys.exit(main())
