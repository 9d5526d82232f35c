"""``tourney rerun RUN_DIR MATCH_ID [--accept]``: replay a disputed match (DESIGN §6).

The replay is exactly the stored ``MatchSpec``: same board, seat orders, RNG
seed and entry digests, played in this process from the run's own packed
artifacts. The run directory is enough: the match's record and the run's
``resolved.json`` say what to play, ``artifacts/`` holds the code. Before
playing, the directory of each of the match's entries (where it was when the
run started) is hashed again; if one changed, the rerun is refused (exit 2)
unless ``--allow-changed-code`` says to play the current code instead (the new
digests are then recorded in the new result). A directory that is gone (the
entries tree moved) is no reason to refuse: the packed artifact is the code
the match was played with.

The new result is kept beside the old one as a *candidate*; old and new are
printed side by side, with the first move where they differ. ``--accept``
makes the new result official (the old one becomes *superseded*, both are
kept), replans the tournament with ``advance`` and lists what changed:
matches that are no longer planned (obsolete), new matches to play, and the
standings that moved. New matches are played by running ``tourney run`` on
the same config again (it resumes this run directory); the rerun itself
never dispatches anything else.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from rich.console import Console
from rich.table import Table

from runner.config import ConfigError, TournamentConfig
from runner.domain.contracts import EntryRef, GameRecord, MatchResult, MatchSpec
from runner.domain.entries import directory_digest, pack_entry
from runner.domain.match_record import MatchRecord, UnknownMatch
from runner.domain.match_record import find_match as find_record
from runner.domain.stages.base import TournamentState
from runner.domain.stages.tournament import advance, match_spec
from runner.errors import UsageError
from runner.storage.run_dir import ResumeRefused, RunDir, coordinator_lock, live_run_config, load_run_config
from runner.storage.store import RunStore, StoreError


class RerunRefused(UsageError, RuntimeError):
    pass


def find_match(store: RunStore, wanted: str) -> MatchRecord:
    """A match by id or unique id prefix (``runner.domain.match_record.find_match`` over the store)."""
    try:
        return find_record(store.match_records(), wanted)
    except UnknownMatch as e:
        raise RerunRefused(str(e)) from e


def changed_entries(
    recorded: TournamentConfig, spec: MatchSpec, live: Callable[[], TournamentConfig]
) -> tuple[dict[str, tuple[str, EntryRef]], list[str]]:
    """Entries whose directory no longer has the digest the match was played with:
    name -> (old digest, new ref); and the entries whose directory is gone (moved or
    deleted: the replay uses their packed artifact). Only this match's entries are
    hashed; the live config (``live``) is loaded only when some entry changed, for
    the new code's refs."""
    changed: list[str] = []
    gone: list[str] = []
    for name, ref in spec.entries.items():
        path = recorded.resolve_player(name).path
        if not path.is_dir():
            gone.append(name)
        elif directory_digest(path) != ref.digest:
            changed.append(name)
    if not changed:
        return {}, gone
    now = live()
    return {n: (spec.entries[n].digest, now.resolve_player(n).ref()) for n in changed}, gone


def replay(spec: MatchSpec, rd: RunDir, worker: str = "rerun") -> MatchResult:
    from runner.orchestration.dispatch import Finished, InlineDispatcher

    dispatcher = InlineDispatcher(rd.artifacts, rd.workers / "rerun" / "artifacts", worker=worker)
    dispatcher.submit(spec, 0)
    for note in dispatcher.poll(0):
        if isinstance(note, Finished):
            return note.result
    raise RuntimeError("the inline replay returned no result")


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
        print(f"tourney rerun: {e}", file=sys.stderr)
        return 2
    try:
        with coordinator_lock(rd):
            return _rerun(args, rd, store, console)
    except ResumeRefused as e:
        print(f"tourney rerun: {e}; wait for it to finish", file=sys.stderr)
        return 2
    except (RerunRefused, ConfigError) as e:
        print(f"tourney rerun: {e}", file=sys.stderr)
        return 2
    finally:
        store.close()


def _rerun(args: argparse.Namespace, rd: RunDir, store: RunStore, console: Console) -> int:
    row = find_match(store, args.match_id)
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
        from workers.sandbox import HostError, host_factory

        try:
            host_factory(spec.sandbox)
        except HostError as e:
            raise RerunRefused(f"sandbox {spec.sandbox} unavailable: {e}") from e
    console.print(
        f"replaying match {row.match_id} ({row.stage} r{row.round}: {' v '.join(row.players)}, "
        f"board {row.board_id}, seed {spec.seed})"
    )
    new = replay(spec, rd)
    if new.system_error is not None:
        print(f"tourney rerun: the replay failed on this machine: {new.system_error.detail}", file=sys.stderr)
        return 1
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
    try:
        from runner.report.html import write_report
    except ImportError:
        return
    try:
        write_report(rd.path, rd.report)
    except Exception as e:  # the rerun itself succeeded; say why the page is stale
        print(f"tourney rerun: could not refresh {rd.report}: {e}", file=sys.stderr)
