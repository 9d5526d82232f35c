"""Ed25519 message signatures: who may make a message we act on (docs/fleet.md).

Whoever knows the Redis URL can push messages; only holders of a private key
can make ones we act on, and each side holds a different one:

* the *organiser key* signs tasks, artifacts and quarantine notices; workers
  hold only its public half, so no worker can forge a task;
* each *worker key* signs that worker's notes (started, heartbeat records,
  results, refusals); the coordinator holds the public halves in its fleet
  registry (``runner.domain.fleet``) and attributes a note to the worker whose
  key verified it, never to a name written in the note.

Asymmetric keys rather than a shared secret (the per-run HMAC key this
replaces): a shared secret lets every holder sign as every other one, so
neither "tasks only from the organiser" nor "results attributed by key" can
hold. Ed25519 from ``cryptography``: small keys (32 bytes), fast signatures
(tens of microseconds, on every note), no parameters to get wrong.

A signature covers the message's canonical JSON (sorted keys, no spaces,
UTF-8) without its ``sig`` field; ``sign`` adds that field, ``verify`` checks
and removes it. ``signed_json``/``verify_json`` do the same over bytes without
encoding a message twice (a result is most of a note's size).
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from runner.domain.contracts import SIGNATURE_KEY, canonical_json, unsigned
from runner.errors import MessageRejected, WorkerUnfit

#: the field ``sign`` adds (the contracts' message types ignore it when reading)
SIG_FIELD = SIGNATURE_KEY
#: how the signature is made (a verifier refuses any other)
SCHEME = "ed25519"


class SignatureError(MessageRejected, ValueError):
    """A message is unsigned, signed with a key we do not trust, or altered after signing."""


class KeyFileError(WorkerUnfit, RuntimeError):
    """No usable key: missing, malformed, or in a file others can read."""


def fingerprint(raw_public: bytes) -> str:
    """A public key's short name (16 hex digits of its SHA-256): tells keys apart in messages."""
    return hashlib.sha256(b"tourney-ed25519:" + raw_public).hexdigest()[:16]


@dataclass(frozen=True)
class PublicKey:
    raw: bytes

    @functools.cached_property
    def key_id(self) -> str:
        return fingerprint(self.raw)

    @functools.cached_property
    def _key(self) -> Ed25519PublicKey:
        return Ed25519PublicKey.from_public_bytes(self.raw)

    def hex(self) -> str:
        return self.raw.hex()

    @classmethod
    def from_hex(cls, text: str) -> PublicKey:
        try:
            raw = bytes.fromhex(text.strip())
            Ed25519PublicKey.from_public_bytes(raw)
        except ValueError:
            raise KeyFileError("a public key is 64 hex characters (Ed25519)") from None
        return cls(raw)

    def valid(self, signature: bytes, data: bytes) -> bool:
        try:
            self._key.verify(signature, data)
        except InvalidSignature:
            return False
        return True


@dataclass(frozen=True)
class SigningKey:
    """An Ed25519 private key (the organiser's, or one worker's)."""

    secret: bytes

    @functools.cached_property
    def _key(self) -> Ed25519PrivateKey:
        return Ed25519PrivateKey.from_private_bytes(self.secret)

    @functools.cached_property
    def public(self) -> PublicKey:
        return PublicKey(self._key.public_key().public_bytes(Encoding.Raw, PublicFormat.Raw))

    @property
    def key_id(self) -> str:
        return self.public.key_id

    def hex(self) -> str:
        return self.secret.hex()

    def signature(self, data: bytes) -> bytes:
        return self._key.sign(data)

    @classmethod
    def generate(cls) -> SigningKey:
        raw = Ed25519PrivateKey.generate().private_bytes(Encoding.Raw, PrivateFormat.Raw, NoEncryption())
        return cls(raw)

    @classmethod
    def from_hex(cls, text: str) -> SigningKey:
        try:
            secret = bytes.fromhex(text.strip())
            Ed25519PrivateKey.from_private_bytes(secret)
        except ValueError:
            raise KeyFileError("a private key is 64 hex characters (Ed25519)") from None
        return cls(secret)

    def __repr__(self) -> str:  # never print the secret
        return f"SigningKey(id={self.key_id})"


#: the keys a verifier trusts, by key id (one key is a keyring of one)
Keyring = Mapping[str, PublicKey]


def keyring(*keys: PublicKey) -> dict[str, PublicKey]:
    return {k.key_id: k for k in keys}


def _ring(keys: Keyring | PublicKey) -> Keyring:
    return keyring(keys) if isinstance(keys, PublicKey) else keys


