"""`tourney` command line (README.md).

The coordinator side's handlers live in ``runner.commands``; ``tourney
worker`` and ``tourney play`` are the workers side's own commands (this
program serves both machines), named here only as strings and imported
lazily, so `tourney validate` never pays for importing Celery. Handlers return
the process exit code, or raise a ``CommandError`` (``runner.errors``) that
``main`` prints once as ``tourney CMD: message`` and turns into its exit code.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any

from runner.domain.inert import inert
from runner.domain.registry import SANDBOX_KINDS
from runner.errors import EXIT_CODES_TEXT, EXIT_OUTPUT_CLOSED, CommandError
from runner.orchestration import standby

# subcommand -> "module:function"
HANDLERS = {
    "validate": "runner.commands.validate:cmd_validate",
    "run": "runner.commands.run:cmd_run",
    "worker": "workers.worker_cli:cmd_worker",
    "play": "workers.play:cmd_play",
    "judge": "runner.commands.judge:cmd_judge",
    "matches": "runner.commands.report:cmd_matches",
    "standings": "runner.commands.report:cmd_standings",
    "rerun": "runner.commands.rerun:cmd_rerun",
    "accept": "runner.commands.disputes:cmd_accept",
    "disputes": "runner.commands.disputes:cmd_disputes",
    "replay": "runner.commands.report:cmd_replay",
    "report": "runner.commands.report:cmd_report",
    "build-log": "runner.commands.build_log:cmd_build_log",
    "pgn": "runner.commands.pgn:cmd_pgn",
    "fleet": "runner.commands.fleet:cmd_fleet",
    "fastchess": "runner.commands.engine_match:cmd_engine_match",
    "cutechess": "runner.commands.engine_match:cmd_engine_match",
    "team": "runner.commands.team:cmd_team",
    "serve": "runner.commands.serve:cmd_serve",
    "submit": "runner.commands.submit:cmd_submit",
    "freeze": "runner.commands.freeze:cmd_freeze",
}
#: commands whose words are another tool's flags (``-engine cmd=...``): given to the handler as
#: they are, never to argparse, which would read ``-engine`` as an option of its own
FOREIGN_FLAGS = ("fastchess", "cutechess")


def tourney_version() -> str:
    """The installed package's version (``pyproject.toml``)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("tourney")
    except PackageNotFoundError:  # run from a source tree that was never installed
        return "0+unknown"


