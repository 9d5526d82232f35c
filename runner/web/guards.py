"""What stands in front of the server's handlers: a body cap, one-line errors, a rate limit, CSRF.

- ``BodyCap`` (pure ASGI): a request whose ``Content-Length`` is over the cap gets its 413 before
  a byte of its body is read; one that sends more than the cap without saying so (chunked) is
  cut at the cap (``BodyTooLarge`` from ``receive``, a 413).
- ``OneLineErrors`` (pure ASGI): an exception in a handler is one log line and a plain 500 page,
  never a traceback to the client (Starlette's own outermost layer would log a traceback).
- ``RateLimit``: uploads per team in a sliding window; beyond it, how long to wait.
- ``csrf_value``: the hidden field a form carries, an HMAC of the browser's CSRF cookie under the
  server's secret (a page of another site can neither read the cookie nor make the HMAC).
"""

from __future__ import annotations

import collections
import hashlib
import hmac
import logging
import threading
import time
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from runner.errors import MessageRejected

log = logging.getLogger("tourney.serve")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


class BodyTooLarge(MessageRejected):
    """The request's body ran past the cap while it was read (the request is dropped: a 413)."""


async def _plain(
    send: Send, status: int, text: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = (text + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
                *(headers or []),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class BodyCap:
    def __init__(self, app: ASGIApp, max_body: int) -> None:
        self.app = app
        self.max_body = max_body

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_body):
            await _plain(send, 413, f"refused: the request is larger than {self.max_body} bytes")
            return
        seen = 0
        started = False

        async def capped_receive() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_body:
                    raise BodyTooLarge(f"refused: the request is larger than {self.max_body} bytes")
            return message

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, capped_receive, watched_send)
        except BodyTooLarge as e:
            if not started:
                await _plain(send, 413, str(e))


class OneLineErrors:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def watched_send(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
            await send(message)

        try:
            await self.app(scope, receive, watched_send)
        except BodyTooLarge:
            raise  # BodyCap, outside, answers it
        except Exception as e:
            # one line: what was asked and what broke; the client gets a plain page, no traceback
            log.error("%s %s: %s: %s", scope.get("method"), scope.get("path"), type(e).__name__, e)
            if not started:
                await _plain(send, 500, "internal error: the organiser's log has the details")


class RateLimit:
    """At most ``uploads`` per team in any ``per_s`` seconds (thread-safe)."""

    def __init__(self, uploads: int, per_s: float, clock: Callable[[], float] = time.monotonic) -> None:
        self.uploads = uploads
        self.per_s = per_s
        self.clock = clock
        self._seen: dict[str, collections.deque[float]] = collections.defaultdict(collections.deque)
        self._lock = threading.Lock()

    def take(self, team: str) -> float | None:
        """Count one upload of ``team`` now (None), or the seconds until it may send one."""
        now = self.clock()
        with self._lock:
            seen = self._seen[team]
            while seen and now - seen[0] >= self.per_s:
                seen.popleft()
            if len(seen) >= self.uploads:
                return max(self.per_s - (now - seen[0]), 1.0)
            seen.append(now)
            return None


def csrf_value(secret: bytes, cookie: str) -> str:
    return hmac.new(secret, b"csrf:" + cookie.encode(), hashlib.sha256).hexdigest()[:40]


def csrf_ok(secret: bytes, cookie: str | None, field: object) -> bool:
    if not cookie or not isinstance(field, str):
        return False
    return hmac.compare_digest(csrf_value(secret, cookie), field)
