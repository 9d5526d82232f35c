"""``tourney rerun RUN_DIR MATCH_ID [--accept]``: replay a disputed match and show what changed.

What is replayed and when a rerun is refused: ``runner.orchestration.rerun``.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from runner.config import ConfigError
from runner.domain.contracts import GameRecord, MatchResult
from runner.domain.entries import pack_entry
from runner.domain.match_record import find_match
from runner.domain.stages.base import TournamentState
from runner.domain.stages.tournament import advance, match_spec
from runner.errors import CommandError, UsageError
from runner.orchestration.dispatch import probe_sandbox
from runner.orchestration.rerun import RerunRefused, changed_entries, play_again
from runner.storage.run_dir import ResumeRefused, RunDir, coordinator_lock, live_run_config, load_run_config
from runner.storage.store import RunStore, StoreError


# -- showing ---------------------------------------------------------------------------
def _game_cell(g: GameRecord | None) -> str:
    if g is None:
        return "-"
    scores = " ".join(f"{k}:{v}" for k, v in sorted(g.scores.items()))
    verdict = g.verdict.kind.value + (f" ({g.verdict.player})" if g.verdict.player else "")
    return f"{g.winner or 'draw'}\n{scores}\n{verdict}, {len(g.moves)} moves"


def first_difference(old: MatchResult, new: MatchResult) -> str | None:
    """``game k, move n: old X vs new Y`` for the first differing move, or None if identical."""
    for k in range(max(len(old.games), len(new.games))):
        if k >= len(old.games) or k >= len(new.games):
            return f"game {k + 1}: only the {'new' if k >= len(old.games) else 'old'} result has it"
        a, b = old.games[k].moves, new.games[k].moves
        for n in range(max(len(a), len(b))):
            ma = f"{a[n].move} ({a[n].player})" if n < len(a) else "(game over)"
            mb = f"{b[n].move} ({b[n].player})" if n < len(b) else "(game over)"
            if n >= len(a) or n >= len(b) or (a[n].move, a[n].player) != (b[n].move, b[n].player):
                return f"game {k + 1}, move {n + 1}: old {ma} vs new {mb}"
        og, ng = old.games[k], new.games[k]
        if (og.winner, og.scores, og.verdict.kind) != (ng.winner, ng.scores, ng.verdict.kind):
            old_end, new_end = og.verdict.kind.value, ng.verdict.kind.value
            return f"game {k + 1}: same moves, different ending: old {old_end} vs new {new_end}"
    return None


def show_comparison(console: Console, match_id: str, old: MatchResult, new: MatchResult) -> None:
    t = Table(title=f"match {match_id}: old (official) vs new (rerun)", show_lines=True)
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
    console = Console()
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
            path = rd.artifacts / f"{ref.digest}.tar.gz"
            if not path.exists():
                path.write_bytes(pack_entry(config.resolve_player(name).path))
        spec = replace(spec, entries=entries)
        console.print(f"replaying with changed code: {', '.join(changed)}")
    if args.sandbox:
        spec = replace(spec, sandbox=args.sandbox)
    if spec.sandbox == "none":
        console.print("sandbox: none — entries run unisolated; only for trusted entries")
    if spec.sandbox != "none":
        probe_sandbox(spec.sandbox)  # SandboxUnavailable: exit 2
    console.print(
        f"replaying match {row.match_id} ({row.stage} r{row.round}: {' v '.join(row.players)}, "
        f"board {row.board_id}, seed {spec.seed})"
    )
    new = play_again(spec, rd)
    if new.system_error is not None:
        raise CommandError(f"the replay failed on this machine: {new.system_error.detail}", exit_code=1)
    attempt = store.add_candidate(row.match_id, new)
    show_comparison(console, row.match_id, row.result, new)
    console.print(f"kept both: the new result is candidate attempt {attempt}")
    if not args.accept:
        console.print(f"to make it official: tourney rerun {rd.path} {row.match_id} --accept")
        _refresh_report(rd)
        return 0
    before = advance(config, store.official_results())
    store.accept_candidate(row.match_id, attempt)
    after = advance(config, store.official_results())
    sync = store.sync_plan([match_spec(config, pm) for pm in after.matches])
    pending = store.pending()
    show_replan(console, before, after, sync.new + sync.revived, sync.obsolete)
    console.print(f"accepted: attempt {attempt} is official, the old result is kept as superseded")
    if pending or not after.finished:
        store.set_meta(finished=None)
        config_path = store.meta().get("config_path", "CONFIG")
        console.print(f"{len(pending)} match(es) to play: tourney run {config_path} --run-dir {rd.path}")
    _refresh_report(rd)
    return 0


def _refresh_report(rd: RunDir) -> None:
    from runner.report.html import write_report

    try:
        write_report(rd.path, rd.report)
    except Exception as e:  # the rerun itself succeeded; say why the page is stale
        print(f"tourney rerun: could not refresh {rd.report}: {e}", file=sys.stderr)
