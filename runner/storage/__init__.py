"""The storage layer: what a run keeps on disk.

The run store (``store.RunStore``, one SQLite file, the source of truth; composed of
``schema``, ``connection``, ``queries``, ``planning``, ``match_life`` and ``rows``), the
run directory and its resume guard (``run_dir``), and what the config resolved to (``resolved``).
"""
