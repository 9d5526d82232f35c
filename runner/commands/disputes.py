"""``tourney accept RUN MATCH CANDIDATE --reason ...`` and ``tourney disputes RUN``.

``accept`` makes exactly a stored rerun candidate official (nothing is
played; ``runner.orchestration.disputes``), replans, lists what changed and
says how to finish the run. ``disputes`` lists every rerun candidate and every
acceptance of a run, with who, when, why and what each replaced.
"""

from __future__ import annotations

import argparse
import json
from datetime import UTC, datetime
from pathlib import Path

from runner.commands.rerun import _refresh_report, show_comparison, show_replan, who
from runner.config import ConfigError
from runner.domain.disputes import CodeChoice, DisputeLog
from runner.domain.match_record import find_match
from runner.errors import UsageError
from runner.orchestration.disputes import accept_candidate
from runner.report.terminal import StdoutConsole
from runner.storage.disputes import Disputes
from runner.storage.run_dir import ResumeRefused, RunDir, coordinator_lock
from runner.storage.store import RunStore, StoreError


def _open(run_dir: str) -> tuple[RunDir, RunStore]:
    rd = RunDir(Path(run_dir))
    try:
        return rd, RunStore.open(rd.path)
    except StoreError as e:
        raise UsageError(str(e)) from e


def when(ts: float | None) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d %H:%M:%S UTC") if ts else "-"


# -- accept -----------------------------------------------------------------------------
def cmd_accept(args: argparse.Namespace) -> int:
    if args.adopt_code and args.keep_code:
        raise UsageError("--adopt-code and --keep-code exclude each other")
    choice: CodeChoice = "adopt" if args.adopt_code else "keep" if args.keep_code else ""
    console = StdoutConsole(soft_wrap=True, markup=False, highlight=False)  # whole lines: ids, paths, reasons
    rd, store = _open(args.run_dir)
    try:
        with coordinator_lock(rd):
            row = find_match(store.match_records(), args.match_id)  # UnknownMatch: exit 2
            out = accept_candidate(
                rd, store, row, args.candidate, by=who(args), reason=args.reason, choice=choice
            )
    except ResumeRefused as e:
        raise UsageError(f"{e}; wait for it to finish") from e
    except ConfigError as e:
        raise UsageError(str(e)) from e
    finally:
        store.close()
    a, cand = out.acceptance, out.candidate
    if row.result is not None:
        show_comparison(console, row.match_id, row.result, cand.result, f"candidate {cand.number} (accepted)")
    replaced = f"attempt {a.replaced_attempt}" if a.replaced_attempt is not None else "no result"
    console.print(
        f"accepted: candidate {cand.number} (attempt {a.attempt}, played {when(cand.played_at)} on "
        f"{cand.worker}) is the official result of {row.match_id}, replacing {replaced} "
        f"(kept as superseded); by {a.by}: {a.reason}"
    )
    if out.adopted:
        console.print(
            "adopted code, later matches play it: "
            + ", ".join(f"{n} {o[:12]} -> {w[:12]}" for n, (o, w) in sorted(out.adopted.items()))
        )
        if out.respecified:
            console.print(f"  {len(out.respecified)} unplayed match(es) now play the adopted code")
    elif a.code_choice == "keep":
        names = ", ".join(sorted(cand.changed_code))
        console.print(
            f"kept the recorded code for later matches ({names}): this match alone was played with "
            "the new code; `tourney run` needs the entry directories back at their recorded digests"
        )
    show_replan(console, out.before, out.after, [*out.sync.new, *out.sync.revived], out.sync.obsolete)
    if out.sync.kept:
        console.print(
            "  kept, planned again exactly as played (same spec and code: the same match, its result "
            f"stands): {', '.join(out.sync.kept)}"
        )
    if out.sync.replayed:
        console.print(
            "  to replay, planned again with other code than they were played with (their result is "
            f"superseded): {', '.join(out.sync.replayed)}"
        )
    if out.sync.obsolete:
        console.print(
            "  a voided match planned again later keeps its result only if its spec and code are "
            "unchanged, else it is replayed; `tourney disputes` says which"
        )
    if out.pending or not out.after.finished:
        with RunStore.open(rd.path) as s:
            config_path = s.meta().get("config_path", "CONFIG")
        console.print(f"{len(out.pending)} match(es) to play: tourney run {config_path} --run-dir {rd.path}")
    else:
        console.print("nothing left to play: the run is finished with this result")
    _refresh_report(rd)
    return 0


