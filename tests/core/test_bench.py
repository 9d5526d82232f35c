"""The node count of an engine's ``bench`` as OpenBench reads it (runner/domain/bench.py)."""

from __future__ import annotations

import pytest

from runner.domain.bench import bad_bench, bench_nodes

STOCKFISH_TAIL = """info depth 13 seldepth 19 multipv 1 score cp 30 nodes 85471 nps 449847 time 190 pv d2d4
bestmove d2d4 ponder f8g8

===========================
Total time (ms) : 5058
Nodes searched  : 3467381
Nodes/second    : 685524
"""


@pytest.mark.parametrize(
    ("output", "nodes"),
    [
        (STOCKFISH_TAIL, 3467381),  # the last count wins over the info lines before it
        ("Bench: 4187001 nodes 1534000 nps\n", 4187001),  # Ethereal, Berserk: "N nodes N nps"
        ("6219341 nodes 2071334 nps\n", 6219341),
        ("nothing to see\n", None),
        ("", None),
    ],
)
def test_the_count_is_read_as_openbench_reads_it(output: str, nodes: int | None) -> None:
    assert bench_nodes(output) == nodes


def test_a_count_that_disagrees_is_one_line_naming_both() -> None:
    assert bad_bench(3467381, STOCKFISH_TAIL) is None
    assert bad_bench(3467382, STOCKFISH_TAIL) == "bad bench: expected 3467382, got 3467381"
    assert (
        bad_bench(5, "usage: engine [uci]\n")
        == "bad bench: expected 5, got no node count (last line: usage: engine [uci])"
    )
