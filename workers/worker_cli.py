"""``tourney worker --broker URL --key-file FILE``: serve matches of its organisers' runs.

A worker needs the broker URL and its key file (``tourney fleet add``; docs/fleet.md):
entries arrive as artifacts by digest through Redis and are built once per digest in
``--work-dir`` (default: systemd's ``$CACHE_DIRECTORY``, else ``~/.cache/tourney``; the
sandbox's compiled helpers go there too: ``workers.cache_paths``). It consumes only the queues of the
organisers its key file names, so it never takes a task it cannot verify. It can join or
leave at any time; a joining worker takes the next queued match. A broker URL without a
password is refused unless ``--allow-no-password`` says otherwise.

Before taking work it runs ``workers.preflight`` (broker and password, worker key, a
sandboxed move and C build) and exits 3 with one line if any fails. Its policy
(``workers.policy``: sandbox kind, limit ceilings) comes from its own flags:
``--allow-unsandboxed`` is the only way a task's ``sandbox: none`` is honoured, and a
task above a ceiling is handed back.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import ctypes
import logging
import os
import signal
import socket
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import redis

from runner.domain.fleet import WORKER_KEY_FILE_ENV, WorkerKey
from runner.domain.private_files import read_private_text
from runner.domain.redaction import register_broker_url
from runner.domain.registry import BROKER_ENV, SANDBOX_BINDS_ENV, UNSANDBOXED_WARNING, merged_binds
from runner.errors import BrokerWireError, UsageError
from workers.broker_keys import queue_for
from workers.broker_wire import wire_errors
from workers.cache_paths import WORK_DIR_ENV, default_work_dir
from workers.sandbox.cgroups import sandbox_memory_note
from workers.sandbox.cores import CONCURRENCY_ENV, pin_to_worker_cpus, timing_note

#: the exit status of a worker whose key its organiser revoked: the unit in docs/deploy.md lists
#: it in RestartPreventExitStatus (a restart would only stop again), beside 2 (a bad command line)
EXIT_REVOKED = 4
#: set once the worker learns its key was revoked (the presence thread reads the notice)
_revoked = threading.Event()

#: presence key refresh period and lifetime
PRESENCE_EVERY_S = 5.0
PRESENCE_TTL_S = 15.0


class BrokerURLError(UsageError, ValueError):
    pass


#: what a password-less broker URL is told, by the command that got it: only `tourney worker`
#: has --allow-no-password; a coordinator never talks to a broker without one
NO_PASSWORD_ADVICE = {
    "worker": "Pass --allow-no-password to use it anyway.",
    "run": (
        "tourney run accepts only a broker with a password: give it in the URL, or leave out "
        "--broker and tourney run starts its own Redis with one."
    ),
}


def check_broker_url(url: str, *, allow_no_password: bool, command: str = "worker") -> None:
    """Refuse what is not a Redis URL, and one without a password unless allowed (``command``:
    who asks, for the advice that command can follow)."""
    parts = urlsplit(url)
    if parts.scheme not in ("redis", "rediss"):
        raise BrokerURLError(
            f"broker URL must be redis://:PASSWORD@HOST:PORT/DB, got scheme {parts.scheme!r}"
        )
    if not parts.hostname:
        raise BrokerURLError("broker URL names no host")
    verify = dict(parse_qsl(parts.query)).get("ssl_cert_reqs", "required").lower()
    if parts.scheme == "rediss" and verify != "required" and verify != "cert_required":
        raise BrokerURLError(
            f"rediss:// with ssl_cert_reqs={verify} does not verify the broker; "
            "give ssl_ca_certs=CA.pem (ssl_cert_reqs=required, the default)"
        )
    if not parts.password and not allow_no_password:
        raise BrokerURLError(
            "broker URL has no password; Redis must always have one (redis://:PASSWORD@HOST:PORT/0). "
            + NO_PASSWORD_ADVICE[command]
        )


def _presence(url: str, name: str, concurrency: int, stop: threading.Event, wk: WorkerKey) -> None:
    """Keep the presence key alive; stop the worker (warm shutdown) once it is quarantined."""
    r = redis.Redis.from_url(url, socket_timeout=5.0, socket_connect_timeout=5.0)
    from workers.celery_app import KEYS
    from workers.tasks import quarantine_notice

    # one presence key per organiser served: each coordinator sees only its own organiser's workers
    keys = [KEYS.worker(organiser.key_id, name) for organiser in wk.organisers]
    while not stop.is_set():
        with contextlib.suppress(BrokerWireError), wire_errors(), r.pipeline(transaction=False) as pipe:
            for key in keys:
                pipe.set(key, str(concurrency), px=int(PRESENCE_TTL_S * 1000))
            pipe.execute()
        reason = quarantine_notice(r, wk)
        if reason is not None:
            print(
                f"tourney worker {name}: key revoked by its organiser ({reason}); stopping "
                f"(exit {EXIT_REVOKED}: enrol this machine again, install the new key file and restart)",
                flush=True,
            )
            _revoked.set()
            os.kill(os.getpid(), signal.SIGTERM)  # ourselves: Celery's warm shutdown
            break
        stop.wait(PRESENCE_EVERY_S)
    with contextlib.suppress(BrokerWireError), wire_errors():
        r.delete(*keys)


def _die_with_parent() -> None:
    """Celery pool processes: SIGKILL when the worker's main process dies, so a
    killed worker leaves no pool process behind."""
    # this process's own symbols, libc among them: find_library("c") runs ldconfig (20 ms)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG


def _pool_process_leaving(exitcode: int | None = None, **_: object) -> None:
    """A pool process on its way out (its worker stops): close its kept sandboxes, then exit.

    Left to itself, billiard would next post a death notice to the worker's main process
    and sleep a whole second before exiting, and the main process (and ``tourney run``,
    which stops its local workers at the end of every run) waits for that exit. Nothing is
    lost by exiting now: the main process sees the exit itself (waitpid, as when a pool
    process is killed), and this hook only runs once the process has no task left."""
    from workers.sandbox.pool import close_idle_sandboxes

    close_idle_sandboxes()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(exitcode or 0)


def broker_url_of(args: argparse.Namespace) -> str:
    """The broker URL from ``--broker``, ``--broker-file`` (which must be private:
    mode 0600 or stricter) or ``$TOURNEY_BROKER_URL``, in that order."""
    if getattr(args, "broker", None):
        return str(args.broker)
    path = getattr(args, "broker_file", None)
    if path:
        return read_private_text(Path(path), "--broker-file", BrokerURLError)
    url = os.environ.get(BROKER_ENV)
    if not url:
        raise BrokerURLError(f"no broker: give --broker URL, --broker-file FILE or ${BROKER_ENV}")
    return url


def cmd_worker(args: argparse.Namespace) -> int:
    url = broker_url_of(args)  # BrokerURLError (a UsageError): exit 2
    check_broker_url(url, allow_no_password=bool(args.allow_no_password))
    register_broker_url(url)  # its password never leaves in what an entry printed (pool processes fork)
    pin_to_worker_cpus()  # tourney run's timing.reserved_cores: the CPUs left to matches
    # one per CPU this worker may use (its affinity, so `taskset` leaves cores to others)
    concurrency = int(args.concurrency or len(os.sched_getaffinity(0)) or 1)
    if concurrency < 1:
        raise UsageError("--concurrency must be at least 1")
    name = args.name or f"tourney-{os.getpid()}@{socket.gethostname()}"
    from workers.policy import POLICY_ENV, LimitCeiling, WorkerPolicy
    from workers.preflight import PreflightFailed, check_broker, check_worker_key
    from workers.preflight import check_sandbox as check_worker_sandbox

    allow_unsandboxed = bool(getattr(args, "allow_unsandboxed", False))
    if allow_unsandboxed:
        print(f"tourney worker: {UNSANDBOXED_WARNING}", file=sys.stderr, flush=True)
    key_file = Path(args.key_file).expanduser() if getattr(args, "key_file", None) else None
    sandbox_works = True
    binds = list(getattr(args, "sandbox_bind", None) or [])
    if binds:
        # pool processes read them (``workers.sandbox.bwrap.extra_binds``), checked by the health check below
        os.environ[SANDBOX_BINDS_ENV] = merged_binds(os.environ.get(SANDBOX_BINDS_ENV, ""), binds)
    # the work directory first: the sandbox check below compiles its helpers there (a system
    # user's worker has no home for a cache: docs/deploy.md)
    work = Path(args.work_dir).expanduser() if args.work_dir else default_work_dir()
    try:
        work = work.resolve()
        work.mkdir(parents=True, exist_ok=True)
        work.chmod(0o700)  # the artifact and build cache: no other local user reads it
    except OSError as e:
        print(f"tourney worker {name}: cannot use {work} as the work directory ({e.strerror or e}); "
              "give --work-dir DIR (writable by this user)", file=sys.stderr, flush=True)  # fmt: skip
        return 3
    # pool processes read these (they inherit the environment)
    os.environ[WORK_DIR_ENV] = str(work)
    # systemd's Delegate=yes: the sandboxes' cgroups in the service's own (before any other
    # process or thread of ours could make that impossible)
    from workers.sandbox.cgroup_delegation import adopt_delegated_cgroup

    delegated = adopt_delegated_cgroup()
    if delegated is not None:
        print(f"tourney worker {name}: {delegated}", flush=True)
    try:
        check_broker(url)
        wk = check_worker_key(key_file)
        revoked = quarantine_reason_now(url, wk)
        if revoked is not None:
            print(f"tourney worker {name}: key {wk.key.key_id} ({wk.name}) was revoked by its organiser "
                  f"({revoked}); enrol this machine again (tourney fleet add), install the new key file "
                  "and restart", file=sys.stderr, flush=True)  # fmt: skip
            return EXIT_REVOKED
        if not getattr(args, "skip_health_check", False):
            try:
                check_worker_sandbox("bwrap")
            except PreflightFailed as e:
                if not allow_unsandboxed:
                    raise
                sandbox_works = False
                print(f"tourney worker {name}: {e}; serving 'sandbox: none' tasks only", flush=True)
                check_worker_sandbox("none")
    except PreflightFailed as e:
        print(f"tourney worker {name}: {e}", file=sys.stderr, flush=True)
        return 3
    policy = WorkerPolicy(
        allow_unsandboxed=allow_unsandboxed,
        ceiling=LimitCeiling(
            move_wall_s=getattr(args, "max_move_wall_s", None) or LimitCeiling.move_wall_s,
            memory_mb=getattr(args, "max_memory_mb", None) or LimitCeiling.memory_mb,
        ),
        sandbox_works=sandbox_works,
    )
    if key_file is not None:
        os.environ[WORKER_KEY_FILE_ENV] = str(key_file.resolve())
    os.environ[POLICY_ENV] = policy.to_json()
    os.environ[BROKER_ENV] = url
    os.environ["TOURNEY_WORKER_NAME"] = name
    os.environ[CONCURRENCY_ENV] = str(concurrency)  # results state their timing conditions

    from celery.signals import worker_process_init, worker_process_shutdown

    from workers.celery_app import configure

    app = configure(url)
    worker_process_init.connect(lambda **_: _die_with_parent(), weak=False)
    # a pool process's kept sandboxes (and their cgroups) go with it (os._exit skips atexit)
    worker_process_shutdown.connect(_pool_process_leaving, weak=False)

    stop = threading.Event()
    threading.Thread(target=_presence, args=(url, name, concurrency, stop, wk), daemon=True).start()
    atexit.register(stop.set)
    print(
        f"tourney worker {name}: {concurrency} process(es), cache {work}, enrolled as {wk.name} "
        f"(key {wk.key.key_id}), "
        f"sandbox {'bwrap (unsandboxed tasks allowed)' if allow_unsandboxed else 'bwrap only'}",
        flush=True,
    )
    print(f"tourney worker {name}: {active_runs_line(url, wk)}", flush=True)
    print(f"tourney worker {name}: {sandbox_memory_note()}", flush=True)
    print(f"tourney worker {name}: {timing_note(concurrency)}", flush=True)
    _run_celery_worker(app, name, concurrency, [queue_for(k.key_id) for k in wk.organisers])
    stop.set()
    # revoked: a status of its own, which the unit does not restart (docs/deploy.md); any other
    # stop (SIGTERM from systemctl or tourney run) is 0
    return EXIT_REVOKED if _revoked.is_set() else 0


def quarantine_reason_now(url: str, wk: WorkerKey) -> str | None:
    """Why the worker's key was revoked, if its organiser did (read once, at start)."""
    from workers.tasks import quarantine_notice

    r = redis.Redis.from_url(url, socket_timeout=5.0, socket_connect_timeout=5.0)
    try:
        return quarantine_notice(r, wk)
    finally:
        r.close()


