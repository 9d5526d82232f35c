"""A text-protocol entry: started once per move; stdin is the position, stdout the move."""

import sys

mark = sys.argv[1]  # "{mark}" in entry.yaml's run: X or O
lines = sys.stdin.read().splitlines()
to_move, top_row = lines[0], lines[1]  # connect4's position_text: the mark to move, then the rows
free = [x for x, cell in enumerate(top_row) if cell == "."]
print(free[-1] + 1)