class _VersionAction(argparse.Action):
    """``--version``, the version looked up only when asked: reading the installed package's
    metadata costs about 25 ms, and every ``tourney`` process (each worker too) builds this parser."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: object) -> None:
        print(f"tourney {tourney_version()}")  # on stdout, as argparse's own version action
        parser.exit()


def build_parser() -> argparse.ArgumentParser:
    # allow_abbrev=False everywhere: argparse would take `--worker 3` for `--workers 3`, and an
    # option added later would silently change what an old abbreviation means
    p = argparse.ArgumentParser(
        prog="tourney",
        description="Distributed batch tournament runner.",
        epilog=EXIT_CODES_TEXT,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        allow_abbrev=False,
    )
    p.add_argument("--version", action=_VersionAction, help="show the program's version number and exit")
    commands = p.add_subparsers(dest="command", required=True)

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, help=help, allow_abbrev=False)

    s = command("validate", help="check a config and its entries' programs; exit 2 with file:line:col errors")
    s.add_argument("config")
    s.add_argument(
        "--build", action="store_true", help="also build every entry in the sandbox, as the workers will"
    )

    s = command("run", help="run (or resume) a tournament")
    s.add_argument("config")
    s.add_argument("--run-dir", help="run directory (default runs/<tournament name>)")
    s.add_argument(
        "--broker",
        help="redis://:PASSWORD@HOST:PORT/0 of an existing broker (visible in ps: prefer --broker-file)",
    )
    s.add_argument("--broker-file", help="a file (mode 0600) holding the broker URL")
    s.add_argument(
        "--workers", type=int, help="matches the local worker plays at once (default: one per core)"
    )
    s.add_argument("--inline", action="store_true", help="run matches in-process, no Redis/Celery")
    s.add_argument("--no-progress", action="store_true", help="no live progress display")
    s.add_argument("--no-local-workers", action="store_true", help="with --broker: start no local workers")
    s.add_argument(
        "--priority",
        type=int,
        default=0,
        help="with --broker: runs of one organiser share its workers, higher priority first (default 0)",
    )

    s = command("worker", help="serve matches from a broker")
    s.add_argument(
        "--broker",
        help="redis://:PASSWORD@HOST:PORT/0; default: $TOURNEY_BROKER_URL or --broker-file "
        "(a password on a command line is visible to every local user)",
    )
    s.add_argument("--broker-file", help="a file (mode 0600) holding the broker URL")
    s.add_argument("--concurrency", type=int, help="matches at once (default: one per usable core)")
    s.add_argument("--name")
    s.add_argument("--work-dir", help="artifact and build cache (default ~/.cache/tourney)")
    s.add_argument("--allow-no-password", action="store_true", help="accept a broker URL without password")
    s.add_argument(
        "--key-file", help="this worker's key file from `tourney fleet add` (else $TOURNEY_WORKER_KEY_FILE)"
    )
    s.add_argument(
        "--allow-unsandboxed",
        action="store_true",
        help="run tasks whose config says 'sandbox: none' (trusted entries only); refused otherwise",
    )
    s.add_argument(
        "--sandbox-bind",
        action="append",
        default=[],
        metavar="PATH",
        help="a read-only host path added to every sandbox, e.g. a language runtime under /opt (repeatable)",
    )
    s.add_argument("--max-move-wall-s", type=float, help="ceiling on any task's per-move time limit")
    s.add_argument("--max-memory-mb", type=int, help="ceiling on any task's memory limit")
    s.add_argument(
        "--skip-health-check", action="store_true", help="do not try a sandboxed move and C build at start"
    )

    s = command("play", help="play one match between entry directories")
    s.add_argument("--game", required=True)
    s.add_argument("--board", help="board file")
    s.add_argument("--size", help="board size: pousse N, mnk 'W H K' or WxHxK, boxing WxH")
    s.add_argument("--games", type=int, default=1)
    s.add_argument("--json", action="store_true")
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--sandbox", choices=SANDBOX_KINDS, default="bwrap")
    s.add_argument("--move-time", type=float, help="per-move wall limit in seconds")
    s.add_argument("--tc", help="chess engines: time control, e.g. 10+0.1, 40/60 or inf (default 10+0.1)")
    s.add_argument("--st", type=float, help="chess engines: seconds per move")
    s.add_argument("--nodes", type=int, help="chess engines: nodes per move (UCI go nodes)")
    s.add_argument("--depth", type=int, help="chess engines: plies per move")
    s.add_argument("--timemargin", type=int, metavar="MS", help="chess engines: ms an engine may overstep")
    s.add_argument("--variant", help="the game's variant parameter (chess: standard or chess960)")
    s.add_argument("--pgn", metavar="FILE", help="chess: write the games as PGN to FILE (as games.pgn)")
    s.add_argument("--quiet", action="store_true", help="print results only, no positions")
    s.add_argument("entries", nargs="+", metavar="ENTRY_DIR[:VARIANT]")

    s = command("judge", help="referee transcripts; one JSON line each")
    s.add_argument("--game", required=True)
    s.add_argument("--board", help="board file (boxing)")
    s.add_argument("transcripts", nargs="+", metavar="TRANSCRIPT")

    s = command("matches", help="list a run's matches")
    s.add_argument("run_dir")
    s.add_argument("--stage")
    s.add_argument("--json", action="store_true")

    s = command("standings", help="each stage's standings")
    s.add_argument("run_dir")
    s.add_argument("--json", action="store_true")
    s.add_argument("--csv", help="also write standings as CSV to this file")

    s = command("rerun", help="replay a disputed match; keep the result as a numbered candidate")
    s.add_argument("run_dir")
    s.add_argument("match_id")
    s.add_argument("--accept", action="store_true", help="gone: review, then `tourney accept` (an error)")
    s.add_argument("--allow-changed-code", action="store_true", help="rerun even if an entry changed")
    s.add_argument("--sandbox", choices=SANDBOX_KINDS)
    s.add_argument("--by", help="who asked for the rerun (default: $USER)")

    s = command("accept", help="make a stored rerun candidate official, replan; plays nothing")
    s.add_argument("run_dir")
    s.add_argument("match_id")
    s.add_argument("candidate", type=int, help="the candidate's number, as `tourney rerun` printed it")
    s.add_argument("--reason", required=True, help="why (kept with the result)")
    s.add_argument("--by", help="who accepts (default: $USER)")
    s.add_argument(
        "--adopt-code", action="store_true", help="changed code: later matches use the code the candidate ran"
    )
    s.add_argument(
        "--keep-code", action="store_true", help="changed code: later matches keep the run's recorded code"
    )

    s = command("disputes", help="every rerun candidate and every accept of a run")
    s.add_argument("run_dir")
    s.add_argument("--json", action="store_true")

    s = command("replay", help="print a game move by move")
    s.add_argument("run_dir")
    s.add_argument("match_id")
    s.add_argument("--game", type=int, default=1, help="game number within the match (1-based)")

    s = command("report", help="standings, brackets and replays")
    s.add_argument("run_dir")
    s.add_argument("--html", help="write the HTML report here")
    s.add_argument(
        "--layout",
        choices=["auto", "single", "split"],
        default="auto",
        help="single: one self-contained file; split: the page plus <name>-data/ beside it, "
        "loaded on demand; auto (default): split above 1,000 matches",
    )
    s.add_argument("--csv", help="write standings CSV here")
    s.add_argument("--json", help="write standings JSON here")
    s.add_argument("--games-jsonl", help="write every game with its transcript as JSON Lines here")

    s = command("pgn", help="write a chess run's games as PGN again (runs/NAME/games.pgn)")
    s.add_argument("run_dir")
    s.add_argument("-o", "--output", help="write here instead of RUN/games.pgn ('-': standard output)")

    s = command("build-log", help="print the full log of an entry's failed build")
    s.add_argument("run_dir")
    s.add_argument("entry", nargs="?", help="entry name (without it: every failed build, one line each)")

    for tool in FOREIGN_FLAGS:
        s = command(
            tool,
            help=f"an engine match from {tool}'s own flags (-engine cmd=... -each tc=... -rounds N ...): "
            "docs/engines.md",
        )
        s.add_argument("words", nargs=argparse.REMAINDER, metavar="FLAGS")

    _fleet_parser(commands)
    _submission_parsers(command)
    return p


def _fleet_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """``fleet add|list|revoke|unquarantine`` (docs/fleet.md): here, not beside its handler, so
    that parsing any command does not import the fleet's keys and signatures."""
    s = sub.add_parser("fleet", help="enrol, list and revoke workers (their keys)", allow_abbrev=False)
    fleet = s.add_subparsers(dest="fleet_command", required=True)
    a = fleet.add_parser(
        "add", help="enrol a worker; writes its key file (give it to that machine only)", allow_abbrev=False
    )
    a.add_argument("name")
    a.add_argument("--out", help="where to write the worker key file (default <home>/workers/NAME.key)")
    ls = fleet.add_parser(
        "list", help="every enrolled worker, its key and whether it is revoked", allow_abbrev=False
    )
    ls.add_argument("--json", action="store_true")
    r = fleet.add_parser("revoke", help="refuse a worker's key from now on", allow_abbrev=False)
    r.add_argument("name")
    r.add_argument("--reason", required=True, help="why (shown by `fleet list` and the coordinator)")
    u = fleet.add_parser(
        "unquarantine",
        help="lift a worker's quarantine in every run of this organiser (running ones within a second)",
        allow_abbrev=False,
    )
    u.add_argument("name")


