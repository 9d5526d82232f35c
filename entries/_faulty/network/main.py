"""Tries to reach a server on the host's loopback (e.g. the tournament's Redis).

Ports: 6379 and the one in ``port.txt`` next to this file, if any. If a
connection succeeds it says so on stdout (an obvious bad_output, and the
server sees a connection); if none does, it exits 42 (expected verdict:
crash, exit code 42).
"""

import os
import socket
import sys

here = os.path.dirname(os.path.abspath(__file__))
ports = [6379]
try:
    with open(os.path.join(here, "port.txt")) as f:
        ports.insert(0, int(f.read().strip()))
except (OSError, ValueError):
    pass

for port in ports:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5) as s:
            s.sendall(b"PING from a sandboxed entry\r\n")
        print(f"CONNECTED to 127.0.0.1:{port}")
        sys.exit(0)
    except OSError as e:
        sys.stderr.write(f"connect 127.0.0.1:{port}: {e}\n")
sys.exit(42)
