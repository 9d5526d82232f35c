"""Benchmarks (docs/benchmarks.md): run with ``make bench`` (``python -m bench``).

Each benchmark module has ``main(quick: bool) -> None`` and prints ratios,
one ``name: value`` line each. They are not part of the test suite.
"""
