"""``tourney fastchess ARGS...`` and ``tourney cutechess ARGS...``: an engine match from the
command line engine developers already type (docs/engines.md, "tourney fastchess and tourney
cutechess").

The tool's flags are read (``runner.config.engine_cli``) and written as a tourney config with
the engines as entries in the run directory (``runner.config.engine_cli_run``); the run is
then ``tourney run``'s own (embedded Redis and a local worker, or ``--broker-file`` for the
workers of a fleet; every engine in the sandbox; every result re-judged), and while it plays,
standard output gets the tool's lines (``runner.report.engine_lines``) and nothing else:
tourney's own messages, the standings and where the report is go to standard error.

tourney's own options come before or among the tool's, with two dashes: ``--run-dir DIR``
(default ``runs/<tool>-<digest of the command line>``, so the same command resumes its run),
``--broker-file FILE``, ``--no-local-workers``, ``--inline``, ``--workers N`` (default: the
tool's ``-concurrency``).
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

from runner.commands.run import RunHooks, _run
from runner.config import load_config
from runner.config.engine_cli import EngineCli, EngineCliError, Tool, pairs_per_encounter, parse_engine_cli
from runner.config.engine_cli_run import write_cli_config
from runner.domain.private_files import read_private_text
from runner.errors import UsageError
from runner.orchestration.workers_gate import check_broker_url
from runner.report.engine_lines import MatchLines, SprtSpec
from runner.report.pgn import chess_matches
from runner.storage.run_dir import RunDir, coordinator_lock
from runner.storage.store import RunStore

if TYPE_CHECKING:
    from runner.domain.match_values import GameRecord, MatchSpec
    from runner.orchestration.coordinator import SessionOutcome

#: tourney's own options of these commands: name -> takes a value
OWN_OPTIONS = {
    "--run-dir": True,
    "--broker-file": True,
    "--workers": True,
    "--inline": False,
    "--no-local-workers": False,
}


def split_own_options(tool: str, words: Sequence[str]) -> tuple[dict[str, str | bool], list[str]]:
    """tourney's ``--options`` (module doc) apart from the tool's flags."""
    own: dict[str, str | bool] = {}
    rest: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        name, eq, value = word.partition("=")
        if name in OWN_OPTIONS:
            if OWN_OPTIONS[name]:
                if not eq:
                    if i + 1 >= len(words):
                        raise UsageError(f"{name} needs a value")
                    value = words[i + 1]
                    i += 1
                own[name] = value
            else:
                own[name] = True
        elif word.startswith("--") and word not in ("--compliance",):
            raise UsageError(f"unknown option {word} (tourney's own: {', '.join(OWN_OPTIONS)})")
        else:
            rest.append(word)
        i += 1
    return own, rest


def default_run_dir(tool: str, words: Sequence[str]) -> Path:
    digest = hashlib.sha256("\0".join(words).encode()).hexdigest()[:10]
    return Path("runs") / f"{tool}-{digest}"


def cmd_engine_match(args: argparse.Namespace) -> int:
    tool: Tool = args.command
    own, words = split_own_options(tool, args.words)
    try:
        cli = parse_engine_cli(tool, words)
    except EngineCliError as e:
        raise UsageError(str(e)) from e
    for warning in cli.warnings:
        print(f"tourney {tool}: warning: {warning}", file=sys.stderr)
    run_dir = Path(str(own.get("--run-dir") or default_run_dir(tool, words))).resolve()
    try:
        config_path = write_cli_config(cli, run_dir, Path.cwd())
    except EngineCliError as e:
        raise UsageError(str(e)) from e
    config = load_config(config_path)  # ConfigError: located in the written config, exit 2
    broker = None
    if own.get("--broker-file"):
        broker = read_private_text(Path(str(own["--broker-file"])), "--broker-file", UsageError)
        check_broker_url(broker)
    workers = int(str(own["--workers"])) if "--workers" in own else cli.concurrency
    run_args = argparse.Namespace(
        config=str(config_path),
        run_dir=str(run_dir),
        broker=broker,
        broker_file=own.get("--broker-file"),
        workers=workers,
        inline=bool(own.get("--inline")),
        no_progress=True,
        no_local_workers=bool(own.get("--no-local-workers")),
    )
    if run_args.inline and broker:
        raise UsageError("--inline and --broker-file exclude each other")
    if run_args.no_local_workers and not broker:
        raise UsageError("--no-local-workers needs --broker-file (someone must play the matches)")
    out = sys.stdout
    lines = match_lines(cli, lambda line: print(line, file=out, flush=True))
    rd = RunDir(run_dir)
    if rd.exists() and _replay_played(rd, lines):
        lines.finish()  # a complete run: its totals again (nothing is played)
    print(f"tourney {tool}: run directory {run_dir} (the same command resumes it)", file=sys.stderr)
    decision: list[str] = []

    def on_outcome(outcome: SessionOutcome) -> None:
        for stage in outcome.state.stages:
            if stage.planner == "sprt" and stage.summary:
                decision.append(stage.summary.removeprefix("SPRT ").split(":")[0])
        if outcome.finished:
            lines.finish(decision[0] if decision else "")

    def on_games(spec: MatchSpec, games: Sequence[GameRecord]) -> None:
        lines.add_pair(list(games))

    with contextlib.redirect_stdout(sys.stderr), coordinator_lock(rd):
        code = _run(run_args, config, config_path, rd, RunHooks(on_games, on_outcome, "quiet"))
    if cli.pgnout and (run_dir / "games.pgn").is_file():
        shutil.copyfile(run_dir / "games.pgn", Path(cli.pgnout))
    if cli.log_file and (run_dir / "logs" / "coordinator.log").is_file():
        shutil.copyfile(run_dir / "logs" / "coordinator.log", Path(cli.log_file))
    return code


def match_lines(cli: EngineCli, emit: object) -> MatchLines:
    """The printer of ``cli``'s lines (``emit`` takes each)."""
    playing = cli.playing()
    names = [e.display_name() for e in playing]
    encounters = (
        len(names) * (len(names) - 1) // 2
        if cli.tournament == "roundrobin"
        else cli.seeds * (len(names) - cli.seeds)
    )
    sprt = None
    if cli.sprt is not None:
        s = cli.sprt
        sprt = SprtSpec(
            s.elo0, s.elo1, s.alpha, s.beta, "logistic" if s.model == "logistic" else "normalized"
        )
    return MatchLines(
        style=cli.output,
        names=names,
        emit=cast(Callable[[str], None], emit),
        ratinginterval=cli.ratinginterval,
        scoreinterval=cli.scoreinterval,
        penta=cli.report_penta,
        sprt=sprt,
        header=results_header(cli),
        total_games=2 * pairs_per_encounter(cli) * encounters,
    )


