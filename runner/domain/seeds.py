"""Seeds derived from a config's seed and names, stable across processes and machines.

Kept apart from ``runner.domain.boards`` (pydantic models) because workers
need it per game, and a worker should not import pydantic to start.
"""

from __future__ import annotations

import hashlib
import json


def derive_seed(*parts: object) -> int:
    """A 63-bit seed from JSON-serialisable parts; stable across processes (unlike ``hash()``)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return int.from_bytes(hashlib.sha256(blob.encode()).digest()[:8], "big") >> 1
