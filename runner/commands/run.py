"""``tourney run CONFIG``: start or resume a run, play it to its end, write the report.

It reads load -> open -> ``with LocalCluster(...)``: start, then
``Coordinator(config, store, dispatcher).run()`` -> report. What the run starts and stops
(the embedded Redis, local workers, health check, the dispatcher; once, also on
SIGTERM/SIGHUP) is ``runner.orchestration.cluster``; the loop itself is
``runner.orchestration.coordinator.Coordinator``.
"""

from __future__ import annotations

import argparse
import logging
import os
import secrets
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, cast

from runner.commands.engine_check import EngineCheck, EnginesCannotPlay
from runner.commands.run_messages import (
    complete_text,
    resume_text,
    worker_hint,
)
from runner.config import TournamentConfig, load_config
from runner.domain.fleet import check_organiser_home, rejected_key_lines
from runner.domain.games import is_chess
from runner.domain.inert import inert
from runner.domain.private_files import read_private_text
from runner.domain.timing import split_cores
from runner.errors import (
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    CommandError,
    InfrastructureFailure,
    UsageError,
)
from runner.orchestration import warm
from runner.orchestration.cluster import (
    ClusterRequest,
    LocalCluster,
    Terminated,
    planned_local_slots,
    terminate_on_signals,
)
from runner.orchestration.dispatcher import BrokerDown, NoWorkerCanServe
from runner.orchestration.local_workers import LocalWorkersFailing
from runner.orchestration.redis_server import RedisServerError
from runner.orchestration.workers_gate import check_broker_url
from runner.report.progress import PLAIN_INTERVAL_S, PROGRESS_EVERY_ENV, Mode, RunProgress, default_mode
from runner.report.replay_memo import ReplayMemo, ReplayWarmer
from runner.storage.artifacts import pack_artifact
from runner.storage.run_dir import (
    RunDir,
    coordinator_lock,
    create_run,
    default_run_dir,
    open_for_resume,
    run_dir_problem,
)
from runner.storage.store import DEFAULT_ATTEMPT_CAP, RunStore

if TYPE_CHECKING:  # imported where used: the local workers start before these load
    from runner.domain.match_values import GameRecord, MatchSpec
    from runner.domain.stages.base import TournamentState
    from runner.orchestration.coordinator import Coordinator, SessionOutcome
    from runner.report.model import ReportData

log = logging.getLogger("tourney.coordinator")

#: the longest the report waits for the replays still being computed ahead (then it computes
#: what is missing itself)
REPLAY_WAIT_S = 10.0


def pack_artifacts(
    config: TournamentConfig, rd: RunDir, say: Callable[[str], None] | None = None
) -> dict[str, Path]:
    """Pack every entry (and seed opponent) once per digest into ``artifacts/``, each from one
    read of its files; an entry that cannot be packed as the run recorded it gets a refusal
    instead (``runner.storage.artifacts``: its games are ``build_failed``), said through ``say``."""
    out: dict[str, Path] = {}
    caps = config.limits.entry_caps()
    for spec in [*config.entry_specs().values(), *config.seed_opponent_specs().values()]:
        if spec.digest in out:
            continue
        packed = pack_artifact(rd.artifacts, spec.base_name or spec.name, spec.path, spec.digest, caps)
        if packed.refused:
            log.warning("REFUSED artifact: %s", packed.refused)
            if say is not None:
                say(f"{packed.refused}; its games are build_failed")
        out[spec.digest] = packed.path
    return out


def _setup_logging(rd: RunDir) -> logging.Handler:
    rd.logs.mkdir(parents=True, exist_ok=True)
    handler = logging.FileHandler(rd.logs / "coordinator.log")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger("tourney")
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return handler