def sign(payload: dict[str, Any], key: SigningKey) -> dict[str, Any]:
    """A copy of ``payload`` with a ``sig`` field over everything else in it."""
    signed = unsigned(payload)
    sig = key.signature(canonical_json(signed)).hex()
    signed[SIG_FIELD] = {"key": key.key_id, "scheme": SCHEME, "sig": sig}
    return signed


def verify_by(payload: dict[str, Any], keys: Keyring | PublicKey) -> tuple[dict[str, Any], str]:
    """(``payload`` without its ``sig`` field, the id of the key that signed it), if that key
    is one of ``keys``; ``SignatureError`` if not."""
    sig = payload.get(SIG_FIELD)
    if sig is None:
        raise SignatureError("unsigned")
    if not isinstance(sig, dict) or sig.get("scheme") != SCHEME or not isinstance(sig.get("sig"), str):
        raise SignatureError("malformed signature")
    key = _ring(keys).get(str(sig.get("key")))
    if key is None:
        raise SignatureError(f"signed with another key ({str(sig.get('key'))[:16]})")
    try:
        raw_sig = bytes.fromhex(sig["sig"])
    except ValueError:
        raise SignatureError("malformed signature") from None
    body = unsigned(payload)
    if not key.valid(raw_sig, canonical_json(body)):
        raise SignatureError("signature does not match the content (altered)")
    return body, key.key_id


def verify(payload: dict[str, Any], keys: Keyring | PublicKey) -> dict[str, Any]:
    """``payload`` without its ``sig`` field if one of ``keys`` signed it; ``SignatureError`` if not."""
    return verify_by(payload, keys)[0]


def signed_json(payload: dict[str, Any], key: SigningKey) -> bytes:
    """``sign(payload, key)`` as JSON bytes, encoding ``payload`` once: its canonical JSON,
    which the signature covers, with the ``sig`` field appended (issue 13: a result is most
    of a note's size). ``verify_json`` checks it without encoding it again."""
    body = canonical_json(unsigned(payload))
    sig = json.dumps(
        {"key": key.key_id, "scheme": SCHEME, "sig": key.signature(body).hex()}, separators=(",", ":")
    )
    return body[:-1] + (b"," if len(body) > 2 else b"") + f'"{SIG_FIELD}":{sig}}}'.encode()


#: the end of what ``signed_json`` writes (its signature, appended to canonical JSON)
_APPENDED_SIG = re.compile(
    rb'(?:,|(?<=\{))"' + SIG_FIELD.encode() + rb'":\{"key":"([0-9a-f]{16})","scheme":"'
    + SCHEME.encode() + rb'","sig":"([0-9a-f]{128})"\}\}\Z'
)  # fmt: skip


def verify_json_by(raw: bytes | str, keys: Keyring | PublicKey) -> tuple[dict[str, Any], str]:
    """``verify_by(json.loads(raw), keys)``, cheaper for what ``signed_json`` wrote: the
    signature is checked over the very bytes that are then decoded. Anything else takes the
    general path, which says what is wrong. ``ValueError`` if ``raw`` is not a JSON object."""
    data = raw.encode() if isinstance(raw, str) else raw
    ring = _ring(keys)
    m = _APPENDED_SIG.search(data)
    if m is not None:
        key = ring.get(m.group(1).decode())
        body = data[: m.start()] + b"}"
        if key is not None and key.valid(bytes.fromhex(m.group(2).decode()), body):
            payload = json.loads(body)
            if isinstance(payload, dict) and SIG_FIELD not in payload:
                return payload, key.key_id  # exactly the bytes the key's holder signed
    signed = json.loads(data)
    if not isinstance(signed, dict):
        raise ValueError("a signed message is a JSON object")
    return verify_by(signed, ring)


def verify_json(raw: bytes | str, keys: Keyring | PublicKey) -> dict[str, Any]:
    return verify_json_by(raw, keys)[0]


def _artifact_bytes(digest: str, blob: bytes) -> bytes:
    return f"artifact:{digest}:{hashlib.sha256(blob).hexdigest()}".encode()


def artifact_signature(key: SigningKey, digest: str, blob: bytes) -> str:
    """The organiser's signature stored beside an artifact: binds its bytes to its digest."""
    return key.signature(_artifact_bytes(digest, blob)).hex()


def check_artifact(key: PublicKey, digest: str, blob: bytes, signature: bytes | str | None) -> None:
    if signature is None:
        raise SignatureError(f"artifact {digest[:12]} is unsigned")
    text = signature.decode() if isinstance(signature, bytes) else signature
    try:
        raw = bytes.fromhex(text)
    except ValueError:
        raw = b""
    if not key.valid(raw, _artifact_bytes(digest, blob)):
        raise SignatureError(f"artifact {digest[:12]} is altered or signed with another key")
