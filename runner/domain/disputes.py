"""Disputed matches as values: rerun candidates, acceptances, and how a result became official.

A dispute (docs/disputes.md) has two steps, kept apart on purpose so that what is
accepted is exactly what was reviewed:

1. ``tourney rerun RUN MATCH`` plays the match again and keeps the result as
   *candidate N* of that match (``Candidate``: its attempt, the worker that
   played it, when, who asked, the entry digests it was played with, the whole
   result). Nothing becomes official.
2. ``tourney accept RUN MATCH N --reason ...`` makes that stored candidate
   official without playing anything (``Acceptance``: who, when, why, which
   result it replaced, the code choice, what the replan voided and planned).

Every result the store keeps (``KeptResult``) and these two lists are a
``DisputeLog``; ``history`` derives from them how each official result
became official, and which results it superseded. ``compare`` and
``explain_difference`` say where a rerun departs from the official result and
what can cause that. Everything here is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from runner.domain.match_values import EntryRef, GameRecord, MatchResult, MatchSpec, VerdictKind

#: what an acceptance says about later matches when its candidate ran changed code
CodeChoice = Literal["", "adopt", "keep"]
#: a move that took at least this share of its wall limit is taken as thinking to a clock budget
CLOCK_BUDGET_SHARE = 0.5


@dataclass(frozen=True)
class Candidate:
    """One rerun of a match, kept as it was played (``number`` counts per match from 1)."""

    match_id: str
    number: int
    attempt: int
    worker: str
    played_at: float
    played_by: str
    digests: dict[str, str]  # entry -> the digest it was played with
    changed_code: dict[str, tuple[str, str]]  # entry -> (recorded digest, digest played) where they differ
    result: MatchResult
    first_difference: str  # against the official result when it was played; "" when identical

    def to_dict(self) -> dict[str, Any]:
        return {
            "match_id": self.match_id,
            "number": self.number,
            "attempt": self.attempt,
            "worker": self.worker,
            "played_at": self.played_at,
            "played_by": self.played_by,
            "digests": dict(self.digests),
            "changed_code": {k: list(v) for k, v in self.changed_code.items()},
            "first_difference": self.first_difference,
        }


@dataclass(frozen=True)
class Acceptance:
    """A candidate made official by a person (``tourney accept``)."""

    match_id: str
    candidate: int
    attempt: int
    by: str
    at: float
    reason: str
    replaced_attempt: int | None  # the official result it replaced (None: there was none)
    code_choice: CodeChoice = ""
    code_changes: dict[str, tuple[str, str]] = field(default_factory=dict)  # entry -> (old, new)
    voided: tuple[str, ...] = ()  # matches the replan no longer wanted
    planned: tuple[str, ...] = ()  # matches the replan added (new or planned again)
    id: int = 0  # its row in the store

    def to_dict(self) -> dict[str, Any]:
        return {
            "match_id": self.match_id,
            "candidate": self.candidate,
            "attempt": self.attempt,
            "by": self.by,
            "at": self.at,
            "reason": self.reason,
            "replaced_attempt": self.replaced_attempt,
            "code_choice": self.code_choice,
            "code_changes": {k: list(v) for k, v in self.code_changes.items()},
            "voided": list(self.voided),
            "planned": list(self.planned),
        }


@dataclass(frozen=True)
class KeptResult:
    """A result row of the store: which attempt, its status now, who sent it, when."""

    match_id: str
    attempt: int
    status: str  # official | superseded | candidate | rejected
    worker: str
    received_at: float
    accepted_at: float | None
    result: MatchResult


@dataclass(frozen=True)
class DisputeLog:
    """Everything a run knows about its disputes (empty for a run without any)."""

    candidates: tuple[Candidate, ...] = ()
    acceptances: tuple[Acceptance, ...] = ()
    results: Mapping[str, tuple[KeptResult, ...]] = field(default_factory=dict)  # official + superseded

    def for_match(self, match_id: str) -> tuple[list[Candidate], list[Acceptance]]:
        return (
            [c for c in self.candidates if c.match_id == match_id],
            [a for a in self.acceptances if a.match_id == match_id],
        )

    def disputed(self, match_id: str) -> bool:
        return any(c.match_id == match_id for c in self.candidates)

    def origin(self, match_id: str, attempt: int) -> dict[str, Any]:
        """How the result of ``attempt`` became official: played, or accepted (the last acceptance
        of that attempt: by whom, when, why, replacing which)."""
        kept = {r.attempt: r for r in self.results.get(match_id, ())}
        row = kept.get(attempt)
        accepted = [a for a in self.acceptances if a.match_id == match_id and a.attempt == attempt]
        if not accepted:
            return {
                "how": "played",
                "attempt": attempt,
                "worker": row.worker if row else "",
                "at": row.received_at if row else None,
            }
        a = accepted[-1]
        cand = next((c for c in self.candidates if c.match_id == match_id and c.number == a.candidate), None)
        return {
            "how": "accepted",
            "attempt": attempt,
            "candidate": a.candidate,
            "worker": cand.worker if cand else (row.worker if row else ""),
            "played_at": cand.played_at if cand else None,
            "digests": dict(cand.digests) if cand else {},
            "by": a.by,
            "at": a.at,
            "reason": a.reason,
            "replaces_attempt": a.replaced_attempt,
            "code_choice": a.code_choice,
        }

    def history(self, match_id: str) -> list[dict[str, Any]]:
        """The match's dispute events in time order: reruns kept, acceptances."""
        cands, accs = self.for_match(match_id)
        events: list[tuple[float, dict[str, Any]]] = [
            (
                c.played_at,
                {
                    "event": "rerun",
                    "candidate": c.number,
                    "attempt": c.attempt,
                    "by": c.played_by,
                    "at": c.played_at,
                    "worker": c.worker,
                    "first_difference": c.first_difference or "identical move for move",
                    "changed_code": sorted(c.changed_code),
                },
            )
            for c in cands
        ]
        events += [
            (
                a.at,
                {
                    "event": "accept",
                    "candidate": a.candidate,
                    "attempt": a.attempt,
                    "by": a.by,
                    "at": a.at,
                    "reason": a.reason,
                    "replaced_attempt": a.replaced_attempt,
                    "code_choice": a.code_choice,
                    "voided": list(a.voided),
                    "planned": list(a.planned),
                },
            )
            for a in accs
        ]
        return [e for _, e in sorted(events, key=lambda te: te[0])]

    def superseded(self, match_id: str) -> list[KeptResult]:
        return [r for r in self.results.get(match_id, ()) if r.status == "superseded"]


