"""Shared pieces of the integration tests: configs, running `tourney`, standings, leftovers."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import re
import signal
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import psutil
import redis

from runner.domain.fleet import HOME_ENV, WORKER_KEY_FILE_ENV, Fleet, RegistryView, organiser_key
from runner.domain.signing import SigningKey, open_message
from runner.domain.stages.tournament import advance
from runner.domain.wire import TaskEnvelope, to_builtins
from runner.orchestration import procs
from runner.storage.run_dir import load_run_config
from runner.storage.store import RunStore
from tests import forked_cli
from workers.cache_paths import CACHE_DIR_ENV, user_cache

ROOT = Path(__file__).resolve().parents[2]
SCAN = Path(__file__).resolve().parent / "entries" / "scan"
TOURNEY = forked_cli.TOURNEY
#: heartbeats every half second: a dead worker is noticed within about 2 s
FAST_ENV = {"TOURNEY_HEARTBEAT_S": "0.5"}
#: what a real engine may overstep its clock by in the suite's games (fastchess's timemargin, in ms):
#: stockfish plays to within ten milliseconds of its flag, and with the suite's other workers
#: loading the machine (8 to 12 on 2 cores) a move's last milliseconds wait for a core past it.
#: The unpadded clock is measured by the strength bench (docs/benchmarks.md), at the load it prints.
LOADED_MARGIN_MS = 1500


def write_config(
    directory: Path,
    name: str,
    *,
    entrants: int = 4,
    sandbox: str = "none",
    sleep: float = 0.0,
    control: Path | None = None,
    board: str = "4 4 3",
    games_per_pairing: int = 2,
    final_top: int | None = None,
    tag: str | None = None,
    entry: Path = SCAN,
    seed: int = 7,
) -> Path:
    """A small m,n,k round robin of seeded `scan` players (optionally a final of the top N)."""
    args = ["--seed", "{i}"]
    if sleep:
        args += ["--sleep", str(sleep)]
    if control is not None:
        args += ["--control", str(control)]
    args += ["--tag", tag or name]
    stages: list[dict[str, Any]] = [
        {"name": "rr", "planner": "round_robin", "boards": ["b"], "games_per_pairing": games_per_pairing}
    ]
    if final_top is not None:
        stages[0]["advance"] = {"top": final_top}
        stages.append({"name": "final", "planner": "round_robin", "boards": ["b"], "games_per_pairing": 2})
    config = {
        "name": name,
        "seed": seed,
        "game": "mnk",
        "sandbox": sandbox,
        "limits": {"move_wall_s": 5.0},
        "boards": {"b": {"text": board}},
        "entries": [
            {"path": str(entry), "variants": {"count": entrants, "prefix": "p", "args": args}},
        ],
        "stages": stages,
    }
    path = directory / f"{name}.yaml"
    directory.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config, indent=2))  # JSON is YAML
    return path


class Organiser:
    """An organiser of the test's own (its keys and fleet registry in ``home``): enrols workers
    and makes the dispatcher its coordinator would (docs/fleet.md)."""

    def __init__(self, home: Path) -> None:
        self.home = home
        self.fleet = Fleet(home)

    @property
    def key(self) -> SigningKey:
        return organiser_key(self.home)

    def enrol(self, name: str, out: Path | None = None) -> Path:
        """Enrol ``name``; its worker key file (at ``out``: a worker's own machine)."""
        return self.fleet.enrol(name, out)

    def env(self, key_file: Path | None = None) -> dict[str, str]:
        """The environment of this organiser's ``tourney`` commands (or of a worker with ``key_file``)."""
        extra = {HOME_ENV: str(self.home)}
        if key_file is not None:
            extra[WORKER_KEY_FILE_ENV] = str(key_file)
        return extra

    def dispatcher(self, url: str, run: str, heartbeat_s: float = 0.5) -> Any:
        from runner.orchestration.celery_dispatcher import CeleryDispatcher
        from runner.orchestration.dispatcher import Timing

        return CeleryDispatcher(url, run, Timing(heartbeat_s=heartbeat_s), self.key, RegistryView(self.home))


def envelope_of(message: bytes | str) -> str:
    """The signed envelope a queued task message carries (Celery's body: ``[args, kwargs, embed]``)."""
    (envelope,), _, _ = json.loads(base64.b64decode(json.loads(message)["body"]))
    return str(envelope)


def take_task(r: redis.Redis, queue: str) -> str:
    """Take the next task a worker would take off ``queue`` (Celery's Redis transport pops on the
    right): its signed envelope, as the worker's task body receives it."""
    raw = r.rpop(queue)
    assert isinstance(raw, bytes), f"no task on {queue}"
    return envelope_of(raw)


class EnrolledImpostor(threading.Thread):
    """An enrolled key holder that plays no entry: it takes its organiser's tasks off the queue
    as they come, reads each as any enrolled worker can, and answers it its own way (``take``)."""

    #: how long it keeps taking tasks at most (a test that fails never leaves it running)
    lifetime_s = 120.0

    def __init__(self, url: str, queue: str, key: SigningKey, organiser: SigningKey, name: str) -> None:
        super().__init__(daemon=True)
        self.r = redis.Redis.from_url(url)
        self.queue, self.key, self.organiser, self.name = queue, key, organiser, name
        self.stop = threading.Event()
        self.answered = 0

    def run(self) -> None:
        deadline = time.monotonic() + self.lifetime_s
        while not self.stop.is_set() and time.monotonic() < deadline:
            popped = self.r.brpop([self.queue], timeout=1)
            if popped is None:
                continue
            envelope = envelope_of(popped[1])
            task = to_builtins(open_message(envelope, TaskEnvelope, self.organiser.public)[0])
            self.take(task, popped[1])

    def take(self, task: dict[str, Any], message: bytes | str) -> None:
        """Answer ``task`` (``message``: the queue entry it came in, to put back)."""
        raise NotImplementedError


def env(**extra: str) -> dict[str, str]:
    e = dict(os.environ)
    e.update(FAST_ENV)
    # the sandbox's helpers compiled once for the suite, not once per worker's --work-dir (where
    # a worker keeps them by default: workers.cache_paths; test_deploy_operator checks that)
    e.setdefault(CACHE_DIR_ENV, str(user_cache()))
    e.update(extra)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    return e


def private_tmp(directory: Path) -> dict[str, str]:
    """``TMPDIR`` inside the test's own directory: what a SIGKILLed worker cannot clean up
    (its games' temporary directories) goes away with the test's files, not into /tmp."""
    tmp = directory / "tmp"
    tmp.mkdir(parents=True, exist_ok=True)
    return {"TMPDIR": str(tmp)}


def tourney(
    *args: str | Path,
    cwd: Path,
    timeout: float = 180,
    extra_env: dict[str, str] | None = None,
    fork: bool = True,
) -> subprocess.CompletedProcess[str]:
    """``tourney ARGS`` to its end, its output captured (forked: tests/forked_cli.py; ``fork=False``
    where a test compares processes that must not share a hash seed)."""
    return forked_cli.run(
        [*TOURNEY, *map(str, args)],
        cwd=cwd,
        env=env(**private_tmp(cwd), **(extra_env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
        fork=fork,
    )


def start_tourney(
    *args: str | Path, cwd: Path, log: Path, extra_env: dict[str, str] | None = None, fork: bool = True
) -> forked_cli.Running:
    """``tourney ARGS`` started, its output and errors appended to ``log``."""
    with open(log, "ab") as out:
        return forked_cli.Popen(
            [*TOURNEY, *map(str, args)],
            cwd=cwd,
            env=env(**private_tmp(cwd), **(extra_env or {})),
            stdout=out,
            stderr=subprocess.STDOUT,
            fork=fork,
        )


def standings(run_dir: Path) -> dict[str, Any]:
    """Final ranking and every stage's standings, recomputed from the store (what a user sees)."""
    config = load_run_config(run_dir)
    with RunStore.open(run_dir) as store:
        results = store.official_results()
    state = advance(config, results)
    assert state.finished, "the run did not finish"
    return {
        "final": list(state.final_ranking),
        "stages": {
            st.name: [
                (r.rank, r.entry, r.games, r.wins, r.ties, r.losses, r.points, r.score) for r in st.standings
            ]
            for st in state.stages
        },
    }


def assert_one_official_result_per_match(run_dir: Path) -> None:
    """No result lost, none counted twice: every live match has exactly one official result."""
    with RunStore.open(run_dir) as store:
        rows = store.match_rows()
        conn = store._conn
        per_match = dict(
            conn.execute(
                "SELECT match_id, COUNT(*) FROM results WHERE status='official' GROUP BY match_id"
            ).fetchall()
        )
    live = [r for r in rows if r.state != "obsolete"]
    assert live
    for r in live:
        assert r.state == "done", (r.match_id, r.state)
        assert per_match.get(r.match_id) == 1, (r.match_id, per_match.get(r.match_id))
        assert r.result is not None and r.result.system_error is None


def wait_for(predicate: Callable[[], bool], timeout: float, what: str, every: float = 0.1) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(every)
    raise AssertionError(f"timed out after {timeout:.0f}s waiting for {what}")


def store_rows(run_dir: Path) -> list[Any]:
    try:
        with RunStore.open(run_dir) as store:
            return store.match_rows()
    except Exception:
        return []


#: a marker names one test's processes only: a path (its temporary directory) or a unique() tag
_UNIQUE_MARKER = re.compile(r"(/.+)|(.+-[0-9a-f]{8})")


def processes_matching(markers: Sequence[str]) -> list[psutil.Process]:
    """Live processes whose command line mentions one of ``markers`` (this test's run), or
    standby-started workers holding a file open under one.

    Markers must be unique to the test (its temporary path, or a ``unique()`` tag),
    never a program name: a test must not touch processes it did not start."""
    for m in markers:
        if not _UNIQUE_MARKER.fullmatch(m):
            raise ValueError(f"marker {m!r} is not unique to this test (a path or a unique() tag)")
    me = os.getpid()
    found = []
    for p in psutil.process_iter(["pid", "cmdline", "status"]):
        try:
            if p.pid == me or p.info["status"] == psutil.STATUS_ZOMBIE:
                continue
            cmd = " ".join(p.info["cmdline"] or [])
        except psutil.Error:
            continue
        if any(m in cmd for m in markers) or ("--standby" in cmd and _holds_file_under(p, markers)):
            found.append(p)
    return found


def _holds_file_under(proc: psutil.Process, markers: Sequence[str]) -> bool:
    """A local worker started in standby (``tourney worker --standby``) was started before its
    run directory was known: it names it only through its open log file."""
    try:
        return any(m in f.path for f in proc.open_files() for m in markers)
    except psutil.Error:
        return False


def assert_nothing_left(markers: Sequence[str], grace_s: float = 10.0) -> None:
    deadline = time.monotonic() + grace_s
    left: list[psutil.Process] = []
    while time.monotonic() < deadline:
        left = processes_matching(markers)
        if not left:
            return
        time.sleep(0.2)
    details = []
    for p in left:
        with contextlib.suppress(psutil.Error):
            details.append(f"{p.pid}: {' '.join(p.cmdline())}")
        # the test must not leave them either
        with contextlib.suppress(psutil.Error):
            p.kill()
    if details:
        raise AssertionError("processes of the run are still alive:\n" + "\n".join(details))


def kill_all(markers: Sequence[str]) -> None:
    for p in processes_matching(markers):
        with contextlib.suppress(psutil.Error):
            p.kill()


def kill_recorded_group(pid_file: Path) -> None:
    """SIGKILL the process group of the process recorded in ``pid_file``, if that pid is still
    the very process recorded (its start time, ``runner.orchestration.procs``): never by pid alone."""
    ident = procs.read_identity(pid_file)
    assert ident is not None, f"{pid_file} has no identity record"
    proc = psutil.Process(ident.pid)
    assert ident.matches(proc), f"pid {ident.pid} is no longer the recorded {ident.tag}"
    os.killpg(ident.pid, signal.SIGKILL)


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
