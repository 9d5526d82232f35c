"""How many entrants can come out of a stage, and why a stage cannot happen: per planner.

``tourney validate`` walks the stages with an upper bound of the entrants
that can reach each one ("a final of 8 from 5 entries") and asks this module,
so the rules that restate what a planner does live beside the planners
rather than in the config loader.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from runner.config.models import (
    AdvanceTop,
    AnyStage,
    EliminationStage,
    KnockoutStage,
    PermutationsStage,
    StageBase,
    SwissStage,
    SystemTestStage,
)


@dataclass(frozen=True)
class Objection:
    """Why the stage cannot happen with that many entrants; ``at`` is the key inside the stage."""

    at: tuple[str, ...]
    message: str


@dataclass(frozen=True)
class Admission:
    out: int  # at most this many entrants come out of the stage
    objections: tuple[Objection, ...] = ()


# Each rule: (stage, at most n entrants) -> the bound on what comes out, and objections.
Rule = Callable[[Any, int], tuple[int, list[Objection]]]


def _elimination(st: EliminationStage, n: int) -> tuple[int, list[Objection]]:
    found = []
    if n <= 2 * st.k:
        found.append(
            Objection(
                ("k",),
                f"at most {n} entrants reach stage {st.name!r}: with k={st.k} the winners bracket "
                f"stops at {2 * st.k}, so no round would be played; lower k or drop the stage",
            )
        )
    return min(n, 3 * st.k), found


def _knockout(st: KnockoutStage, n: int) -> tuple[int, list[Objection]]:
    return (1 if st.advance == "survivors" else n), []


def _swiss(st: SwissStage, n: int) -> tuple[int, list[Objection]]:
    if st.rounds > n - 1:
        return n, [
            Objection(
                ("rounds",),
                f"{st.rounds} rounds without repeats need at least {st.rounds + 1} entrants; "
                f"at most {n} reach this stage",
            )
        ]
    return n, []


def _permutations(st: PermutationsStage, n: int) -> tuple[int, list[Objection]]:
    if n > st.max_entrants:
        too_many = f"up to {n} entrants would play {n}! orders; max_entrants is {st.max_entrants}"
        return n, [Objection((), too_many)]
    return n, []


# planners not named here keep everyone they are given
_RULES: dict[type[StageBase], Rule] = {
    EliminationStage: _elimination,
    KnockoutStage: _knockout,
    SwissStage: _swiss,
    PermutationsStage: _permutations,
}
# a system test can run a single entry (against its mirror); every other planner needs a pair
_MIN_ENTRANTS: dict[type[StageBase], int] = {SystemTestStage: 1}


def admission(st: AnyStage, n: int) -> Admission:
    """What comes out of ``st`` when at most ``n`` entrants reach it."""
    if st.when == "tied_for_first":
        return Admission(n)  # a tiebreak reorders, it does not change who is left
    least = _MIN_ENTRANTS.get(type(st), 2)
    if n < 1 or n < least:
        too_few = f"stage {st.name!r} can have at most {n} entrant(s); it needs at least 2"
        return Admission(n, (Objection((), too_few),))
    rule = _RULES.get(type(st))
    out, found = rule(st, n) if rule is not None else (n, [])
    if isinstance(st.advance, AdvanceTop):
        if st.advance.top > out:
            found.append(
                Objection(
                    ("advance", "top"),
                    f"cannot advance the top {st.advance.top}: "
                    f"at most {out} entrant(s) come out of stage {st.name!r}",
                )
            )
        out = min(out, st.advance.top)
    return Admission(out, tuple(found))
