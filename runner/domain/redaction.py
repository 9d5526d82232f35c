"""Secrets taken out of what entries print (docs/config.md#secrets-never-reach-the-report).

With ``sandbox: none`` on a worker that is not root an entry runs with the
organiser's rights (as root it runs as another user, ``workers.sandbox.plain_user``,
and reads none of this): it can read the worker's environment (the broker URL
with its password), key files, broker files. Whatever it then prints on
stderr would travel in the result into the store, ``tourney matches --json``
and report.html. So every text an entry wrote (stderr lines, verdict details, build logs) is passed through
``redact`` on the worker, where the result is made, before it leaves:

* the secrets this process holds, registered where it takes them
  (``register_key_material``: a private key's bytes, hex and base64 forms, the
  worker's own and the organiser's; ``register_broker_url``: the broker password);
* the password of any ``redis://`` or ``rediss://`` URL, and the private key of any
  worker key file printed whole (``"worker_key": "..."``) or ``TOURNEY_RUN_KEY=``
  assignment (keys of older releases), whoever's they are.

Each is replaced by ``[redacted]``.
"""

from __future__ import annotations

import base64
import dataclasses
import re
import threading
from urllib.parse import unquote, urlsplit

from runner.domain.match_values import MatchResult

REDACTED = "[redacted]"
#: shorter strings are not taken for secrets (they would blank ordinary words)
MIN_SECRET_LEN = 6

#: ``redis://user:PASS@host`` / ``rediss://:PASS@host``: the password is group 2
_URL_PASSWORD = re.compile(r"(rediss?://[^:@/\s]*:)([^@\s]+)(@)", re.IGNORECASE)
_KEY_ASSIGNMENT = re.compile(r"(TOURNEY_RUN_KEY=|\"worker_key\": \")([0-9A-Fa-f]{16,})")

_lock = threading.Lock()
_secrets: set[str] = set()
_pattern: re.Pattern[str] | None = None


def register_secret(secret: str) -> None:
    """Redact ``secret`` from every later ``redact`` in this process."""
    global _pattern
    if len(secret) < MIN_SECRET_LEN:
        return
    with _lock:
        if secret not in _secrets:
            _secrets.add(secret)
            # longest first, so a secret containing another is replaced whole
            alternatives = sorted(_secrets, key=len, reverse=True)
            _pattern = re.compile("|".join(re.escape(s) for s in alternatives))


def register_key_material(secret: bytes) -> None:
    """A private key (the organiser's, a worker's) in every form an entry could print it."""
    forms = [
        secret.hex(),
        secret.hex().upper(),
        base64.b64encode(secret).decode(),
        base64.urlsafe_b64encode(secret).decode(),
        secret.decode("latin-1"),  # raw bytes, however the reader decodes them
        secret.decode("utf-8", errors="replace"),
    ]
    for form in forms:
        register_secret(form)
        register_secret(form.rstrip("="))


def register_broker_url(url: str) -> None:
    """The password of a broker URL (as written and URL-decoded)."""
    try:
        password = urlsplit(url).password
    except ValueError:
        return
    if password:
        register_secret(password)
        register_secret(unquote(password))


def redact(text: str) -> str:
    """``text`` with every known secret and every broker URL password replaced by ``[redacted]``."""
    if not text:
        return text
    pattern = _pattern
    if pattern is not None:
        text = pattern.sub(REDACTED, text)
    if "://" in text:
        text = _URL_PASSWORD.sub(lambda m: m.group(1) + REDACTED + m.group(3), text)
    if "TOURNEY_RUN_KEY=" in text or '"worker_key"' in text:
        text = _KEY_ASSIGNMENT.sub(lambda m: m.group(1) + REDACTED, text)
    return text


def redacted_result(result: MatchResult) -> MatchResult:
    """``result`` with ``redact`` applied to all an entry may have written in it: each game's
    verdict detail, stderr lines and engine logs, and the build logs. Moves need none: each was parsed
    by its game's rules."""
    games = [
        dataclasses.replace(
            g,
            verdict=dataclasses.replace(g.verdict, detail=redact(g.verdict.detail)),
            stderr={name: [redact(line) for line in lines] for name, lines in g.stderr.items()},
            engine_logs={name: redact(text) for name, text in g.engine_logs.items()},
        )
        for g in result.games
    ]
    logs = {name: redact(text) for name, text in result.build_logs.items()}
    return dataclasses.replace(result, games=games, build_logs=logs)
