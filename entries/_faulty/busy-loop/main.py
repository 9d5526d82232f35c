"""Spins forever (expected verdict: cpu_limit, or timeout when CPU and wall limits are equal)."""

n = 0
while True:
    n += 1
