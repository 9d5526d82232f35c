"""An engine's bench: the node count its ``bench`` command prints, as OpenBench reads it
(docs/engines.md, "Build checks").

Engine developers sign each version with its bench, the total of nodes that ``engine bench``
searches over a fixed set of positions (stockfish: ``Nodes searched  : 3467381`` on stderr): a
build that searches differently (another compiler, a stale network, a wrong commit) prints
another count. An entry that declares ``bench: N`` has its build refused by the worker when the
count differs, OpenBench's "bad bench", before it plays a game.

The count is read as OpenBench's client reads it (``Client/bench.py``, restated here): from the
last line of the output back, each line with everything but letters, digits and spaces made a
space, the first ``nodes searched N``, ``N nodes`` or ``nodes N`` found.
"""

from __future__ import annotations

import re

BENCH_ARG = "bench"
_COUNT = re.compile(r"(nodes searched\s+\d+)|(\d+\s+nodes)|(nodes\s+\d+)", re.IGNORECASE)


def bench_nodes(output: str) -> int | None:
    """The node count a ``bench`` printed (module doc), or None when it printed none."""
    for line in reversed(output.splitlines()):
        found = _COUNT.search(re.sub(r"[^a-zA-Z0-9 ]+", " ", line))
        if found:
            digits = re.search(r"\d+", found.group())
            if digits:
                return int(digits.group())
    return None


def bad_bench(expected: int, output: str) -> str | None:
    """The one line that refuses a build whose bench disagrees (None: it agrees)."""
    got = bench_nodes(output)
    if got == expected:
        return None
    if got is None:
        last = next((ln.strip() for ln in reversed(output.splitlines()) if ln.strip()), "")
        return f"bad bench: expected {expected}, got no node count" + (
            f" (last line: {last[:120]})" if last else ""
        )
    return f"bad bench: expected {expected}, got {got}"
