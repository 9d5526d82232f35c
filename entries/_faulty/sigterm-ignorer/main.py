"""Ignores polite signals and never answers (expected verdict: timeout; killed anyway)."""

import signal
import time

for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGXCPU):
    signal.signal(sig, signal.SIG_IGN)
while True:
    time.sleep(1)
