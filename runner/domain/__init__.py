"""The domain layer: pure values and rules that the coordinator and the workers share.

Match values and wire messages (``contracts``, ``match_record``), referees (``games``),
planners (``stages``), points and rank keys (``scoring``), ratings, entries and boards,
the registries of names, re-judging (``verify``) and message signatures (``signing``).
Nothing here knows about SQLite, Redis, Celery or a terminal; ``workers`` imports from
``runner`` only this layer.
"""