# -- comparing a rerun with the official result -----------------------------------------
@dataclass(frozen=True)
class Divergence:
    """The first place two results of one match part: a move (same history before it), or,
    with every move the same, the game's ending."""

    game: int  # 1-based
    move: int | None  # 1-based; None: same moves, different ending
    player: str | None  # whose move differed (the player to move there, in either result)
    old: str
    new: str

    def text(self) -> str:
        if self.move is None:
            return f"game {self.game}: same moves, different ending: old {self.old} vs new {self.new}"
        return f"game {self.game}, move {self.move}: old {self.old} vs new {self.new}"


def _move_text(g: GameRecord, n: int) -> str:
    return f"{g.moves[n].move} ({g.moves[n].player})" if n < len(g.moves) else f"(game over: {_ending(g)})"


def first_divergence(old: MatchResult, new: MatchResult) -> Divergence | None:
    """Where ``new`` first departs from ``old``; None when identical move for move and in every
    game's winner, scores and verdict."""
    for k in range(max(len(old.games), len(new.games))):
        if k >= len(old.games) or k >= len(new.games):
            old_has, new_has = k < len(old.games), k < len(new.games)
            return Divergence(
                k + 1, None, None, "a game" if old_has else "(no game)", "a game" if new_has else "(no game)"
            )
        og, ng = old.games[k], new.games[k]
        for n in range(max(len(og.moves), len(ng.moves))):
            a = (og.moves[n].move, og.moves[n].player) if n < len(og.moves) else None
            b = (ng.moves[n].move, ng.moves[n].player) if n < len(ng.moves) else None
            if a != b:
                player = (a or b or (None, None))[1]
                return Divergence(k + 1, n + 1, player, _move_text(og, n), _move_text(ng, n))
        if (og.winner, og.scores, og.verdict.kind) != (ng.winner, ng.scores, ng.verdict.kind):
            return Divergence(k + 1, None, og.verdict.player or ng.verdict.player, _ending(og), _ending(ng))
    return None


def _ending(g: GameRecord) -> str:
    return f"{g.verdict.label()}, winner {g.winner or 'none'}"


def code_changes(recorded: Mapping[str, EntryRef], played: Mapping[str, str]) -> dict[str, tuple[str, str]]:
    """Entries whose digest played differs from the one recorded for the match."""
    return {
        name: (ref.digest, played[name])
        for name, ref in recorded.items()
        if name in played and played[name] != ref.digest
    }