def active_runs_line(url: str, wk: WorkerKey) -> str:
    """One line: whether any run this worker can serve (one of its organisers') is active now."""
    from workers.broker_keys import KEYS

    mine = {k.key_id for k in wk.organisers}
    r = redis.Redis.from_url(url, socket_timeout=5.0, socket_connect_timeout=5.0)
    runs: list[str] = []
    try:
        with wire_errors():
            for alive in r.scan_iter(match=KEYS.ALIVE_PATTERN, count=200):
                value = r.get(alive)
                if isinstance(value, bytes) and value.decode() in mine:
                    runs.append(alive.decode().split(":")[2])
    except BrokerWireError as e:
        return f"cannot tell which runs are active ({e.reason})"
    finally:
        r.close()
    organisers = ", ".join(sorted(mine))
    if not runs:
        return f"no active run of organiser {organisers} on this broker; waiting for one"
    return f"{len(runs)} active run(s) of organiser {organisers}: {', '.join(sorted(runs)[:5])}"


def _run_celery_worker(app: Any, name: str, concurrency: int, queues: list[str]) -> None:
    """``celery worker --pool=prefork --concurrency=N --hostname=NAME --queues=QUEUES
    --loglevel=INFO --without-gossip --without-mingle --without-heartbeat``, built as that
    command builds it (the same keywords to ``app.Worker``) without going through Celery's
    command line: importing it (click, click-repl, prompt_toolkit) cost every worker about
    0.2 s of CPU at start, while the run waits for its first move."""
    from celery.concurrency import get_implementation
    from celery.exceptions import SecurityError
    from celery.utils.nodenames import default_nodename

    worker = app.Worker(
        hostname=default_nodename(name),
        pool=get_implementation("prefork"),
        pool_cls=None,
        concurrency=concurrency,
        # only its organisers' queues: no task reaches a worker that cannot verify it
        queues=queues,
        loglevel=logging.INFO,
        logfile=None,
        pidfile=None,
        statedb=None,
        without_gossip=True,
        without_mingle=True,
        without_heartbeat=True,
        optimization="default",
        prefetch_multiplier=app.conf.worker_prefetch_multiplier,
        autoscale=None,
        beat=None,
        detach=False,
        exclude_queues=None,
        executable=None,
        heartbeat_interval=None,
        include=None,
        max_memory_per_child=None,
        max_tasks_per_child=None,
        no_color=False,
        pool_start_method=None,
        purge=False,
        quiet=True,  # no banner: our own start lines say what matters, and it runs `uname -p`
        schedule_filename="celerybeat-schedule",
        scheduler=None,
        soft_time_limit=None,
        task_events=None,
        time_limit=None,
        umask=None,
    )
    try:
        worker.start()
    except SecurityError as e:  # what Celery's command prints for it
        print(f"tourney worker {name}: {e.args[0]}", file=sys.stderr, flush=True)
