"""``tourney serve CONFIG``: the contest's submission server (docs/submissions.md).

One command on one machine: the web app (Starlette under uvicorn, loopback by default) over
the contest's store, plus what ``tourney run`` starts for its matches (``LocalCluster``: the
embedded Redis and a local worker, or ``--broker-file`` naming a broker other workers serve),
the intake pool that unpacks each received upload (``runner.orchestration.submission_intake``)
and the checks' loop (``runner.orchestration.submission_checks``) in threads. Stopped and
started again it loses nothing: the store is the truth, and every upload still to unpack and
every check still pending is taken up again as it starts.
"""

from __future__ import annotations

import argparse
import logging
import secrets
import sys
from pathlib import Path
from typing import cast

from runner.config import TournamentConfig, load_config
from runner.config.submission_rules import SubmissionsModel
from runner.domain.entries import EntrySpec
from runner.domain.packing import pack_entry
from runner.domain.private_files import read_private_text
from runner.errors import InfrastructureFailure, UsageError
from runner.orchestration.celery_dispatcher import CeleryDispatcher
from runner.orchestration.cluster import ClusterRequest, LocalCluster
from runner.orchestration.submission_checks import CheckLoop
from runner.orchestration.submission_intake import IntakeLoop
from runner.orchestration.workers_gate import check_broker_url
from runner.storage.run_dir import RunDir, default_run_dir
from runner.storage.store import RunStore
from runner.submissions.contest_dir import ContestDir, contest_dir_of
from runner.submissions.store import SubmissionStore

log = logging.getLogger("tourney.serve")


class _EventsToLog:
    """What ``LocalCluster.supervisor`` records (a restarted Redis or worker), for a server that
    has no run store: into its log."""

    def log(self, kind: str, match_id: str | None = None, detail: str = "") -> None:
        log.warning("%s: %s", kind, detail)


def _logging(contest: ContestDir) -> None:
    logs = contest.checks / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    fmt = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    root = logging.getLogger("tourney")
    for handler in (logging.FileHandler(logs / "serve.log"), logging.StreamHandler(sys.stderr)):
        handler.setFormatter(fmt)
        root.addHandler(handler)
    root.setLevel(logging.INFO)


def house_artifact(contest: ContestDir, house: EntrySpec) -> Path:
    path = contest.artifact(house.digest)
    if not path.exists():
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(pack_entry(house.path))
        tmp.replace(path)
    return path


def cmd_serve(args: argparse.Namespace) -> int:
    config = load_config(args.config)
    rules = config.submissions
    if rules is None:
        raise UsageError(
            f"{args.config} has no submissions: section (docs/submissions.md says what it holds)"
        )
    broker = (
        read_private_text(Path(args.broker_file), "--broker-file", UsageError) if args.broker_file else None
    )
    if broker:
        check_broker_url(broker)
    if args.no_local_workers and not broker:
        raise UsageError("--no-local-workers needs --broker-file (someone must play the checks)")
    contest = contest_dir_of(config, Path(args.contest_dir) if args.contest_dir else None).make()
    with contest.served():  # ContestBusy: exit 2; a killed server's half uploads are gone
        return _serve(args, config, rules, contest, broker)


def _serve(
    args: argparse.Namespace,
    config: TournamentConfig,
    rules: SubmissionsModel,
    contest: ContestDir,
    broker: str | None,
) -> int:
    # local: uvicorn and the web app (starlette, jinja2) load only for this command
    import uvicorn

    from runner.web.app import ServeContext, make_app
    from runner.web.live_run import LiveRun

    store = SubmissionStore(contest.store)
    _logging(contest)
    run_id = store.meta("checks_run")
    if run_id is None:
        run_id = f"checks-{config.name}-{secrets.token_hex(4)}"
        store.set_meta("checks_run", run_id)
    secret_hex = store.meta("csrf_secret")
    if secret_hex is None:
        secret_hex = secrets.token_hex(32)
        store.set_meta("csrf_secret", secret_hex)
    if store.meta("organiser_token") is None:
        print("the organiser token (the organiser view: /organiser), shown this once:")
        print(store.new_organiser_token(), flush=True)
    # the run tourney run plays from the same directory (its default), shown live on /run
    run_dir = (Path(args.run_dir) if args.run_dir else default_run_dir(config)).resolve()
    house = config.resolve_player(rules.house)
    house_artifact(contest, house)
    request = ClusterRequest(
        broker=broker, workers=args.workers, no_local_workers=bool(args.no_local_workers)
    )
    loop: CheckLoop | None = None
    intake: IntakeLoop | None = None
    try:
        with LocalCluster(config, RunDir(contest.checks), run_id, request) as cluster:

            def say(line: str) -> None:
                print(f"tourney serve: {line}", flush=True)

            dispatcher = cluster.start(say, lambda: {house.digest: contest.artifact(house.digest)})
            if not isinstance(dispatcher, CeleryDispatcher):
                raise InfrastructureFailure(
                    "the checks need a broker (no inline checks: entries never run here)"
                )
            cluster.sandbox_memory()  # SandboxUnavailable: exit 3 before anything is served
            timing = cluster.timing
            loop = CheckLoop(
                config,
                store,
                contest,
                dispatcher,
                house,
                dispatcher.publish_artifacts,
                run_id=run_id,
                lease_s=timing.lease_s,
                lost_s=timing.lost_s,
                supervise=cluster.supervisor(cast(RunStore, _EventsToLog()), say),
            ).start()
            intake = IntakeLoop(
                store, contest, rules, game=config.game, protocol=house.protocol, taken=loop.wake
            ).start()
            ctx = ServeContext(
                config=config,
                rules=rules,
                store=store,
                contest=contest,
                protocol=house.protocol,
                wake_checks=loop.wake,
                wake_intake=intake.wake,
                secret=bytes.fromhex(secret_hex),
                live=LiveRun(run_dir),
            )
            server = uvicorn.Server(
                uvicorn.Config(
                    make_app(ctx),
                    host=args.host,
                    port=args.port,
                    log_level="warning",
                    access_log=False,
                    server_header=False,
                    timeout_graceful_shutdown=5,
                )
            )
            say(
                f"serving {config.name} on http://{args.host}:{args.port}/ "
                f"(deadline {rules.deadline.isoformat()}; contest directory {contest.path}; "
                f"the run {run_dir} live on /run)"
            )
            server.run()
            say("stopping")
            intake.stop()  # the pool first: the cluster's stop may take long (its own finally too)
    finally:
        if intake is not None:
            intake.stop()
        if loop is not None:
            loop.stop()
        store.close()
    return 0
