"""The orchestration layer: driving a run to its end.

The coordinator's loop, how matches reach workers (``dispatch``: the only door from
``runner`` into ``workers``), the embedded Redis, process bookkeeping, worker quarantine,
and ``rerun``'s replay of one match.
"""