def explain_difference(
    spec: MatchSpec, old: MatchResult, new: MatchResult, changed: Mapping[str, tuple[str, str]]
) -> list[str]:
    """Why a rerun may differ, as honestly as the records allow.

    The runner cannot see inside an entry, so it says what the records prove:
    changed code is named; with the same code, board, seat orders and seed, the
    player whose move departs first answered the *same position* differently,
    so that program is not deterministic (it reads the clock, thinks to a time
    budget, or reads a random source the seed does not drive); moves that used
    a large share of the wall limit point at a clock budget; an ending that
    differs after the same moves (timeout, cpu_limit) depends on machine load.
    """
    d = first_divergence(old, new)
    if d is None:
        return ["identical move for move: same moves, winners, scores and verdicts in every game"]
    lines = []
    if changed:
        lines.append(
            "entry code changed: "
            + ", ".join(f"{n} {a[:12]} -> {b[:12]}" for n, (a, b) in sorted(changed.items()))
            + " (the difference may come from the code)"
        )
    if d.move is not None and d.player:
        if d.player in changed:
            lines.append(f"the first different move is {d.player}'s, whose code changed")
        else:
            lines.append(
                f"the first different move is {d.player}'s, from the same position with the same code, "
                f"board, seats and seed {spec.seed}: {d.player} is not deterministic (clock, time "
                "budget, or a random source the seed does not drive)"
            )
    elif d.move is None:
        kinds = {g.verdict.kind for r in (old, new) if d.game <= len(r.games) for g in [r.games[d.game - 1]]}
        timed = kinds & {VerdictKind.TIMEOUT, VerdictKind.CPU_LIMIT}
        if timed:
            lines.append("same moves, a time verdict differs: time limits depend on the machine's load")
    clocky = clock_users(spec, (old, new))
    if clocky:
        lines.append(
            "moves that used at least half of the move time limit (thinking to a clock budget?): "
            + ", ".join(f"{n} up to {p:.0%}" for n, p in sorted(clocky.items()))
        )
    return lines


def clock_users(spec: MatchSpec, results: Sequence[MatchResult]) -> dict[str, float]:
    """Entries whose longest move (wall or CPU) took ``CLOCK_BUDGET_SHARE`` of the wall limit or more."""
    limit_ms = spec.limits.move_wall_s * 1000.0
    if limit_ms <= 0:
        return {}
    worst: dict[str, float] = {}
    for r in results:
        for g in r.games:
            for m in g.moves:
                used = max(m.wall_ms, m.cpu_ms or 0.0) / limit_ms
                worst[m.player] = max(worst.get(m.player, 0.0), used)
    return {n: s for n, s in worst.items() if s >= CLOCK_BUDGET_SHARE}


# -- the resume guard after an adopted code change -------------------------------------
def adoption_chains(acceptances: Sequence[Acceptance]) -> dict[str, set[tuple[str, str]]]:
    """Per entry, every (old digest, new digest) an acceptance adopted."""
    out: dict[str, set[tuple[str, str]]] = {}
    for a in acceptances:
        if a.code_choice == "adopt":
            for name, pair in a.code_changes.items():
                out.setdefault(name, set()).add(pair)
    return out


def explained_by_adoption(
    stored: Mapping[str, Any], planned: Mapping[str, Any], chains: Mapping[str, set[tuple[str, str]]]
) -> bool:
    """Whether a stored match's entries (``MatchSpec.to_dict()['entries']``) differ from how it is
    planned now only by code the run adopted: every differing entry's stored digest leads to its
    planned digest through the adopted changes. The match was played (or planned) before the
    adoption; it keeps the result of the code it was played with."""
    if set(stored) != set(planned):
        return False
    for name in stored:
        if stored[name] == planned[name]:
            continue
        old, new = str(stored[name].get("digest")), str(planned[name].get("digest"))
        edges = chains.get(name, set()) | chains.get(name.split("~")[0], set())  # a mirror is its entrant
        if not _reaches(old, new, edges):
            return False
    return True


def _reaches(start: str, goal: str, edges: set[tuple[str, str]]) -> bool:
    seen, todo = {start}, [start]
    while todo:
        here = todo.pop()
        if here == goal:
            return True
        for a, b in edges:
            if a == here and b not in seen:
                seen.add(b)
                todo.append(b)
    return False


__all__ = [
    "Acceptance",
    "Candidate",
    "CodeChoice",
    "DisputeLog",
    "Divergence",
    "KeptResult",
    "adoption_chains",
    "clock_users",
    "code_changes",
    "explain_difference",
    "explained_by_adoption",
    "first_divergence",
]
