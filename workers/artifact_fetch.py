"""Fetching a packed entry from Redis by its digest, checked against the organiser's signature
(docs/scale-out.md): what a worker does before it builds an entry it has not seen."""

from __future__ import annotations

import time
from collections.abc import Callable

import redis

from runner.domain.signing import PublicKey, check_artifact
from runner.errors import BrokerWireError, RetryElsewhere
from workers.broker_keys import KEYS
from workers.broker_wire import wire_errors

#: artifact fetch: attempts and pause (the coordinator re-publishes missing ones)
FETCH_ATTEMPTS = 5
FETCH_PAUSE_S = 2.0


class FetchFailed(RetryElsewhere, RuntimeError):
    """An artifact could not be fetched: the broker did not answer, or does not hold it (the
    coordinator publishes every artifact before the first match and again after the broker lost
    its data). This machine's failure, retried elsewhere; an artifact that arrives but is not
    the organiser's (``SignatureError``) is the entry's (``workers.artifacts``)."""


def artifact_fetcher(r: redis.Redis, key: PublicKey | None = None) -> Callable[[str], bytes]:
    """Fetch a packed entry by digest; with ``key``, only one that organiser signed."""

    def fetch(digest: str) -> bytes:
        last: Exception | None = None
        for i in range(FETCH_ATTEMPTS):
            try:
                with wire_errors():
                    blob = r.get(KEYS.artifact(digest))
                    if isinstance(blob, bytes):
                        if key is not None:
                            signature = r.get(KEYS.artifact_sig(digest, key.key_id))
                            check_artifact(
                                key, digest, blob, signature if isinstance(signature, bytes) else None
                            )
                        return blob
                last = LookupError(f"artifact {digest[:12]} is not in Redis")
            except BrokerWireError as e:
                last = e
            if i + 1 < FETCH_ATTEMPTS:
                time.sleep(FETCH_PAUSE_S)
        raise FetchFailed(f"cannot fetch artifact {digest[:12]}: {last}")

    return fetch
