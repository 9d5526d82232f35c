"""One entry's artifact into Redis, signed by the organiser, for every worker to fetch by digest
(docs/scale-out.md): what ``CeleryDispatcher.publish_artifacts`` does for each digest."""

from __future__ import annotations

from pathlib import Path

import redis

from runner.domain.packing import REFUSED_MAGIC
from runner.domain.signing import SigningKey, artifact_signature
from runner.orchestration.workers_gate import KEYS


def publish_artifact(r: redis.Redis, key: SigningKey, digest: str, path: Path) -> None:
    """Put the packed file at ``path`` (or its ``.refused`` one-line stand-in) under its digest,
    with the organiser's signature, unless Redis holds it already; Redis errors propagate."""
    blob_key = KEYS.artifact(digest)
    sig_key = KEYS.artifact_sig(digest, key.key_id)
    if r.exists(blob_key, sig_key) == 2 and not _refusal_to_replace(r, blob_key, path):
        return
    blob = path.read_bytes()
    with r.pipeline(transaction=True) as pipe:
        pipe.set(blob_key, blob)
        pipe.set(sig_key, artifact_signature(key, digest, blob))
        pipe.execute()


def _refusal_to_replace(r: redis.Redis, blob_key: str, path: Path) -> bool:
    """Whether Redis holds a refusal (``runner.storage.artifacts``) for a digest this run has
    the tar.gz of now (an earlier session could not pack the entry as recorded; this one did)."""
    if path.name.endswith(".refused"):
        return False
    head = r.getrange(blob_key, 0, len(REFUSED_MAGIC) - 1)
    return isinstance(head, bytes) and head == REFUSED_MAGIC
