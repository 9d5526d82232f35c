"""``tourney rerun RUN_DIR MATCH_ID``: replay a disputed match, keep it as a numbered candidate,
show it beside the official result.

What is replayed and when a rerun is refused: ``runner.orchestration.rerun``; the
candidates and acceptances: ``runner.domain.disputes``. Making a candidate
official is ``tourney accept`` (``runner.commands.disputes``); ``show_replan``
here prints what an accept changed.
"""

from __future__ import annotations

import argparse
import getpass
import os
import socket
import sys
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from runner.config import ConfigError
from runner.domain.disputes import code_changes, explain_difference, first_divergence
from runner.domain.match_record import find_match
from runner.domain.match_values import GameRecord, MatchResult
from runner.domain.registry import UNSANDBOXED_WARNING
from runner.domain.stages.base import TournamentState
from runner.domain.verify import ResultMismatch, verify_result
from runner.errors import CommandError, InfrastructureFailure, UsageError
from runner.orchestration.rerun import RerunRefused, changed_entries, play_again
from runner.orchestration.workers_gate import probe_sandbox
from runner.report.terminal import StdoutConsole
from runner.storage.artifacts import pack_artifact
from runner.storage.disputes import Disputes
from runner.storage.run_dir import ResumeRefused, RunDir, coordinator_lock, live_run_config, load_run_config
from runner.storage.store import RunStore, StoreError


# -- showing ---------------------------------------------------------------------------
def _game_cell(g: GameRecord | None) -> str:
    if g is None:
        return "-"
    scores = " ".join(f"{k}:{v}" for k, v in sorted(g.scores.items()))
    return f"{g.winner or 'draw'}\n{scores}\n{g.verdict.label()}, {len(g.moves)} moves"


def first_difference(old: MatchResult, new: MatchResult) -> str | None:
    """``game k, move n: old X vs new Y`` for the first differing move, or None if identical."""
    d = first_divergence(old, new)
    return d.text() if d else None


def show_comparison(
    console: Console, match_id: str, old: MatchResult, new: MatchResult, new_label: str = "new (rerun)"
) -> None:
    t = Table(title=f"match {match_id}: old (official) vs {new_label}", show_lines=True)
    t.add_column("game", justify="right")
    t.add_column("seats")
    t.add_column("old: winner / scores / verdict")
    t.add_column("new: winner / scores / verdict")
    for k in range(max(len(old.games), len(new.games))):
        og = old.games[k] if k < len(old.games) else None
        ng = new.games[k] if k < len(new.games) else None
        seats = og.order if og else ng.order if ng else []
        differs = "" if og and ng and _game_cell(og) == _game_cell(ng) else " *"
        t.add_row(f"{k + 1}{differs}", " v ".join(seats), _game_cell(og), _game_cell(ng))
    console.print(t)
    diff = first_difference(old, new)
    console.print(
        f"first difference: {diff}" if diff else "identical: every game has the same moves and result"
    )


def _standings_map(state: TournamentState) -> dict[str, dict[str, tuple[int, float]]]:
    return {st.name: {r.entry: (r.rank, r.points) for r in st.standings} for st in state.stages}


def _place(row: tuple[int, float] | None) -> str:
    return f"#{row[0]} ({row[1]:g} pts)" if row else "-"


def show_replan(
    console: Console, before: TournamentState, after: TournamentState, new: list[str], obsolete: list[str]
) -> None:
    console.print(f"replanned: {len(obsolete)} match(es) obsolete, {len(new)} new match(es) to play")
    by_id = {m.match_id: m for m in [*before.matches, *after.matches]}
    for label, ids in (("obsolete", obsolete), ("new", new)):
        for mid in ids:
            m = by_id.get(mid)
            what = f"{m.stage} r{m.round} {' v '.join(m.players)}" if m else ""
            console.print(f"  {label}: {mid} {what}")
    b, a = _standings_map(before), _standings_map(after)
    for stage in dict.fromkeys([*b, *a]):
        rows_b, rows_a = b.get(stage, {}), a.get(stage, {})
        for entry in dict.fromkeys([*rows_b, *rows_a]):
            if rows_b.get(entry) != rows_a.get(entry):
                was, now = _place(rows_b.get(entry)), _place(rows_a.get(entry))
                console.print(f"  standings {stage}: {entry} {was} -> {now}")
    if before.final_ranking != after.final_ranking:
        console.print(
            f"  final ranking: {', '.join(before.final_ranking) or '(unfinished)'} -> "
            f"{', '.join(after.final_ranking) or '(unfinished)'}"
        )