def results_header(cli: EngineCli) -> str:
    """fastchess's ``(10+0.1, 1t, 16MB, book.epd)`` of its results block."""
    playing = cli.playing()

    def limit(s: dict[str, str]) -> str:
        if "tc" in s:
            return s["tc"]
        if "st" in s:
            return f"{float(s['st']):g}/move"
        if "depth" in s:
            return f"{s['depth']} plies"
        if "nodes" in s:
            return f"{s['nodes']} nodes"
        return "10+0.1"

    def both(values: list[str]) -> str:
        return values[0] if values[0] == values[1] else f"{values[0]} - {values[1]}"

    first, second = playing[0], playing[1]
    tc = both([limit(first.settings), limit(second.settings)])
    threads = both(
        [f"{e.options['Threads']}t" if "Threads" in e.options else "NULL" for e in (first, second)]
    )
    hashes = both([f"{e.options['Hash']}MB" if "Hash" in e.options else "NULL" for e in (first, second)])
    book = f", {Path(cli.openings.file).name}" if cli.openings else ""
    return f"{tc}, {threads}, {hashes}{book}"


def _replay_played(rd: RunDir, lines: MatchLines) -> bool:
    """A resumed run's pairs already played, counted without printing (the totals go on);
    whether the run is complete."""
    store = RunStore.open(rd.path)
    try:
        for record in chess_matches(store):
            if record.result is not None:
                lines.add_pair(record.result.games, quiet=True)
        return bool(store.meta().get("finished"))
    finally:
        store.close()
