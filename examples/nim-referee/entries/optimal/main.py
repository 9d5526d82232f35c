import json
import sys

for line in sys.stdin:
    message = json.loads(line)
    if message["type"] == "turn":
        pile = int(message["position"].split()[1])
        print(json.dumps({"move": str(pile % 4 or 1)}), flush=True)
    elif message["type"] == "end":
        break