# -- the command -------------------------------------------------------------------------
def cmd_rerun(args: argparse.Namespace) -> int:
    if getattr(args, "accept", False):
        raise UsageError(
            "rerun --accept is gone: it accepted a result in the same breath as playing it. "
            "rerun keeps a numbered candidate and shows it; review it, then make exactly it official "
            'with `tourney accept RUN_DIR MATCH_ID CANDIDATE --reason "..."`'
        )
    console = StdoutConsole(soft_wrap=True, markup=False, highlight=False)  # whole lines: ids, paths, reasons
    rd = RunDir(Path(args.run_dir))
    try:
        store = RunStore.open(rd.path)
    except StoreError as e:
        raise UsageError(str(e)) from e
    try:
        with coordinator_lock(rd):
            return _rerun(args, rd, store, console)  # RerunRefused, UnknownMatch: exit 2
    except ResumeRefused as e:
        raise UsageError(f"{e}; wait for it to finish") from e
    except ConfigError as e:  # the frozen config no longer loads: one prefixed message
        raise UsageError(str(e)) from e
    finally:
        store.close()


def _rerun(args: argparse.Namespace, rd: RunDir, store: RunStore, console: Console) -> int:
    row = find_match(store.match_records(), args.match_id)  # UnknownMatch: exit 2
    if row.result is None or row.spec is None:
        raise RerunRefused(
            f"match {row.match_id} has no official result yet ({row.state}); nothing to dispute"
        )
    config = load_run_config(rd.path)
    spec = row.spec
    changed, gone = changed_entries(config, spec, lambda: live_run_config(rd.path))
    if gone:
        console.print(f"entry directory gone, replaying its packed artifact: {', '.join(gone)}")
    if changed and not args.allow_changed_code:
        lines = [f"{n}: {old[:12]} -> {new.digest[:12]}" for n, (old, new) in changed.items()]
        raise RerunRefused(
            "entry code changed since the match was played (" + "; ".join(lines) + "); "
            "restore it, or pass --allow-changed-code to replay with the current code"
        )
    if changed:
        entries = dict(spec.entries)
        for name, (_, ref) in changed.items():
            entries[name] = ref
            packed = pack_artifact(
                rd.artifacts, name, config.resolve_player(name).path, ref.digest, config.limits.entry_caps()
            )
            if packed.refused:
                raise RerunRefused(packed.refused)
        spec = replace(spec, entries=entries)
        console.print(f"replaying with changed code: {', '.join(changed)}")
    if args.sandbox:
        spec = replace(spec, sandbox=args.sandbox)
    if spec.sandbox == "none":
        print(f"tourney rerun: {UNSANDBOXED_WARNING}", file=sys.stderr, flush=True)
    if spec.sandbox != "none":
        probe_sandbox(spec.sandbox)  # SandboxUnavailable: exit 3
    console.print(
        f"replaying match {row.match_id} ({row.stage} r{row.round}: {' v '.join(row.players)}, "
        f"board {row.board_id}, seed {spec.seed})"
    )
    new = play_again(spec, rd, worker=f"rerun@{socket.gethostname()}")
    if new.system_error is not None:
        raise InfrastructureFailure(f"the replay failed on this machine: {new.system_error.detail}")
    try:
        verify_result(spec, new)  # judged by the pure referee, as the coordinator judges every result
    except ResultMismatch as e:
        raise CommandError(f"the replay's result does not follow the rules: {e}", exit_code=1) from e
    played = {n: ref.digest for n, ref in spec.entries.items()}
    code = code_changes(row.spec.entries, played)
    cand = Disputes(store).add_candidate(
        spec,
        new,
        played_by=who(args),
        changed_code=code,
        first_difference=first_difference(row.result, new) or "",
    )
    show_comparison(console, row.match_id, row.result, new, f"candidate {cand.number} (rerun)")
    for line in explain_difference(spec, row.result, new, code):
        console.print(f"  {line}")
    console.print(
        f"kept as candidate {cand.number} of match {row.match_id} (attempt {cand.attempt}, "
        f"{cand.worker}); nothing became official"
    )
    choice = " --adopt-code|--keep-code" if code else ""
    console.print(
        f"to make exactly this result official: tourney accept {rd.path} {row.match_id} {cand.number}"
        f'{choice} --reason "..."'
    )
    _refresh_report(rd)
    return 0


def who(args: argparse.Namespace) -> str:
    """The person acting: ``--by``, else the login name."""
    given = getattr(args, "by", None)
    if given:
        return str(given)
    try:
        return os.environ.get("USER") or getpass.getuser()
    except (KeyError, OSError):  # no passwd entry for this uid (a container)
        return f"uid {os.getuid()}"


def _refresh_report(rd: RunDir) -> None:
    # local: jinja2 and the HTML writer load once the rerun has played, not with the command
    from runner.report.site import write_report

    try:
        write_report(rd.path, rd.report)
    except Exception as e:  # the rerun itself succeeded; say why the page is stale
        print(f"tourney rerun: could not refresh {rd.report}: {e}", file=sys.stderr)