def _submission_parsers(command: Callable[[str, str], argparse.ArgumentParser]) -> None:
    """``serve``, ``team``, ``submit``, ``freeze`` (docs/submissions.md); their modules load only
    for the command that runs."""
    s = command("serve", "the contest's submission server (uploads, checks, status board)")
    s.add_argument("config")
    s.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default loopback: a TLS proxy in front)"
    )
    s.add_argument("--port", type=int, default=8000)
    s.add_argument(
        "--broker-file", help="a file (mode 0600) holding a broker URL; default: an embedded Redis"
    )
    s.add_argument(
        "--workers", type=int, help="checks the local worker plays at once (default: one per core)"
    )
    s.add_argument(
        "--no-local-workers", action="store_true", help="with --broker-file: start no local worker"
    )
    s.add_argument("--contest-dir", help="the contest directory (default: submissions.dir or contests/NAME)")
    s.add_argument(
        "--run-dir", help="the run shown live on /run while tourney run plays it (default: runs/NAME)"
    )

    s = command("team", "add, list and revoke a contest's teams (tokens)")
    team = s.add_subparsers(dest="team_command", required=True)
    subcommands = {
        "add": "add a team; prints its token once",
        "list": "every team, its emails and whether it is revoked",
        "revoke": "refuse a team's token from now on",
        "organiser": "a new organiser token (replaces the old one)",
    }
    for name, help in subcommands.items():
        p = team.add_parser(name, help=help, allow_abbrev=False)
        if name in ("add", "revoke"):
            p.add_argument("name")
        if name == "add":
            p.add_argument("--email", action="append", required=True, help="a member's email (repeatable)")
        if name == "revoke":
            p.add_argument("--reason", default="", help="why (shown to the organiser)")
        if name == "list":
            p.add_argument("--json", action="store_true")
        p.add_argument("--config", help="the contest's config (default: the one contest under ./contests)")
        p.add_argument("--contest-dir", help="the contest directory (default: the config's)")

    s = command("submit", "upload a version to a contest's server and print its checks")
    s.add_argument("url", help="the contest's server, e.g. https://contest.example.org")
    s.add_argument("path", metavar="FILE|DIR")
    s.add_argument("--token-file", required=True, help="a file (mode 0600) holding your team's token")
    s.add_argument("--no-wait", action="store_true", help="upload and return; do not wait for the checks")

    s = command("freeze", "write the config a run plays: each team's counting submission")
    s.add_argument("config")
    s.add_argument("--contest-dir", help="the contest directory (default: the config's)")
    s.add_argument("--force", action="store_true", help="freeze before the deadline")