def print_standings(run_dir: Path, state: TournamentState, data: ReportData | None = None) -> None:
    """The end-of-run summary from the run's report data; without it (the run could not be
    read back), a plain table of the coordinator's own final state."""
    # local: rich and the report's terminal view load after the run, off its start (docs/benchmarks.md)
    from rich.table import Table
    from rich.text import Text

    from runner.report.terminal import make_console, print_summary

    if data is not None:
        print_summary(data, make_console())
        return
    console = make_console()
    for st in state.stages:
        if not st.standings:
            continue
        t = Table(title=Text(inert(f"{st.name} ({st.planner})")))
        for col in ("#", "entry", "games", "W", "T", "L", "points", "score", "status"):
            t.add_column(col)
        for r in st.standings:
            t.add_row(
                str(r.rank),
                Text(inert(r.entry)),
                str(r.games),
                str(r.wins),
                str(r.ties),
                str(r.losses),
                f"{r.points:g}",
                str(r.score),
                Text(inert(r.status)),
            )
        console.print(t)
    if state.final_ranking:
        ranking = ", ".join(f"{i}. {n}" for i, n in enumerate(state.final_ranking, 1))
        console.print(Text(inert("final ranking: " + ranking)))


def cmd_run(args: argparse.Namespace) -> int:
    config_path = Path(args.config)
    config = load_config(config_path)  # ConfigError: every problem with its location, exit 2
    if config.entries_from_submissions:
        # local: the submissions' store loads only for a config that plays them
        from runner.commands.freeze import freeze_for_run

        # each team's counting version, frozen beside the config; the run plays (and resumes) that
        config_path, config = freeze_for_run(config_path, config)
    if getattr(args, "broker_file", None):
        # a password on the coordinator's own command line would be visible to every local user
        args.broker = read_private_text(Path(args.broker_file), "--broker-file", UsageError)
    if args.inline and args.broker:
        raise UsageError("--inline and --broker exclude each other")
    if args.no_local_workers and not args.broker:
        raise UsageError("--no-local-workers needs --broker (someone must play the matches)")
    if args.workers is not None and args.workers < 1:
        raise UsageError("--workers must be at least 1")
    if args.broker:
        check_broker_url(args.broker)
    if config.timing.exclusive_cores and not args.inline:
        try:  # before the run directory exists: nothing to resume from a config that cannot run
            split_cores(os.sched_getaffinity(0), config.timing.reserved_cores)
        except ValueError as e:
            raise UsageError(str(e)) from e
    run_path = (Path(args.run_dir) if args.run_dir else default_run_dir(config)).resolve()
    problem = run_dir_problem(run_path)
    if problem:
        raise UsageError(("--run-dir " if args.run_dir else "run directory ") + problem)
    if not args.inline:  # the organiser's key signs every task: a home that cannot hold it stops us now
        check_organiser_home()
    check = None if args.no_local_workers else EngineCheck.start(config)
    rd = RunDir(run_path)
    new = not run_path.exists()
    try:
        with coordinator_lock(rd):  # ResumeRefused: another coordinator has it, exit 2
            return _run(args, config, config_path, rd, engine_check=check)
    except EnginesCannotPlay:
        if new:  # nothing was played: leave no run behind, as if it had never started
            shutil.rmtree(run_path, ignore_errors=True)
        raise
    finally:
        if check is not None:
            check.wait()  # the probe's engines and sandboxes are gone before the command ends


@dataclass(frozen=True)
class RunHooks:
    """What another command that plays a run (``tourney fastchess``) adds to ``tourney run``'s
    own path: each accepted match's games, and the session's outcome before the report."""

    on_games: Callable[[MatchSpec, Sequence[GameRecord]], None] | None = None
    on_outcome: Callable[[SessionOutcome], None] | None = None
    progress_mode: str | None = None  # "quiet", "plain", "live"; default: as --no-progress says


