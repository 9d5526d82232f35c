"""The run key and message signatures (DESIGN §6.1).

Whoever knows the Redis URL can push messages; only holders of the *run key*
can make ones we act on. The run key is a random secret that is not the
Redis password: a worker refuses a task, and the coordinator a note, whose
signature does not verify.

We sign with HMAC-SHA256 over the message's canonical JSON (keys sorted, no
spaces, UTF-8) rather than Celery's own message signing: the latter signs
the whole Celery message with X.509 certificates and the ``auth``
serializer, which needs a PKI per worker, while our messages are already
plain dicts that both sides build and read. ``sign`` adds a ``sig`` field;
``verify`` checks and removes it. Both work on any JSON-able dict, so they
apply to whatever a message type's ``to_dict()`` returns.

Artifacts are signed by digest: ``artifact_signature(key, digest, blob)``
binds the packed bytes to their digest (the worker also re-checks the
unpacked tree's digest before building).

Where the key comes from (``load_run_key``):

* ``TOURNEY_RUN_KEY``: the key itself (64 hex characters);
* ``TOURNEY_RUN_KEY_FILE`` or an explicit path (``--key-file``): a file
  holding it, which must not be readable by group or others (0600);
* the embedded default: ``tourney run`` generates ``<run dir>/run.key``
  (0600) when the run has none and hands it to its local workers.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import json
import os
import re
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.domain.contracts import SIGNATURE_KEY, canonical_json, unsigned
from runner.domain.private_files import read_private_text
from runner.domain.redaction import register_run_key
from runner.errors import MessageRejected, WorkerUnfit

#: the field ``sign`` adds (the contracts' message types ignore it when reading)
SIG_FIELD = SIGNATURE_KEY
#: how the signature is made (a verifier refuses any other)
SCHEME = "hmac-sha256"
KEY_ENV = "TOURNEY_RUN_KEY"
KEY_FILE_ENV = "TOURNEY_RUN_KEY_FILE"
KEY_FILE_NAME = "run.key"


class SignatureError(MessageRejected, ValueError):
    """A message is unsigned, signed with another key, or altered after signing."""


class RunKeyError(WorkerUnfit, RuntimeError):
    """No usable run key: missing, malformed, or in a file others can read."""


@dataclass(frozen=True)
class RunKey:
    secret: bytes

    @functools.cached_property  # asked for by every signature made or checked
    def key_id(self) -> str:
        """A public name of the key (tells keys apart without revealing them)."""
        return hashlib.sha256(b"tourney-run-key-id:" + self.secret).hexdigest()[:16]

    def hex(self) -> str:
        return self.secret.hex()

    @classmethod
    def generate(cls) -> RunKey:
        return cls(secrets.token_bytes(32))

    @classmethod
    def from_hex(cls, text: str) -> RunKey:
        text = text.strip()
        try:
            secret = bytes.fromhex(text)
        except ValueError:
            raise RunKeyError("a run key is 64 hex characters") from None
        if len(secret) < 16:
            raise RunKeyError("a run key must be at least 128 bits (32 hex characters)")
        return cls(secret)

    def __repr__(self) -> str:  # never print the secret
        return f"RunKey(id={self.key_id})"


def _mac(key: RunKey, payload: dict[str, Any]) -> str:
    return hmac.new(key.secret, canonical_json(unsigned(payload)), hashlib.sha256).hexdigest()


def sign(payload: dict[str, Any], key: RunKey) -> dict[str, Any]:
    """A copy of ``payload`` with a ``sig`` field over everything else in it."""
    signed = unsigned(payload)
    signed[SIG_FIELD] = {"scheme": SCHEME, "key": key.key_id, "mac": _mac(key, signed)}
    return signed


def verify(payload: dict[str, Any], key: RunKey) -> dict[str, Any]:
    """``payload`` without its ``sig`` field if the signature is ours; ``SignatureError`` if not."""
    sig = payload.get(SIG_FIELD)
    if sig is None:
        raise SignatureError("unsigned")
    if not isinstance(sig, dict) or sig.get("scheme") != SCHEME or not isinstance(sig.get("mac"), str):
        raise SignatureError("malformed signature")
    if sig.get("key") != key.key_id:
        raise SignatureError(f"signed with another key ({str(sig.get('key'))[:16]})")
    if not hmac.compare_digest(sig["mac"], _mac(key, payload)):
        raise SignatureError("signature does not match the content (altered)")
    return unsigned(payload)


def signed_json(payload: dict[str, Any], key: RunKey) -> bytes:
    """``sign(payload, key)`` as JSON bytes, encoding ``payload`` once (not once for the MAC and
    again for the wire: issue 13, a match's result is most of a note's size): its canonical
    JSON, which the MAC covers, with the ``sig`` field appended. Any JSON reader reads it as
    ``sign`` would have made it; ``verify_json`` checks it without encoding it again."""
    body = canonical_json(unsigned(payload))
    mac = hmac.new(key.secret, body, hashlib.sha256).hexdigest()
    sig = json.dumps({"key": key.key_id, "mac": mac, "scheme": SCHEME}, separators=(",", ":"))
    return body[:-1] + (b"," if len(body) > 2 else b"") + f'"{SIG_FIELD}":{sig}}}'.encode()


#: the end of what ``signed_json`` writes (its signature, appended to canonical JSON)
_APPENDED_SIG = re.compile(
    rb'(?:,|(?<=\{))"' + SIG_FIELD.encode() + rb'":\{"key":"([0-9a-f]{16})","mac":"([0-9a-f]{64})",'
    rb'"scheme":"' + SCHEME.encode() + rb'"\}\}\Z'
)


def verify_json(raw: bytes | str, key: RunKey) -> dict[str, Any]:
    """``verify(json.loads(raw), key)``, cheaper for what ``signed_json`` wrote: the MAC is
    checked over the very bytes that are then decoded, so nothing is encoded again. Anything
    else (another sender's encoding, a bad signature) takes the general path, which says what
    is wrong. ``ValueError`` if ``raw`` is not a JSON object."""
    data = raw.encode() if isinstance(raw, str) else raw
    m = _APPENDED_SIG.search(data)
    if m is not None and m.group(1).decode() == key.key_id:
        body = data[: m.start()] + b"}"
        mac = hmac.new(key.secret, body, hashlib.sha256).hexdigest().encode()
        if hmac.compare_digest(mac, m.group(2)):
            payload = json.loads(body)
            if isinstance(payload, dict) and SIG_FIELD not in payload:
                return payload  # exactly the bytes the key's holder signed
    signed = json.loads(data)
    if not isinstance(signed, dict):
        raise ValueError("a signed message is a JSON object")
    return verify(signed, key)


def artifact_signature(key: RunKey, digest: str, blob: bytes) -> str:
    """The signature stored beside an artifact: binds its bytes to its digest."""
    h = hashlib.sha256(blob).hexdigest()
    return hmac.new(key.secret, f"artifact:{digest}:{h}".encode(), hashlib.sha256).hexdigest()


def check_artifact(key: RunKey, digest: str, blob: bytes, signature: bytes | str | None) -> None:
    if signature is None:
        raise SignatureError(f"artifact {digest[:12]} is unsigned")
    text = signature.decode() if isinstance(signature, bytes) else signature
    if not hmac.compare_digest(text, artifact_signature(key, digest, blob)):
        raise SignatureError(f"artifact {digest[:12]} is altered or signed with another key")


# -- where keys live -----------------------------------------------------------------
def read_key_file(path: Path) -> RunKey:
    return RunKey.from_hex(read_private_text(path, "the run key file", RunKeyError))


def write_key_file(path: Path, key: RunKey) -> None:
    """Write ``key`` to a new 0600 file (never readable by others, not even briefly)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as f:
        f.write(key.hex() + "\n")


def load_run_key(path: Path | None = None, *, environ: dict[str, str] | None = None) -> RunKey:
    """The run key from ``path``, else ``$TOURNEY_RUN_KEY``, else ``$TOURNEY_RUN_KEY_FILE``."""
    env = os.environ if environ is None else environ
    if path is not None:
        return _taken(read_key_file(path))
    if env.get(KEY_ENV):
        return _taken(RunKey.from_hex(env[KEY_ENV]))
    if env.get(KEY_FILE_ENV):
        return _taken(read_key_file(Path(env[KEY_FILE_ENV])))
    raise RunKeyError(
        f"no run key: pass --key-file FILE (mode 0600) or set {KEY_ENV}; "
        f"the coordinator keeps it in <run dir>/{KEY_FILE_NAME}"
    )


def run_key_for(run_dir: Path) -> RunKey:
    """The coordinator's key: ``$TOURNEY_RUN_KEY``/``_FILE`` if set, else ``<run dir>/run.key``
    (generated on first use)."""
    if os.environ.get(KEY_ENV) or os.environ.get(KEY_FILE_ENV):
        return load_run_key()
    path = run_dir / KEY_FILE_NAME
    if not path.exists():
        write_key_file(path, RunKey.generate())
    return _taken(read_key_file(path))


def _taken(key: RunKey) -> RunKey:
    """``key``, once this process has taken it: from now on it is redacted from whatever
    an entry prints (``runner.domain.redaction``)."""
    register_run_key(key.secret)
    return key
