"""``tourney team add|list|revoke|organiser``: a contest's teams and their tokens (docs/submissions.md).

``add NAME --email A [--email B]`` prints the team's token once (the store keeps only a salted
hash); ``list`` shows every team, its emails (this is the organiser's terminal) and whether it
is revoked; ``revoke NAME`` refuses its token from the next request on; ``organiser`` prints a
new organiser token (for the server's organiser view), replacing the previous one.

The contest is the config's (``--config``); without it, the one contest directory under
``./contests`` if there is exactly one.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path

from runner.config import load_config
from runner.errors import UsageError
from runner.submissions.contest_dir import ContestDir, contest_dir_of
from runner.submissions.store import SubmissionStore


def contest_of(args: argparse.Namespace) -> ContestDir:
    """The contest directory the command line names (``--contest-dir``, ``--config``, or the only one)."""
    override = Path(args.contest_dir) if getattr(args, "contest_dir", None) else None
    if getattr(args, "config", None):
        return contest_dir_of(load_config(args.config), override)
    if override is not None:
        return ContestDir(override.resolve())
    found = sorted(p for p in Path("contests").glob("*") if (p / "submissions.sqlite").is_file())
    if len(found) != 1:
        where = ", ".join(str(p) for p in found) or "none under ./contests"
        raise UsageError(f"name the contest with --config CONFIG (contests found: {where})")
    return ContestDir(found[0].resolve())


def cmd_team(args: argparse.Namespace) -> int:
    contest = contest_of(args).make()
    store = SubmissionStore(contest.store)
    try:
        return _team(args, store)
    finally:
        store.close()


def _team(args: argparse.Namespace, store: SubmissionStore) -> int:
    if args.team_command == "add":
        token = store.add_team(args.name, args.email)
        print(f"added team {args.name} ({', '.join(args.email)}); its token, shown this once:")
        print(token)
        print("give it to the team only (tourney submit URL FILE --token-file F, or the upload page)")
        return 0
    if args.team_command == "revoke":
        store.revoke(args.name, args.reason)
        print(f"revoked team {args.name}: its token is refused from now on")
        return 0
    if args.team_command == "organiser":
        print("the organiser token (the organiser view: /organiser), shown this once:")
        print(store.new_organiser_token())
        return 0
    if args.team_command == "list":
        teams = store.teams()
        if args.json:
            print(json.dumps([t.__dict__ for t in teams], indent=2))
            return 0
        if not teams:
            print("no team yet: tourney team add NAME --email ADDRESS")
        for t in teams:
            when = dt.datetime.fromtimestamp(t.created, dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
            state = f"REVOKED {t.revoked_reason}".rstrip() if t.revoked else "active"
            print(f"{t.name:24} {', '.join(t.emails):40} added {when}  {state}")
        return 0
    raise UsageError(f"unknown team command {args.team_command!r}")
