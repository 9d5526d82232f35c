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

One signing path: a message is encoded once by the codec (``runner.domain.wire``), the
signature covers those very bytes and is appended to them as the JSON object's last member,
``sig`` (``signed``, ``sign_bytes``); a receiver checks it over the bytes as they arrived and
only then decodes them, once (``open_message``, ``open_note``, over ``open_signed``). Nothing
is encoded again to be checked, so no canonical form has to be agreed on beyond "these bytes".
"""

from __future__ import annotations

import functools
import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TypeVar

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, PublicFormat

from runner.domain.wire import Note, decode, decode_note, encode
from runner.errors import MessageRejected, WorkerUnfit

#: the member ``sign_bytes`` appends to a signed JSON object
SIG_FIELD = "sig"
#: how the signature is made (a verifier refuses any other)
SCHEME = "ed25519"

T = TypeVar("T")


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


def sign_bytes(body: bytes, key: SigningKey) -> bytes:
    """``body`` (the bytes of a JSON object, as ``runner.domain.wire.encode`` writes it) with
    a ``sig`` member appended that covers exactly those bytes: still one JSON object."""
    if not (body.startswith(b"{") and body.endswith(b"}")):
        raise ValueError("only a JSON object is signed")
    sig = f'{{"key":"{key.key_id}","scheme":"{SCHEME}","sig":"{key.signature(body).hex()}"}}'
    return body[:-1] + (b"," if len(body) > 2 else b"") + f'"{SIG_FIELD}":{sig}}}'.encode()


#: the end of what ``sign_bytes`` writes; its length is fixed (a 16-digit key id, a 64-byte
#: signature), so only that many bytes at the end are looked at, whatever the message's size
_APPENDED_SIG = re.compile(
    rb'"' + SIG_FIELD.encode() + rb'":\{"key":"([0-9a-f]{16})","scheme":"' + SCHEME.encode()
    + rb'","sig":"([0-9a-f]{128})"\}\}'
)  # fmt: skip
_SIG_LEN = len(f'"{SIG_FIELD}":{{"key":"","scheme":"{SCHEME}","sig":""}}}}') + 16 + 128


def open_signed(raw: bytes | str, keys: Keyring | PublicKey) -> tuple[bytes, str]:
    """(the signed bytes without their signature, the id of the key that signed them), if one
    of ``keys`` signed exactly these bytes with ``sign_bytes``; ``SignatureError`` if not.
    Nothing is decoded: the caller decodes the body once, after it is known to be genuine."""
    data = raw.encode() if isinstance(raw, str) else raw
    m = _APPENDED_SIG.fullmatch(data, len(data) - _SIG_LEN) if len(data) > _SIG_LEN else None
    before = data[-_SIG_LEN - 1 : -_SIG_LEN]  # the object's "{" (nothing else signed) or a ","
    if m is None or before not in (b",", b"{"):
        raise SignatureError("unsigned" if f'"{SIG_FIELD}":'.encode() not in data else "malformed signature")
    key = _ring(keys).get(m.group(1).decode())
    if key is None:
        raise SignatureError(f"signed with another key ({m.group(1).decode()})")
    body = data[: -_SIG_LEN - 1] + (b"{}" if before == b"{" else b"}")
    if not key.valid(bytes.fromhex(m.group(2).decode()), body):
        raise SignatureError("signature does not match the content (altered)")
    return body, key.key_id


def signed(message: object, key: SigningKey) -> bytes:
    """``message`` (a value or message of ``runner.domain.wire``) encoded once by the codec
    and signed over those bytes."""
    return sign_bytes(encode(message), key)


def open_message(raw: bytes | str, kind: type[T], keys: Keyring | PublicKey) -> tuple[T, str]:
    """(the ``kind`` in ``raw``, the id of the key that signed it): the signature checked over
    the bytes as they came, then the bytes decoded once. ``SignatureError``, ``WireError``."""
    body, key_id = open_signed(raw, keys)
    return decode(body, kind), key_id


def open_note(raw: bytes | str, keys: Keyring | PublicKey) -> tuple[Note, str]:
    """``open_message`` for a worker's note, whichever its kind."""
    body, key_id = open_signed(raw, keys)
    return decode_note(body), key_id


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
