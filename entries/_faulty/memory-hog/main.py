"""Allocates 4 GB, 256 MB at a time, touching every page (expected verdict: memory_limit)."""

chunks = []
for _ in range(16):
    chunks.append(bytearray(256 << 20))  # zero-filled: the pages are really used
print(len(chunks))
