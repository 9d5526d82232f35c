"""``tourney fleet add|list|revoke|unquarantine``: the organiser's enrolled workers (docs/fleet.md).

``add NAME`` makes a worker key pair, records its public half in the registry and
writes the worker key file (its private half and the organiser's public key,
0600) to hand to that machine alone; ``list`` shows every enrolled worker with
its key, enrolment time and whether (and why) it is revoked; ``revoke NAME
--reason ...`` refuses that key from now on (a running coordinator reads the
registry again within a second).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from runner.domain.fleet import Fleet, organiser_key
from runner.errors import UsageError


def cmd_fleet(args: argparse.Namespace) -> int:
    fleet = Fleet()
    if args.fleet_command == "add":
        out = Path(args.out).expanduser() if args.out else None
        path = fleet.enrol(args.name, out)
        print(f"enrolled worker {args.name}; its key file: {path} (mode 0600)")
        print(
            f"copy it to that machine only; there: "
            f"tourney worker --broker-file URL_FILE --key-file {path.name}"
        )
        return 0
    if args.fleet_command == "revoke":
        member = fleet.revoke(args.name, args.reason)
        print(f"revoked worker {member.name} (key {member.public.key_id}): {member.reason}")
        return 0
    if args.fleet_command == "unquarantine":
        member = fleet.unquarantine(args.name)
        print(
            f"lifted the quarantine of worker {member.name} (key {member.public.key_id}) in every run "
            "of this organiser; running coordinators read it within a second, resumed ones at start"
        )
        return 0
    if args.fleet_command == "list":
        members = fleet.members()
        if args.json:
            print(
                json.dumps({n: {"key": m.public.key_id, **m.to_dict()} for n, m in members.items()}, indent=2)
            )
            return 0
        print(f"organiser key {organiser_key(fleet.home).key_id} ({fleet.home})")
        if not members:
            print("no worker enrolled: tourney fleet add NAME")
        for m in sorted(members.values(), key=lambda m: m.name):
            state = f"REVOKED: {m.reason}" if m.revoked else "active"
            if m.suspect:
                state += f"  SUSPECT: {m.suspect}"
            print(f"{m.name:24} key {m.public.key_id}  enrolled {m.enrolled}  {state}")
        return 0
    raise UsageError(f"unknown fleet command {args.fleet_command!r}")
