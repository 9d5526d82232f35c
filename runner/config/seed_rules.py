"""What the seed documents allow of a starting board, beyond what the game's rules can play.

The games accept more than their seeds (any arena size up to 64, any
printable cell; m,n,k boards beyond 20x20 for gomoku), because they also
referee positions and other contests. A config's *starting* board is held to
its seed here, naming the seed's sentence:

- boxing (seed 002): a starting arena holds only ``-`` (vacant) and ``o``
  ("unavailable spots on the original arena board"); any other character is
  a player's mark ("YOUR 'mark' ... some other character to indicate a move
  made by another player"), which would count towards that player's score:
  refused. An arena other than 32x16 ("is 32x16 and remains 32x16 always")
  is a warning: smaller arenas keep test runs short.
- mnk (seed 004): "Dimensions of board = nnx X nny ( 1..20 X 1..20 )" and
  "No. of X/O in a straight line to win = m ( 1 .. max ( nnx,nny ) )"; the
  game already refuses anything else, so nothing is added here.
"""

from __future__ import annotations

from dataclasses import dataclass

SEED_002_START_CELLS = frozenset("-o")
SEED_002_SIZE = (32, 16)


@dataclass(frozen=True)
class BoardRule:
    message: str
    warning: bool = False


def boxing_start_rules(text: str) -> list[BoardRule]:
    lines = text.rstrip("\n").split("\n")
    found: list[BoardRule] = []
    for row, line in enumerate(lines, start=1):
        for col, ch in enumerate(line, start=1):
            if ch not in SEED_002_START_CELLS:
                found.append(
                    BoardRule(
                        f"line {row} column {col} holds {ch!r}: a starting arena holds only '-' (vacant) "
                        "and 'o' (unavailable); seed 002 reserves other characters for players' marks"
                    )
                )
                return found
    width, height = (len(lines[0]) if lines else 0), len(lines)
    if (width, height) != SEED_002_SIZE:
        found.append(
            BoardRule(
                f"the arena is {width}x{height}; seed 002's 'is 32x16 and remains 32x16 always'",
                warning=True,
            )
        )
    return found


def start_board_rules(game: str, text: str) -> list[BoardRule]:
    """What a seed says against ``text`` as a starting board of ``game``."""
    if game == "boxing":
        return boxing_start_rules(text)
    return []
