"""Bearer tokens of teams and of the organiser: shown once, kept only as a salted hash.

A token is ``<id>.<secret>``: the id (random, not secret) finds the row without scanning
every team; the secret (32 random bytes) is checked against ``sha256(salt || secret)`` with
``hmac.compare_digest``, so the comparison takes the same time wherever it differs. A fast
hash is enough here: the secret has 256 bits of entropy, so a stolen store cannot be
brute-forced back into tokens (a slow KDF protects low-entropy passwords, which these are not).
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from dataclasses import dataclass

PREFIX = "tt_"


@dataclass(frozen=True)
class TokenHash:
    """What the store keeps of a token."""

    token_id: str
    salt: str
    digest: str


def new_token() -> tuple[str, TokenHash]:
    """A fresh token (to show once) and the hash to keep."""
    token_id = secrets.token_hex(8)
    secret = secrets.token_urlsafe(32)
    salt = secrets.token_hex(16)
    return f"{PREFIX}{token_id}.{secret}", TokenHash(token_id, salt, _digest(salt, secret))


def _digest(salt: str, secret: str) -> str:
    return hashlib.sha256(bytes.fromhex(salt) + secret.encode()).hexdigest()


def split_token(token: str) -> tuple[str, str] | None:
    """(id, secret) of a well-formed token, else None."""
    token = token.strip()
    if not token.startswith(PREFIX) or "." not in token or len(token) > 200:
        return None
    token_id, _, secret = token[len(PREFIX) :].partition(".")
    if len(token_id) != 16 or not secret:
        return None
    return token_id, secret


def matches(secret: str, kept: TokenHash) -> bool:
    """Whether ``secret`` is the one ``kept`` was made from (constant time)."""
    return hmac.compare_digest(_digest(kept.salt, secret), kept.digest)
