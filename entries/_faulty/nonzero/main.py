"""Exits 3 (expected verdict: crash, exit code 3)."""

import sys

sys.stdin.read()
sys.stderr.write("giving up\n")
sys.exit(3)
