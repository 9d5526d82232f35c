"""What ``tourney run`` says to the organiser about the run itself: the command that resumes
it, what running a complete run again answers, and how another machine joins it."""

from __future__ import annotations

import argparse
import os
import shlex
from pathlib import Path
from urllib.parse import urlsplit

from runner.storage.run_dir import RunDir


def rerun_command(args: argparse.Namespace, run_dir: Path | None) -> str:
    """The ``tourney run`` command line of ``args`` (``run_dir``: with that ``--run-dir``); a
    broker's URL is never repeated (it holds a password): ``--broker-file`` is."""
    words = ["tourney", "run", str(args.config)]
    if run_dir is not None:
        words += ["--run-dir", str(run_dir)]
    if args.broker_file:
        words += ["--broker-file", str(args.broker_file)]
    elif args.broker:
        words += ["--broker", "URL"]
    if args.workers is not None:
        words += ["--workers", str(args.workers)]
    if getattr(args, "priority", 0):
        words += ["--priority", str(args.priority)]
    for flag in ("inline", "no_progress", "no_local_workers"):
        if getattr(args, flag):
            words.append("--" + flag.replace("_", "-"))
    return shlex.join(words)


#: the command that resumes a run, as its caller gave it (the Makefile's `make tournament` sets
#: it: who used make may not have tourney on PATH)
RESUME_HINT_ENV = "TOURNEY_RESUME_HINT"


def resume_text(args: argparse.Namespace) -> str:
    """What an interrupted run prints last: the command that resumes it."""
    hint = os.environ.get(RESUME_HINT_ENV, "").strip()
    return f"resume with: {hint or rerun_command(args, Path(args.run_dir) if args.run_dir else None)}"


def complete_text(args: argparse.Namespace, rd: RunDir) -> str:
    """What running a complete run again says: where its results are, how to start anew."""
    fresh = next(
        rd.path.with_name(f"{rd.path.name}-{n}")
        for n in range(2, 10_000)
        if not rd.path.with_name(f"{rd.path.name}-{n}").exists()
    )
    report = f"its report: {rd.report}" if rd.report.exists() else f"tourney report {rd.path} --html FILE"
    return (
        f"{rd.path} is complete: nothing left to play.\n"
        f"  {report}; standings: tourney standings {rd.path}\n"
        f"  to start a new run of this config: {rerun_command(args, fresh)} (or remove {rd.path})"
    )


def worker_hint(broker: str, rd: RunDir, unsandboxed: bool) -> str:
    """The commands another machine runs to serve this run: its own worker key, made once by
    the organiser (a worker key serves every run of this organiser: docs/deploy.md), the broker,
    and the organiser's consent to ``sandbox: none`` if the config says so."""
    url = masked(broker)
    consent = " --allow-unsandboxed" if unsandboxed else ""
    return (
        "tourney fleet add NAME (once per machine: writes NAME.key, copy it there, mode 0600), then "
        f"TOURNEY_BROKER_URL='{url}' tourney worker --key-file NAME.key{consent} "
        f"(or export BROKER_URL='{url}'; make worker KEY_FILE=NAME.key"
        + (" ARGS=--allow-unsandboxed" if unsandboxed else "")
        + ")"
    )


def masked(url: str) -> str:
    """The broker URL with its password hidden (it is printed)."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    netloc = f":***@{parts.hostname}" + (f":{parts.port}" if parts.port else "")
    return parts._replace(netloc=netloc).geturl()
