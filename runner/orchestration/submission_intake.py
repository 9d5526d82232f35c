"""The server's intake pool: each received upload unpacked and laid out off its answer
(docs/submissions.md, "Uploads at the deadline").

The web app answers an upload once its bytes are stored by digest and its version recorded
(``checking``, no entry yet). ``IntakeLoop`` (a thread of ``tourney serve``) then hands each
such row to a pool of processes that run ``runner.submissions.intake.intake_job``: the archive
checked and unpacked under its caps, the layout, the entry kept by digest and packed for the
workers. The outcome is recorded on the row (``SubmissionStore.record_intake``): its entry's
digest, whose check the check loop then sends, or ``refused`` with the failed step's line.

Why processes, and low-priority ones: unpacking is most of an upload's CPU (inflating, writing
the tree, reading it back for the entry's digest, packing it), and it scales with what a
contestant sends. In processes of their own, at ``nice`` ``NICE``, it neither holds the web
app's interpreter lock nor takes a core from the uploads being answered at the deadline; and a
hostile archive costs a process, never the server. Rows waiting when the server stopped are
taken up again as it starts (the store is the truth).
"""

from __future__ import annotations

import ctypes
import functools
import logging
import multiprocessing
import os
import signal
import threading
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from runner.config.submission_rules import SubmissionsModel
from runner.submissions.contest_dir import ContestDir
from runner.submissions.intake import IntakeOutcome, intake_job, loaded
from runner.submissions.store import Submission, SubmissionStore

log = logging.getLogger("tourney.serve")

#: the pool's processes' niceness: below the web app, which answers uploads
NICE = 10
#: times an upload's intake may fail for the server's own reasons (a process lost) before it
#: is refused with that said
MAX_ATTEMPTS = 3


_PR_SET_PDEATHSIG = 1


def _pool_process(server_pid: int) -> None:
    """Each pool process, as it starts: below the web app (``NICE``), and gone with the server
    (the kernel kills it if the server dies, even by SIGKILL: a pool process waits on a queue
    whose writing end it holds itself, so it would never see the server go)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != server_pid:  # the server died before prctl took effect
        os._exit(1)
    os.nice(NICE)


def pool_size() -> int:
    """Half the cores the server may use, at least one: the other half answers uploads."""
    return max(1, len(os.sched_getaffinity(0)) // 2)


class IntakeLoop:
    """Sends every received row to the pool, records what came back (one thread)."""

    def __init__(
        self,
        store: SubmissionStore,
        contest: ContestDir,
        rules: SubmissionsModel,
        *,
        game: str,
        protocol: str,
        taken: Callable[[], None],
        processes: int | None = None,
    ) -> None:
        self.store = store
        self.contest = contest
        self.rules = rules
        self.game = game
        self.protocol = protocol
        self.taken = taken  # the check loop's wake: an entry is ready to be checked
        self.processes = processes or pool_size()
        self._pool: ProcessPoolExecutor | None = None
        self._in_flight: set[int] = set()
        self._failures: dict[int, int] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None
        self._broken = False  # the pool lost a process: replaced by the loop's thread
        self.done = 0

    def start(self) -> IntakeLoop:
        self._pool = self._new_pool()
        self._thread = threading.Thread(target=self._run, name="tourney-intake", daemon=True)
        self._thread.start()
        self._wake.set()  # rows left waiting by an earlier server
        return self

    def wake(self) -> None:
        """An upload was received (the web app calls this after recording it)."""
        self._wake.set()

    def stop(self) -> None:
        """Stop sending, wait for the jobs running (a row not finished waits for the next
        server), and end the pool's processes; a second call does nothing more."""
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(15.0)
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def _new_pool(self) -> ProcessPoolExecutor:
        # spawn: the server has threads (uvicorn's, the check loop's); a fork would copy their locks
        pool = ProcessPoolExecutor(
            self.processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_pool_process,
            initargs=(os.getpid(),),
        )
        for _ in range(self.processes):
            pool.submit(loaded)  # started and imported now, not by the first upload of a rush
        return pool

    def _run(self) -> None:
        while not self._stop.is_set():
            self._wake.wait(2.0)
            self._wake.clear()
            try:
                self._send_waiting()
            except Exception:
                log.exception("intake: unexpected failure; going on")
                self._stop.wait(1.0)

    def _send_waiting(self) -> None:
        if self._broken:
            log.warning("intake: a pool process was lost; a new pool takes over")
            if self._pool is not None:
                self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = self._new_pool()
            self._broken = False
        # no more in flight than the pool runs at once: a process lost (a crash, the kernel's
        # OOM killer on a hostile archive) fails the futures queued behind it too, and each
        # failure counts against its upload; the rest wait in the store, oldest first
        with self._lock:
            busy = len(self._in_flight)
        if busy >= self.processes:
            return
        for sub in self.store.received(limit=self.processes + busy):
            with self._lock:
                if sub.id in self._in_flight or len(self._in_flight) >= self.processes:
                    continue
                self._in_flight.add(sub.id)
            try:
                future = self._submit(sub)
            except BrokenProcessPool:
                with self._lock:
                    self._in_flight.discard(sub.id)
                self._broken = True
                self._wake.set()
                return
            future.add_done_callback(functools.partial(self._came_back, sub))

    def _submit(self, sub: Submission) -> Future[IntakeOutcome]:
        assert self._pool is not None
        return self._pool.submit(
            intake_job,
            self.contest,
            sub.upload_digest,
            sub.upload_name,
            self.rules,
            sub.team,
            self.game,
            self.protocol,
        )

    def _came_back(self, sub: Submission, future: Future[IntakeOutcome]) -> None:
        try:
            if future.cancelled():
                return  # the server stops: the row waits for the next one
            error = future.exception()
            if error is None:
                out = future.result()
                self.store.record_intake(
                    sub.id, entry_digest=out.entry_digest, steps=out.steps, failure=out.failure
                )
                self.done += 1
                log.info(
                    "intake %s v%d: %s",
                    sub.team,
                    sub.version,
                    "unpacked" if out.entry_digest else out.failure,
                )
                if out.entry_digest is not None:
                    self.taken()
                return
            self._failed(sub, error)
        except Exception:
            log.exception("intake of %s v%d: could not record its outcome", sub.team, sub.version)
        finally:
            with self._lock:
                self._in_flight.discard(sub.id)
            if not self._stop.is_set():
                self._wake.set()  # a failed one goes again; a broken pool is replaced

    def _failed(self, sub: Submission, error: BaseException) -> None:
        """The server's failure, not the team's: tried again, and refused with that said only
        after ``MAX_ATTEMPTS``."""
        n = self._failures.get(sub.id, 0) + 1
        self._failures[sub.id] = n
        log.error(
            "intake of %s v%d failed (%d): %s: %s", sub.team, sub.version, n, type(error).__name__, error
        )
        if isinstance(error, BrokenProcessPool):
            self._broken = True
        if n >= MAX_ATTEMPTS:
            said = (
                f"the server could not unpack this upload ({type(error).__name__}); "
                "the organiser's log says why"
            )
            self.store.record_intake(
                sub.id, entry_digest=None, steps=[("unpacked", "failed", said)], failure=said
            )
