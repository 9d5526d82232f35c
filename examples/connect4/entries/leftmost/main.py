"""A json-protocol entry: one process per game, one JSON object per line each way."""

import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "start":
        mark = message["mark"]  # also: seat, players, board
    elif message["type"] == "turn":
        rows = message["position"].splitlines()[1:]  # line 1 is the mark to move
        column = rows[0].index(".") + 1
        print(json.dumps({"move": str(column)}), flush=True)
    elif message["type"] == "end":
        break
