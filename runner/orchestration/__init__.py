"""The orchestration layer: driving a run to its end.

The coordinator's loop, the ``Dispatcher`` protocol it hands matches to (``dispatcher``) and
its two kinds (``inline_dispatcher``, ``celery_dispatcher``), the only door from ``runner``
into ``workers`` (``workers_gate``), what a run starts and stops (``cluster``: the embedded
Redis, local workers), process bookkeeping, worker quarantine, and ``rerun``'s replay of one
match.
"""
