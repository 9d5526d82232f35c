"""Verification replays (``timing.verify_sample``, docs/fleet.md "Verification"): pure rules.

A sampled fraction of accepted matches is played a second time on another worker. Two
rules live here:

* ``sampled``: which matches, decided by the run's seed and the match id alone, so a resumed
  run (or any reader) picks exactly the same ones whatever order results came in;
* ``compare``: what the replay says of the official result. Only a match whose every
  entry is declared deterministic (``deterministic: true`` in its ``entry.yaml``: the same
  code, board, seats and seed give the same moves) can prove anything by differing; a
  game ended by a time verdict (``timeout``, ``cpu_limit``) or stopped by the wall bound
  depends on the machine's load, so such a match is recorded, not compared.

A difference alone cannot say who is at fault: either worker may have lied, or an entry of
the match declared ``deterministic: true`` falsely. ``blame`` reads every difference of the run
together and flags only what they follow (docs/fleet.md, "Verification"):

* an entry whose differences no one worker shares (they follow it across different worker
  pairs): the entry, never those workers;
* a worker whose differences, those no flagged entry explains, no one entry shares (they follow
  it across different entries): the worker (with two workers, both of the pair: the records
  cannot tell which of them lied).

Until the differences point somewhere, a difference is recorded and shown, and flags nobody.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from runner.domain.disputes import first_divergence
from runner.domain.match_values import MatchResult, VerdictKind

#: the time verdicts: they depend on the machine's load, never proof of tampering
TIME_VERDICTS = frozenset({VerdictKind.TIMEOUT, VerdictKind.CPU_LIMIT})

Outcome = Literal["agrees", "differs", "not_compared"]
#: a verification's life: sent -> running -> an outcome, ``invalid`` (the replay itself was
#: refused: other code, the referee rejected it, the verifier's machine failed) or ``given_up``
OPEN_STATES = ("sent", "running")


@dataclass(frozen=True)
class Verification:
    """One match's verification replay as the run store keeps it."""

    match_id: str
    attempt: int  # the accepted attempt replayed
    played_by: str  # the worker whose result is official
    state: str  # OPEN_STATES, an ``Outcome``, "invalid" or "given_up"
    verifier: str = ""
    detail: str = ""
    sent_at: float = 0.0

    @property
    def open(self) -> bool:
        return self.state in OPEN_STATES

    def text(self) -> str:
        """One line for ``tourney matches`` and the report."""
        if self.state == "differs":
            return f"verify: DIFFERS ({self.played_by} vs {self.verifier})"
        if self.state in OPEN_STATES:
            return f"verify: {self.state}"
        by = f" on {self.verifier}" if self.verifier else ""
        return f"verify: {self.state.replace('_', ' ')}{by}"


def sampled(seed: int, match_id: str, fraction: float) -> bool:
    """Whether ``match_id`` is replayed for verification: a hash of the run's seed and the
    match id, read as a number in [0, 1), under ``fraction`` (0: never, 1: always)."""
    if fraction <= 0.0:
        return False
    if fraction >= 1.0:
        return True
    digest = hashlib.sha256(f"verify:{seed}:{match_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2.0**64 < fraction


@dataclass(frozen=True)
class Comparison:
    outcome: Outcome
    detail: str


def compare(official: MatchResult, replay: MatchResult, deterministic: Mapping[str, bool]) -> Comparison:
    """What the replay of a match says of its official result. ``deterministic``: per entry of
    the match, whether it declares itself deterministic."""
    loose = sorted(name for name, d in deterministic.items() if not d)
    if loose:
        return Comparison(
            "not_compared", f"not compared: {', '.join(loose)} not declared deterministic (entry.yaml)"
        )
    timed = [
        f"game {k + 1}"
        for r in (official, replay)
        for k, g in enumerate(r.games)
        if g.verdict.kind in TIME_VERDICTS or g.stopped_by == "wall"
    ]
    if timed:
        return Comparison(
            "not_compared",
            f"not compared: a time verdict or the wall bound in {', '.join(sorted(set(timed)))} "
            "(depends on the machine's load)",
        )
    d = first_divergence(official, replay)
    if d is None:
        return Comparison("agrees", "identical move for move: same moves, winners, scores and verdicts")
    where = f"game {d.game}" + (
        f", move {d.move}" if d.move is not None else ", same moves, different ending"
    )
    return Comparison("differs", f"transcripts differ at {where}: official {d.old} vs replay {d.new}")


@dataclass(frozen=True)
class Difference:
    """A verification replay that differed: the match, its two workers and its entries."""

    match_id: str
    workers: frozenset[str]
    entries: frozenset[str]


@dataclass(frozen=True)
class Blame:
    """What the run's differences follow: each flagged worker and entry, with its differences."""

    workers: dict[str, list[Difference]]
    entries: dict[str, list[Difference]]


def _common(sets: list[frozenset[str]]) -> frozenset[str]:
    return frozenset.intersection(*sets) if sets else frozenset()


def blame(differences: Sequence[Difference]) -> Blame:
    """Who ``differences`` point at (the module's rule): an entry whose differences share no
    worker, then a worker whose differences not explained by a flagged entry share no entry."""
    entries: dict[str, list[Difference]] = {}
    for name in sorted({e for d in differences for e in d.entries}):
        mine = [d for d in differences if name in d.entries]
        if len(mine) > 1 and not _common([d.workers for d in mine]):
            entries[name] = mine
    unexplained = [d for d in differences if not d.entries & entries.keys()]
    workers: dict[str, list[Difference]] = {}
    for name in sorted({w for d in unexplained for w in d.workers}):
        mine = [d for d in unexplained if name in d.workers]
        if len(mine) > 1 and not _common([d.entries for d in mine]):
            workers[name] = mine
    return Blame(workers, entries)


__all__ = [
    "OPEN_STATES",
    "TIME_VERDICTS",
    "Blame",
    "Comparison",
    "Difference",
    "Outcome",
    "Verification",
    "blame",
    "compare",
    "sampled",
]
