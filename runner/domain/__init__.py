"""The domain layer: pure values and rules that the coordinator and the workers share.

Match values (``match_values``, ``match_record``), the codec and wire messages (``wire``),
referees (``games``), planners (``stages``), points and rank keys (``scoring``), ratings, entries and boards,
the registries of names, re-judging (``verify``) and message signatures (``signing``).
Nothing here knows about SQLite, Redis, Celery or a terminal; ``workers`` imports from
``runner`` only this layer.
"""