def _run(
    args: argparse.Namespace,
    config: TournamentConfig,
    config_path: Path,
    rd: RunDir,
    hooks: RunHooks | None = None,
    engine_check: EngineCheck | None = None,
) -> int:
    hooks = hooks or RunHooks()
    resumed = rd.exists()
    request = ClusterRequest(
        inline=bool(args.inline),
        broker=args.broker,
        workers=args.workers,
        no_local_workers=bool(args.no_local_workers),
        priority=int(getattr(args, "priority", 0) or 0),
    )
    if resumed:
        store = open_for_resume(rd, config_path, config)
        if store.meta().get("finished"):
            # nothing to play: say so, instead of starting a cluster to find out and
            # reprinting the run as if it had just been played (README.md, "Output")
            store.close()
            print(complete_text(args, rd))
            return 0
    else:
        slots = planned_local_slots(config, request)
        if slots is not None:  # openings.per_match: auto, so that every local slot has a match
            config.fit_openings_to_slots(slots)
        store = create_run(rd, config_path, config, secrets.token_hex(8))
    handler = _setup_logging(rd)
    progress_mode = (
        cast(Mode, hooks.progress_mode) if hooks.progress_mode else default_mode(bool(args.no_progress))
    )
    # how often the plain (non-terminal) progress prints a line; CI logs and tests may want it faster
    plain_every_s = float(os.environ.get(PROGRESS_EVERY_ENV) or PLAIN_INTERVAL_S)
    # the report's replays, computed while the matches play rather than after the last one
    # (runner.report.replay_memo; switched in runner.orchestration.warm)
    warmer = ReplayWarmer(ReplayMemo()) if warm.switches().replay_warmer else None
    try:
        # the cluster stops once, on the way out of this block (after the signal handlers are put
        # back: a SIGTERM cannot cut its stop short) or at exit; it starts inside the progress
        # display (its start is said there) and stops while the report is written
        run_id = str(store.meta()["run_id"])
        with LocalCluster(config, rd, run_id, request) as cluster, terminate_on_signals():
            with RunProgress(config.name, progress_mode, plain_interval_s=plain_every_s) as progress:
                code, outcome = _play(
                    args, config, rd, store, cluster, progress, resumed, warmer, hooks, engine_check
                )
            if outcome is not None:
                # nothing the report reads is in the cluster: Redis and the workers stop meanwhile
                with cluster.stopping_meanwhile():
                    _finish_outputs(rd, outcome, code == 0, warmer)
            return code
    except (BrokerDown, LocalWorkersFailing, RedisServerError, NoWorkerCanServe) as e:
        raise InfrastructureFailure(f"{e}\n{resume_text(args)}") from e
    except Terminated as e:
        raise CommandError(f"stopped by {e}\n{resume_text(args)}", exit_code=EXIT_TERMINATED) from e
    except KeyboardInterrupt as e:
        raise CommandError(f"interrupted\n{resume_text(args)}", exit_code=EXIT_INTERRUPTED) from e
    finally:
        if warmer is not None:
            warmer.finish()
        store.close()
        logging.getLogger("tourney").removeHandler(handler)
        handler.close()


