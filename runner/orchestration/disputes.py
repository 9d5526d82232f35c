"""Accepting a reviewed rerun candidate (``tourney accept``): what changes, in which order.

``accept_candidate`` makes exactly the stored candidate official (nothing is
played), then replans the tournament with the same pure ``advance`` the
coordinator uses and syncs the store: matches no longer wanted become
``obsolete`` (voided), new ones ``pending``; ``tourney run`` plays them.

Changed code. A candidate played with ``rerun --allow-changed-code`` records
the digests it ran. Accepting it needs an explicit choice:

* ``adopt``: later matches use the new code. The run's record of its entries
  (``resolved.json``, the store meta's digests) moves to the new digests, for
  every entry built from the same directory (variants are one program); the
  previous ``resolved.json`` is kept as ``resolved.<time>.json`` and the change
  is kept with the acceptance (``code_changes``). Matches not played yet are
  stored again with the new code. The resume guard then accepts the run with
  the new code in the entries tree: a match played before the adoption
  differs from its plan only by adopted digests (``explained_by_adoption``).
* ``keep``: later matches use the code the run recorded; only this match's
  official result was played with the new code (its candidate says so).
  ``tourney run`` resumes once the entry's directory holds the recorded code
  again (the resume guard refuses changed code, as for any run).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, replace
from pathlib import Path

from runner.domain.disputes import Acceptance, Candidate, CodeChoice
from runner.domain.entries import EntrySpec
from runner.domain.match_record import MatchRecord
from runner.domain.stages.base import TournamentState
from runner.domain.stages.tournament import advance, match_spec
from runner.errors import UsageError
from runner.storage.artifacts import pack_artifact
from runner.storage.disputes import CandidateRefused, Disputes, code_meta
from runner.storage.resolved import RESOLVED_FILE, ResolvedRun, read_resolved
from runner.storage.run_dir import RunDir, live_run_config, load_run_config
from runner.storage.store import PlanSync, RunStore


class AcceptRefused(UsageError, RuntimeError):
    """The candidate cannot be accepted as asked (unknown, already official, no code choice...)."""


@dataclass(frozen=True)
class AcceptOutcome:
    acceptance: Acceptance
    candidate: Candidate
    before: TournamentState
    after: TournamentState
    sync: PlanSync
    pending: list[str]
    adopted: dict[str, tuple[str, str]]  # entry -> (old digest, new digest); empty unless adopted
    respecified: list[str]  # matches not played yet, stored again with the adopted code


def choose_candidate(disputes: Disputes, row: MatchRecord, number: int) -> Candidate:
    cand = disputes.candidate(row.match_id, number)
    if cand is None:
        known = [c.number for c in disputes.candidates(row.match_id)]
        have = ", ".join(map(str, known)) if known else "none: play one with `tourney rerun`"
        raise AcceptRefused(f"match {row.match_id} has no candidate {number} (candidates: {have})")
    return cand


def check_code_choice(cand: Candidate, choice: CodeChoice) -> None:
    """Changed code needs an explicit choice; unchanged code takes none."""
    if cand.changed_code and not choice:
        names = ", ".join(sorted(cand.changed_code))
        raise AcceptRefused(
            f"candidate {cand.number} was played with changed code ({names}): say whether later "
            "matches use it, --adopt-code, or keep the recorded code, --keep-code"
        )
    if choice and not cand.changed_code:
        raise AcceptRefused(
            f"candidate {cand.number} ran the recorded code: --{choice}-code has nothing to decide"
        )


def accept_candidate(
    rd: RunDir,
    store: RunStore,
    row: MatchRecord,
    number: int,
    *,
    by: str,
    reason: str,
    choice: CodeChoice,
) -> AcceptOutcome:
    """Make candidate ``number`` of ``row`` official as stored, adopt its code if asked, replan."""
    if not reason.strip():
        raise AcceptRefused('say why: --reason "..." (it is kept with the result)')
    disputes = Disputes(store)
    cand = choose_candidate(disputes, row, number)
    check_code_choice(cand, choice)
    official = [
        r for r in disputes.kept_results([row.match_id]).get(row.match_id, ()) if r.status == "official"
    ]
    if official and official[-1].attempt == cand.attempt:
        raise AcceptRefused(f"candidate {number} is already the official result of {row.match_id}")
    config = load_run_config(rd.path)
    before = advance(config, store.official_results())
    adopted: dict[str, tuple[str, str]] = {}
    if choice == "adopt":
        adopted = adopt_code(rd, store, cand)
        config = load_run_config(rd.path)
    try:
        acceptance = disputes.accept(
            row.match_id,
            number,
            by=by,
            reason=reason.strip(),
            code_choice=choice,
            code_changes=adopted or dict(cand.changed_code),
        )
    except CandidateRefused as e:
        raise AcceptRefused(str(e)) from e
    after = advance(config, store.official_results())
    planned = [match_spec(config, pm) for pm in after.matches]
    sync = store.sync_plan(planned)
    respecified = disputes.respec_unplayed(planned) if adopted else []
    disputes.record_replan(acceptance, sync.obsolete, [*sync.new, *sync.revived])
    acceptance = replace(acceptance, voided=tuple(sync.obsolete), planned=(*sync.new, *sync.revived))
    if store.pending() or not after.finished:
        store.set_meta(finished=None)
    else:  # finished without another match: the ranking the run records is the new one
        store.set_meta(final_ranking=list(after.final_ranking))
    return AcceptOutcome(acceptance, cand, before, after, sync, store.pending(), adopted, respecified)


def adopt_code(rd: RunDir, store: RunStore, cand: Candidate) -> dict[str, tuple[str, str]]:
    """Move the run's record of its entries to the code the candidate was played with, for every
    entry (and seed opponent) built from the same directory. Refused when that directory no
    longer holds the code the candidate ran."""
    resolved = read_resolved(rd.path)
    if resolved is None:
        raise AcceptRefused(
            f"{rd.path} has no {RESOLVED_FILE} (a run from an older tourney): cannot adopt code"
        )
    live = live_run_config(rd.path)
    live_specs = {**live.entry_specs(), **live.seed_opponent_specs()}
    recorded = {**resolved.entries, **resolved.seed_opponents}
    paths: set[Path] = set()
    for name, (_old, played) in cand.changed_code.items():
        base = name.split("~")[0]  # a system-test mirror is its entrant's program
        now = live_specs.get(base)
        if now is None or base not in recorded:
            raise AcceptRefused(f"entry {base!r} is not in the run's config any more: cannot adopt its code")
        if now.digest != played:
            raise AcceptRefused(
                f"entry {base!r} changed again since candidate {cand.number} was played "
                f"(played {played[:12]}, now {now.digest[:12]}): rerun it with the code to adopt"
            )
        paths.add(recorded[base].path)
    changes: dict[str, tuple[str, str]] = {}
    replaced: dict[str, EntrySpec] = {}
    for name, spec in recorded.items():
        if spec.path in paths and name in live_specs and live_specs[name].digest != spec.digest:
            replaced[name] = live_specs[name]
            changes[name] = (spec.digest, live_specs[name].digest)
    for name, pair in cand.changed_code.items():
        changes.setdefault(name, pair)
    caps = live.limits.entry_caps()
    for spec in replaced.values():
        packed = pack_artifact(rd.artifacts, spec.name, spec.path, spec.digest, caps)
        if packed.refused:
            raise UsageError(packed.refused)
    new = ResolvedRun(
        {n: replaced.get(n, s) for n, s in resolved.entries.items()},
        {n: replaced.get(n, s) for n, s in resolved.seed_opponents.items()},
        dict(resolved.boards),
    )
    current = rd.resolved
    backup = rd.path / f"resolved.{time.time():.0f}.json"
    backup.write_bytes(current.read_bytes())
    tmp = current.with_name(current.name + ".tmp")
    tmp.write_text(json.dumps(new.to_dict(), indent=1) + "\n", encoding="utf-8")
    tmp.replace(current)
    store.set_meta(**code_meta(store.meta(), {n: s.digest for n, s in replaced.items()}))
    return changes


__all__ = ["AcceptOutcome", "AcceptRefused", "accept_candidate", "adopt_code", "check_code_choice"]
