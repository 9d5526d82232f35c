"""The organiser's pool as one run's coordinator sees it in the broker: the workers connected
now, and the live runs that share them (docs/fleet.md, "Runs share the pool").

Workers: each keeps a presence key per organiser it serves (``KEYS.worker``), valued with the
matches it plays at once. Runs: each coordinator keeps a signed ``RunShare`` under
``KEYS.share`` (its priority and how much it would queue), rewritten every ``SHARE_EVERY_S``
with a TTL of ``SHARE_TTL_S``: a run that stops cleanly deletes it, one that is killed drops
out when it expires. Only records the organiser's own key signed count, for the run their key
names, written less than ``SHARE_STALE_S`` ago (by the reader's clock): the workers' broker
password can delete them, never make a run up or bring a dead one back for long.
``runner.domain.fair_share`` turns them into this run's queue slots.
"""

from __future__ import annotations

import contextlib
import logging
import time

import redis

from runner.domain.fair_share import RunClaim, Sharing, sharing
from runner.domain.signing import SignatureError, SigningKey, open_message, signed
from runner.domain.wire import RunShare, WireError
from runner.errors import BrokerWireError
from runner.orchestration.workers_gate import KEYS, wire_errors

log = logging.getLogger("tourney.dispatch")

#: a run rewrites its share record this often, and reads the others' as often
SHARE_EVERY_S = 1.0
#: a share record not rewritten for this long is gone (its coordinator was killed)
SHARE_TTL_S = 10.0
#: a record written longer ago than this (a copy put back by someone else) is not believed;
#: generous, for the clocks of an organiser's machines to differ
SHARE_STALE_S = 60.0
#: the connected workers are read again at most this often
WORKERS_EVERY_S = 2.0


class OrganiserPool:
    """The organiser's connected workers and live runs, from one run's side."""

    def __init__(self, client: redis.Redis, key: SigningKey, run_id: str, *, priority: int = 0) -> None:
        self.redis = client
        #: the organiser's key: signs this run's share record, checks the others'
        self.key = key
        self.run_id = run_id
        self.priority = priority
        self._workers_cache: tuple[float, dict[str, int]] = (0.0, {})
        self._claims_cache: tuple[float, list[RunClaim]] = (float("-inf"), [])
        self._published_at = float("-inf")
        self._last: Sharing | None = None

    # workers --------------------------------------------------------------------------
    def present(self) -> set[str] | None:
        """The names of the workers connected now (their presence keys; None: cannot tell)."""
        prefix = len(KEYS.worker(self.key.key_id, ""))
        pattern = KEYS.worker_pattern(self.key.key_id)  # this organiser's workers only
        try:
            with wire_errors():
                return {k.decode()[prefix:] for k in self.redis.scan_iter(match=pattern, count=200)}
        except BrokerWireError:
            return None

    def processes(self) -> dict[str, int]:
        """The connected worker processes (presence name -> matches it plays at once), read at
        most every ``WORKERS_EVERY_S``; what was last read while the broker does not answer."""
        at, known = self._workers_cache
        if time.monotonic() - at < WORKERS_EVERY_S:
            return dict(known)
        prefix = len(KEYS.worker(self.key.key_id, ""))
        found: dict[str, int] = {}
        try:
            with wire_errors():
                for key in self.redis.scan_iter(match=KEYS.worker_pattern(self.key.key_id), count=200):
                    v = self.redis.get(key)
                    if v is not None:
                        found[key.decode()[prefix:]] = int(v)
        except (BrokerWireError, ValueError):
            return dict(known)
        self._workers_cache = (time.monotonic(), found)
        return dict(found)

    # runs -----------------------------------------------------------------------------
    def share(self, demand: int, *, local: int = 0) -> Sharing:
        """This run's queue slots now, for ``demand`` (its pending plus queued-but-unstarted
        matches), among the organiser's live runs; ``local``: the match slots of this run's own
        local worker, counted before its presence key is read."""
        now = time.monotonic()
        if now - self._published_at >= SHARE_EVERY_S:
            self._publish(demand)
            self._published_at = now
        at, claims = self._claims_cache
        if now - at >= SHARE_EVERY_S:
            claims = self._read_claims()
            self._claims_cache = (now, claims)
        workers = max(sum(self.processes().values()), local)
        me = RunClaim(self.run_id, self.priority, demand)
        result = sharing(claims, workers, me)
        if self._last is None or (result.runs, result.workers) != (self._last.runs, self._last.workers):
            log.info("pool: %d worker process(es) shared by %d run(s); %d queue slot(s) here",
                     result.workers, result.runs, result.slots)  # fmt: skip
        self._last = result
        return result

    @property
    def last(self) -> Sharing | None:
        """What ``share`` said last (the live panel shows it)."""
        return self._last

    def _publish(self, demand: int) -> None:
        record = signed(RunShare(self.run_id, self.priority, demand, time.time()), self.key)
        with contextlib.suppress(BrokerWireError), wire_errors():
            self.redis.set(KEYS.share(self.key.key_id, self.run_id), record, ex=int(SHARE_TTL_S))

    def _read_claims(self) -> list[RunClaim]:
        """The other live runs of the organiser (this one's record is not read back: its demand
        is taken as it is now). The last ones read while the broker does not answer."""
        prefix = len(KEYS.share(self.key.key_id, ""))
        try:
            with wire_errors():
                names = [
                    k for k in self.redis.scan_iter(match=KEYS.share_pattern(self.key.key_id), count=200)
                ]
                names = [k for k in names if k.decode()[prefix:] != self.run_id]
                values = self.redis.mget(names) if names else []
        except BrokerWireError:
            return self._claims_cache[1]
        claims: dict[str, RunClaim] = {}
        now = time.time()
        for name, raw in zip(names, values, strict=True):
            if raw is None:
                continue  # expired between the scan and the read
            try:
                record, _ = open_message(raw, RunShare, self.key.public)
            except (SignatureError, WireError, ValueError, TypeError):
                continue  # not the organiser's: nobody's run
            if record.run != name.decode()[prefix:] or now - record.at > SHARE_STALE_S:
                continue  # a record copied under another run's name, or an old one put back
            claims[record.run] = RunClaim(record.run, record.priority, max(record.demand, 0))
        return list(claims.values())

    def withdraw(self) -> None:
        """This run stops: the others take its slots at their next read."""
        with contextlib.suppress(BrokerWireError), wire_errors():
            self.redis.delete(KEYS.share(self.key.key_id, self.run_id))