# -- disputes ---------------------------------------------------------------------------
def disputes_document(log: DisputeLog, fates: dict[str, str] | None = None) -> dict[str, object]:
    """``fates``: what became of each voided match since (``Disputes.voided_fates``)."""
    fates = fates or {}
    return {
        "candidates": [
            {**c.to_dict(), "status": _status(log, c.match_id, c.attempt)} for c in log.candidates
        ],
        "acceptances": [
            {**a.to_dict(), "voided_now": {m: fates.get(m, "voided") for m in a.voided}}
            for a in log.acceptances
        ],
    }


def voided_text(voided: tuple[str, ...], fates: dict[str, str]) -> str:
    """An acceptance's voided matches by what became of them: a match planned again with the
    spec and code it was played with is the same match (kept), not a voided one."""
    if not voided:
        return "voided none"
    groups: dict[str, list[str]] = {}
    for m in voided:
        groups.setdefault(fates.get(m, "voided"), []).append(m)
    words = {
        "voided": "voided",
        "kept": "kept (planned again, same spec and code: result stands)",
        "replayed": "replayed (planned again with adopted code)",
        "planned again": "planned again (not played before)",
    }
    return "; ".join(f"{words.get(k, k)} {', '.join(ids)}" for k, ids in groups.items())


def _status(log: DisputeLog, match_id: str, attempt: int) -> str:
    """official | superseded (was official, replaced since) | open (never accepted)."""
    for r in log.results.get(match_id, ()):
        if r.attempt == attempt:
            return r.status
    return "open"


def cmd_disputes(args: argparse.Namespace) -> int:
    _, store = _open(args.run_dir)
    try:
        disputes = Disputes(store)
        log = disputes.log()
        fates = disputes.voided_fates([m for a in log.acceptances for m in a.voided])
    finally:
        store.close()
    if args.json:
        print(json.dumps(disputes_document(log, fates), indent=2))
        return 0
    # plain lines, one per rerun and per accept: whole reasons and ids, for grep and for the record
    if not log.candidates:
        print("no disputes: no match of this run was rerun")
        return 0
    for c in log.candidates:
        code = ", ".join(f"{n} {a[:12]} -> {b[:12]}" for n, (a, b) in sorted(c.changed_code.items()))
        print(
            f"rerun  {c.match_id} candidate {c.number} (attempt {c.attempt}): {when(c.played_at)} by "
            f"{c.played_by} on {c.worker}; code: {code or 'as recorded'}; vs the official result then: "
            f"{c.first_difference or 'identical move for move'}; now {_status(log, c.match_id, c.attempt)}"
        )
    for a in log.acceptances:
        replaced = f"attempt {a.replaced_attempt}" if a.replaced_attempt is not None else "no result"
        code = ""
        if a.code_choice:
            pairs = ", ".join(f"{n} {o[:12]} -> {w[:12]}" for n, (o, w) in sorted(a.code_changes.items()))
            code = f"; code {'adopted' if a.code_choice == 'adopt' else 'kept as recorded'} ({pairs})"
        print(
            f"accept {a.match_id} candidate {a.candidate} (attempt {a.attempt}): {when(a.at)} by {a.by}: "
            f"{a.reason}; replaced {replaced}{code}; {voided_text(a.voided, fates)}; "
            f"planned {', '.join(a.planned) or 'none'}"
        )
    if not log.acceptances:
        print("no candidate accepted")
    return 0
