"""Writes 100 MB to stdout (expected verdict: bad_output, output over the cap)."""

import sys

block = b"-" * (1 << 20)
for _ in range(100):
    sys.stdout.buffer.write(block)
sys.stdout.buffer.flush()
