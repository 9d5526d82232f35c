"""The storage layer: what a run keeps on disk.

The run store (``store``, one SQLite file, the source of truth), the run directory and
its resume guard (``run_dir``), and what the config resolved to (``resolved``).
"""
