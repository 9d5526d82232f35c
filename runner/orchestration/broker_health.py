"""How a coordinator waits for a broker that stops answering (docs/scale-out.md): it keeps
trying for ``PATIENCE_S``, redrawing its progress meanwhile, then stops (``BrokerDown``).
``CeleryDispatcher`` is one."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from urllib.parse import urlsplit

import redis

from runner.errors import BrokerNotRedis, BrokerPasswordRefused, BrokerWireError
from runner.orchestration.dispatcher import BrokerDown
from runner.orchestration.workers_gate import wire_errors

# the run's log names each line's logger: the dispatcher's lines keep the name they had
log = logging.getLogger("tourney.dispatch")


class BrokerHealth:
    """Whether the broker answers, since when, and how long it may be waited for."""

    #: how long the coordinator keeps trying an unreachable broker before giving up
    PATIENCE_S = 600.0

    def __init__(self, client: redis.Redis, url: str) -> None:
        self.redis = client
        self.url = url
        self._down_since: float | None = None
        self._up_since = float("-inf")
        #: called between the tries of a call that waits for an unreachable broker (the
        #: coordinator redraws its progress and restarts an embedded Redis from there: without
        #: it, a submit waiting for the broker froze the display for up to ``PATIENCE_S``)
        self.on_wait: Callable[[], None] | None = None

    def _failed(self, e: Exception) -> None:
        now = time.monotonic()
        if self._down_since is None:
            self._down_since = now
            log.warning("broker unreachable: %s; waiting for it", e)
        elif now - self._down_since > self.PATIENCE_S:
            raise BrokerDown(f"broker {self._safe_url()} unreachable for {self.PATIENCE_S:.0f}s: {e}") from e

    def _wait(self, seconds: float) -> None:
        """Between two tries at an unreachable broker."""
        if self.on_wait is not None:
            self.on_wait()
        time.sleep(seconds)

    def down_for(self) -> float | None:
        return None if self._down_since is None else time.monotonic() - self._down_since

    @property
    def patience_s(self) -> float:
        return self.PATIENCE_S

    def _ok(self) -> None:
        if self._down_since is not None:
            log.warning("broker reachable again")
            self._down_since = None
            self._up_since = time.monotonic()

    def _safe_url(self) -> str:
        p = urlsplit(self.url)
        return f"{p.scheme}://{p.hostname}:{p.port}{p.path}"

    def healthy_for(self) -> float:
        if self._down_since is not None:
            return 0.0
        return time.monotonic() - self._up_since

    def ping(self) -> None:
        """Fail early, with a clear message, if the broker cannot be used at all."""
        try:
            with wire_errors():
                self.redis.ping()
        except BrokerPasswordRefused as e:
            raise BrokerDown(f"broker {self._safe_url()} refused the password: {e.reason}") from e
        except BrokerNotRedis as e:  # something answers there, in another protocol
            raise BrokerDown(
                f"broker {self._safe_url()} answers but is not a Redis server ({e.reason})"
            ) from e
        except BrokerWireError as e:
            raise BrokerDown(f"broker {self._safe_url()} unreachable: {e.reason}") from e