def _play(
    args: argparse.Namespace,
    config: TournamentConfig,
    rd: RunDir,
    store: RunStore,
    cluster: LocalCluster,
    progress: RunProgress,
    resumed: bool,
    warmer: ReplayWarmer | None = None,
    hooks: RunHooks | None = None,
    engine_check: EngineCheck | None = None,
) -> tuple[int, SessionOutcome | None]:
    hooks = hooks or RunHooks()
    if resumed:
        requeued = store.requeue_in_flight("coordinator restarted")
        retried = store.retry_failed()
        progress.log(
            f"resuming {rd.path}: {len(requeued)} match(es) in flight re-dispatched"
            + (f", {len(retried)} failed match(es) retried" if retried else "")
        )
    else:
        progress.log(f"new run {rd.path} ({config.name})")
    dispatcher = cluster.start(progress.log, lambda: pack_artifacts(config, rd, progress.log))
    _record_timing(store, config, progress)
    if args.no_local_workers:
        progress.log(f"waiting for workers: {worker_hint(args.broker, rd, config.sandbox == 'none')}")
    # local: after cluster.start, so that Redis and the local worker start before these imports
    from runner.orchestration.coordinator import Coordinator

    coordinator = Coordinator(
        config,
        store,
        dispatcher,
        progress,
        timing=cluster.timing,
        check_resume=resumed,
        republish=cluster.republish,
        on_accepted=_on_accepted(warmer, progress, hooks.on_games),
        on_tick=cluster.supervisor(store, progress.log),
        slots=cluster.slots,
    )
    memory = cluster.sandbox_memory()  # SandboxUnavailable: exit 3, before any match is dispatched
    if config.sandbox != "none" and memory:
        progress.log(f"sandbox {config.sandbox}: {memory}")
        # the report's header shows it ("memory: rlimit only" where no cgroup can be made)
        store.set_meta(sandbox_memory=memory if memory.startswith("memory:") else "memory: rlimit only")
    store.set_meta(sandbox=config.sandbox)
    if engine_check is not None:
        engine_check.require()  # started with the command, answered while the cluster started
    try:
        outcome = coordinator.run()
    finally:
        if warmer is not None:
            warmer.finish()  # it replays what is left meanwhile; the report waits for it
    _record_trust(store, coordinator, progress)
    if hooks.on_outcome is not None:
        hooks.on_outcome(outcome)
    cluster.wind_down(finished=outcome.finished)
    rate = outcome.moves / outcome.elapsed_s if outcome.elapsed_s > 0 else 0.0
    summary = (
        f"played {outcome.matches} match(es), {outcome.games} game(s), {outcome.moves} move(s) "
        f"in {outcome.elapsed_s:.1f}s ({rate:.0f} moves/s)"
    )
    progress.log(summary)
    store.set_meta(
        last_session={
            "mode": "inline" if args.inline else "celery",
            "matches": outcome.matches,
            "games": outcome.games,
            "moves": outcome.moves,
            "elapsed_s": outcome.elapsed_s,
            "ended": time.time(),
        }
    )
    if not outcome.finished:
        for mid in outcome.failed:
            row = store.match_record(mid)
            err = row.result.system_error if row and row.result else None
            outcome.failed_details[mid] = err.detail if err else "?"
        return 1, outcome
    store.set_meta(finished=time.time(), final_ranking=list(outcome.state.final_ranking))
    return 0, outcome


def _on_accepted(
    warmer: ReplayWarmer | None,
    progress: RunProgress | None = None,
    also: Callable[[MatchSpec, Sequence[GameRecord]], None] | None = None,
) -> Callable[[MatchSpec, Sequence[GameRecord]], None]:
    """The coordinator's ``on_accepted``: hands each result to ``warmer`` and its games to
    ``progress`` (a ``finished game`` line each in a plain log)."""

    def accepted(spec: MatchSpec, games: Sequence[GameRecord]) -> None:
        if progress is not None:
            progress.games_finished(spec.match_id, list(games))
        if warmer is not None:
            warmer.add_result(spec, games)
        if also is not None:
            also(spec, games)

    return accepted


def _record_timing(store: RunStore, config: TournamentConfig, progress: RunProgress) -> None:
    """What the config asked for, in the run's metadata and the log (the report adds
    what each worker's results say)."""
    exclusive = config.timing.exclusive_cores
    store.set_meta(
        timing={
            "exclusive_cores": exclusive,
            "reserved_cores": config.timing.reserved_cores if exclusive else 0,
        }
    )
    progress.log(
        "timing: exclusive cores (one CPU per match; a machine plays at most one match per usable core)"
        if exclusive
        else "timing: shared cores (matches share the machine; timing.exclusive_cores gives each its own)"
    )