#: ``tourney worker --standby ...``: the local worker ``tourney run`` starts early (not a user's command)
STANDBY_HANDLER = "workers.standby:main"


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:2] == ["worker", standby.STANDBY_FLAG]:
        module_name, func_name = STANDBY_HANDLER.split(":")
        standby_main: Callable[[list[str], Callable[[list[str]], int]], int] = getattr(
            importlib.import_module(module_name), func_name
        )
        return standby_main(words[2:], _main)
    # `tourney run`'s local worker starts now, in standby, and imports while we do
    standby.start(words)
    try:
        code = _main(words)
        sys.stdout.flush()  # here, where a reader gone away is caught, not at the interpreter's exit
        return code
    except BrokenPipeError:
        return _output_closed()
    finally:
        standby.discard()  # only if the run did not hand it its work


def _output_closed() -> int:
    """The reader of stdout went away (``tourney matches RUN --json | head -1``): nothing
    more is wanted, so no traceback; stdout goes to /dev/null so that the interpreter's own
    last flush does not fail again on its way out."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return EXIT_OUTPUT_CLOSED


def _main(argv: Sequence[str]) -> int:
    if argv and argv[0] in FOREIGN_FLAGS and not {"-h", "--help"} & set(argv[1:2]):
        args = argparse.Namespace(command=argv[0], words=list(argv[1:]))
    else:
        args = build_parser().parse_args(argv)
    module_name, func_name = HANDLERS[args.command].split(":")
    module = importlib.import_module(module_name)
    handler: Callable[[argparse.Namespace], int] = getattr(module, func_name)
    try:
        return handler(args)
    except CommandError as e:
        # the one place a command's error is printed: ``tourney CMD: message``, its exit code
        # messages quote paths, names and details that came from entries: inert
        print(inert(f"tourney {args.command}: {e}" if e.prefixed else str(e)), file=sys.stderr)
        return e.exit_code
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
