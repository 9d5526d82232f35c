"""``tourney freeze CONFIG``: the config a run plays, with each team's counting submission.

Reads the contest's store (``tourney serve``'s) and writes beside the config
``<name>.frozen.yaml``: the same config whose ``entries`` are each team's counting version
(``runner.submissions.freezing``), kept by digest in the contest directory
(``entries/<digest>``), each with the submission it is (team, version, upload sha256, entry
digest); and ``<name>.frozen.json``, the same list with each version's state and time.
``tourney run NAME.frozen.yaml`` then plays them; ``tourney run CONFIG`` on a config that says
``entries: {from: submissions}`` freezes first and plays the frozen config (``freeze_for_run``).
The run directory records each entry by its digest (``resolved.json``) and its report names the
submission. Before the deadline it refuses unless ``--force``: what counts may still change.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
from dataclasses import dataclass
from pathlib import Path

import yaml

from runner.config import TournamentConfig, load_config
from runner.errors import UsageError
from runner.submissions.contest_dir import contest_dir_of
from runner.submissions.freezing import Counting, counting_entries, frozen_config


@dataclass(frozen=True)
class Frozen:
    """What ``freeze`` wrote: the config the run plays, its record, and who is in it."""

    config: Path
    record: Path
    counting: Counting


def freeze(
    config_path: Path,
    config: TournamentConfig,
    *,
    contest_dir: Path | None = None,
    force: bool = False,
    how_to_force: str = "--force freezes now",
) -> Frozen:
    """Write ``NAME.frozen.yaml`` and ``NAME.frozen.json`` beside ``config_path``.

    The YAML holds nothing that changes from one freeze to the next unless what counts does
    (no time in it): freezing again after the deadline writes the same bytes, so a run of it
    resumes (its resume guard is the config's digest)."""
    rules = config.submissions
    if rules is None:
        raise UsageError(f"{config_path} has no submissions: section")
    now = dt.datetime.now(dt.UTC)
    if now <= rules.deadline and not force:
        raise UsageError(
            f"the deadline ({rules.deadline.isoformat()}) has not passed: what counts may still change "
            f"({how_to_force})"
        )
    contest = contest_dir_of(config, contest_dir)
    if not contest.store.is_file():
        raise UsageError(f"no submissions at {contest.path} (tourney serve {config_path} keeps them there)")
    got = counting_entries(contest, rules.counts)
    if len(got.entries) < 2:
        raise UsageError(
            f"{len(got.entries)} team(s) have a counting submission ({rules.counts}): "
            "a run needs at least two"
        )
    document = yaml.safe_load(config_path.read_text())
    stem = config_path.name.removesuffix(".yaml").removesuffix(".yml")
    out = config_path.with_name(f"{stem}.frozen.yaml")
    record = config_path.with_name(f"{stem}.frozen.json")
    header = (
        f"# Written by tourney freeze from {config_path.name}: each team's counting submission "
        f"({rules.counts}), from {contest.path}; {record.name} says when.\n"
    )
    text = header + yaml.safe_dump(frozen_config(document, got.entries), sort_keys=False)
    if not out.is_file() or out.read_text() != text:
        tmp = out.with_name(out.name + ".tmp")
        tmp.write_text(text)
        tmp.replace(out)
    record.write_text(
        json.dumps(
            {
                "frozen": now.isoformat(),
                "counts": rules.counts,
                "entries": [e.record() for e in got.entries],
                "missing": got.missing,
            },
            indent=2,
        )
        + "\n"
    )
    return Frozen(out, record, got)


def print_frozen(frozen: Frozen) -> None:
    for e in frozen.counting.entries:
        print(f"{e.team:24} v{e.version} ({e.state})  {e.entry_digest[:16]}")
    if frozen.counting.missing:
        print(f"no counting submission: {', '.join(frozen.counting.missing)}")


def freeze_for_run(config_path: Path, config: TournamentConfig) -> tuple[Path, TournamentConfig]:
    """``entries: {from: submissions}``: the frozen config ``tourney run`` plays instead."""
    frozen = freeze(
        config_path,
        config,
        how_to_force=f"tourney freeze {config_path} --force, then tourney run the frozen config",
    )
    print_frozen(frozen)
    print(f"playing each team's counting submission, frozen in {frozen.config} ({frozen.record.name})")
    return frozen.config, load_config(frozen.config)


def cmd_freeze(args: argparse.Namespace) -> int:
    config_path = Path(args.config)
    config = load_config(config_path)
    frozen = freeze(
        config_path,
        config,
        contest_dir=Path(args.contest_dir) if args.contest_dir else None,
        force=args.force,
    )
    load_config(frozen.config)  # the frozen config must load as any other (ConfigError: exit 2)
    print_frozen(frozen)
    print(f"frozen: {frozen.config} ({frozen.record.name}); run it with: tourney run {frozen.config}")
    return 0
