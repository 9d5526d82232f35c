"""Answers with text that is no arena (expected verdict: bad_output)."""

import sys

sys.stdin.read()
sys.stdout.write("I resign, but in a format nobody understands\n\x00\x01\x02\n")
