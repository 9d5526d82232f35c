"""Sleeps far past any move limit (expected verdict: timeout)."""

import time

time.sleep(600)
