"""``tourney freeze CONFIG``: the config a run plays, with each team's counting submission.

Reads the contest's store (``tourney serve``'s), picks each team's counting version by the
config's ``submissions.counts`` (``runner.submissions.counting``), and writes beside the config
``<name>.frozen.yaml``: the same config whose ``entries`` are those versions' entry
directories, kept by digest in the contest directory (``entries/<digest>``), in the order the
teams registered; and ``<name>.frozen.json``, which names for each team the version, upload
and digest it plays. ``tourney run NAME.frozen.yaml`` then plays them, and its run directory
records each entry by that digest (``resolved.json``). Before the deadline it refuses unless
``--force``: what counts may still change.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from pathlib import Path
from typing import Any

import yaml

from runner.config import load_config
from runner.errors import UsageError
from runner.submissions.contest_dir import contest_dir_of
from runner.submissions.counting import counting
from runner.submissions.store import SubmissionStore


def cmd_freeze(args: argparse.Namespace) -> int:
    config_path = Path(args.config)
    config = load_config(config_path)
    rules = config.submissions
    if rules is None:
        raise UsageError(f"{config_path} has no submissions: section")
    now = dt.datetime.now(dt.UTC)
    if now <= rules.deadline and not args.force:
        raise UsageError(
            f"the deadline ({rules.deadline.isoformat()}) has not passed: what counts may still change "
            "(--force freezes now)"
        )
    contest = contest_dir_of(config, Path(args.contest_dir) if args.contest_dir else None)
    store = SubmissionStore(contest.store)
    try:
        chosen: list[dict[str, Any]] = []
        missing: list[str] = []
        for team in sorted(store.teams(), key=lambda t: t.created):
            if team.revoked is not None:
                continue
            sub = counting(store.submissions(team.name), rules.counts)
            if sub is None or sub.entry_digest is None:
                missing.append(team.name)
                continue
            chosen.append(
                {
                    "team": team.name,
                    "version": sub.version,
                    "state": sub.state,
                    "received": sub.received,
                    "upload_sha256": sub.upload_digest,
                    "entry_digest": sub.entry_digest,
                    "path": str(contest.entry(sub.entry_digest)),
                }
            )
    finally:
        store.close()
    if len(chosen) < 2:
        raise UsageError(f"{len(chosen)} team(s) have a counting submission: a run needs at least two")
    raw = yaml.safe_load(config_path.read_text())
    raw["entries"] = [{"path": c["path"]} for c in chosen]
    # the run plays the frozen entries; the submission rules (and their house entry) stay the contest's
    raw.pop("submissions", None)
    stem = config_path.name.removesuffix(".yaml")
    out = config_path.with_name(f"{stem}.frozen.yaml")
    record = config_path.with_name(f"{stem}.frozen.json")
    header = (
        f"# Written by tourney freeze {config_path.name} at {now.isoformat(timespec='seconds')}: "
        f"each team's counting submission ({rules.counts}); {record.name} names them.\n"
    )
    out.write_text(header + yaml.safe_dump(raw, sort_keys=False))
    record.write_text(
        json.dumps({"frozen": now.isoformat(), "counts": rules.counts, "entries": chosen}, indent=2)
    )
    load_config(out)  # the frozen config must load as any other (ConfigError: exit 2)
    for c in chosen:
        print(f"{c['team']:24} v{c['version']} ({c['state']})  {c['entry_digest'][:16]}")
    if missing:
        print(f"no counting submission: {', '.join(missing)}")
    print(f"frozen: {out} ({record.name}); run it with: tourney run {out}")
    return 0
