"""Reads its input and writes nothing (expected verdict: no_output)."""

import sys

sys.stdin.read()