def _record_trust(store: RunStore, coordinator: Coordinator, progress: RunProgress) -> None:
    """Per-worker counts and what re-judging results cost, kept in the run's metadata."""
    share = coordinator.verify_cpu_s / coordinator.cpu_s if coordinator.cpu_s > 0 else 0.0
    store.set_meta(
        workers=coordinator.health.summary(),
        rejected_notes=dict(coordinator.rejected_notes),
        rejected_keys=coordinator.rejected_keys,
        verification={
            "cpu_s": round(coordinator.verify_cpu_s, 4),
            "coordinator_cpu_s": round(coordinator.cpu_s, 4),
            "share": round(share, 5),
        },
    )
    quarantined = coordinator.health.quarantined()
    if quarantined:
        progress.log("quarantined worker(s): " + ", ".join(f"{r.name} ({r.reason})" for r in quarantined))
    for line in rejected_key_lines(coordinator.rejected_keys):
        progress.log(line)
    log.info(
        "referee replay of results: %.3fs CPU of the coordinator's %.3fs (%.2f%%)",
        coordinator.verify_cpu_s,
        coordinator.cpu_s,
        100 * share,
    )


def _write_pgn(rd: RunDir, data: ReportData | None) -> None:
    """A chess run's ``games.pgn`` (docs/engines.md), from the store as the run ends."""
    if data is not None and not is_chess(data.game):
        return  # not chess: python-chess (about 70 ms to import) need not load
    from runner.report.pgn import write_run_pgn  # local: a run of another game never loads the chess referee

    try:
        count = write_run_pgn(rd.path)
    except Exception as e:  # a broken PGN must not hide the standings
        log.exception("PGN failed")
        print(f"tourney run: could not write games.pgn: {e}", file=sys.stderr)
        return
    if count is not None:
        print(f"PGN: {rd.path / 'games.pgn'} ({count} games)")
    # local: as the PGN's, loaded only as a chess run ends
    from runner.report.engine_logs import LOG_DIR, write_engine_logs

    try:
        logs = write_engine_logs(rd.path)
    except OSError as e:  # as the PGN: the standings come first
        print(f"tourney run: could not write the engine logs: {e}", file=sys.stderr)
        return
    if logs:
        print(f"engine logs: {rd.path / LOG_DIR} ({logs} files)")


def _finish_outputs(
    rd: RunDir, outcome: SessionOutcome, finished: bool, warmer: ReplayWarmer | None = None
) -> None:
    """After the progress display is gone: the report, then the standings, from one
    reading of the run (with the replays ``warmer`` computed while it played)."""
    # local: the report's modules (jinja2...) load only for the run's end
    from runner.report.exports import standings_json, write_games_jsonl_file, write_text
    from runner.report.loader import load_report_data
    from runner.report.site import write_html_report

    data: ReportData | None = None
    written = exported = False
    try:
        data = load_report_data(rd.path)
        ahead = warmer.close(REPLAY_WAIT_S) if warmer is not None else None
        write_html_report(data, rd.report, ahead=ahead)
        written = True
        # the results as files a script reads without tourney (README.md, "Output")
        write_text(rd.standings_json, standings_json(data))
        write_games_jsonl_file(data, rd.games_jsonl)
        exported = True
        if ahead is not None:
            log.info("report: %d replay(s) computed ahead, %d after the run", ahead.hits, ahead.misses)
    except Exception as e:  # a broken report must not hide the standings
        log.exception("report failed")
        print(f"tourney run: could not write the report: {e}", file=sys.stderr)
    _write_pgn(rd, data)
    print_standings(rd.path, outcome.state, data)
    if not finished:
        print(
            f"tourney run: not finished: {len(outcome.failed)} match(es) FAILED after "
            f"{DEFAULT_ATTEMPT_CAP} attempts and the stages that need them cannot finish:",
            file=sys.stderr,
        )
        for mid, why in outcome.failed_details.items():
            print(f"  {mid}: {inert(why, one_line=True)}", file=sys.stderr)
        print("Fix the cause, then run the same command again: failed matches are retried.", file=sys.stderr)
    if written:
        # the last line of every run that played: where to look next (README.md, "Output")
        if exported:
            print(f"results: {rd.standings_json}, {rd.games_jsonl}")
        print(f"report: {rd.report}", flush=True)
