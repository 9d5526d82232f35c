"""A legal first-fit move, plus a daemon that escapes its process group and
session with the classic setsid + double fork (expected verdict: left_processes)."""

import os
import sys
import time

mark = sys.argv[1]
arena = sys.stdin.read()

pid = os.fork()
if pid == 0:
    os.setsid()
    if os.fork() > 0:
        os._exit(0)
    # the daemon: detached from everything, it would live for ten minutes
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(devnull, fd)
    time.sleep(600)
    os._exit(0)
os.waitpid(pid, 0)

i = arena.find("-")
sys.stdout.write(arena if i < 0 else arena[:i] + mark + arena[i + 1 :])
