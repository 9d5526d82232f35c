"""What each planner requires of its stage, asked by the config checks before anything runs.

- ``admission``: how many entrants can come out of a stage given an upper
  bound of those that reach it, and why it cannot happen ("a final of 8 from
  5 entries"); ``tourney validate`` walks the stages with it.
- ``board_objections``: what is wrong with the boards a stage names for its
  planner (an elimination needs a different board every round).

These rules restate what the planners do, so they live beside the planners
rather than in the config loader.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from runner.domain.boards import BoardSpec
from runner.domain.stage_models import (
    AdvanceTop,
    AnyStage,
    EliminationStage,
    GauntletStage,
    KnockoutStage,
    PermutationsStage,
    RoundRobinStage,
    SeedingStage,
    SprtStage,
    SpsaStage,
    StageBase,
    SwissStage,
    SystemTestStage,
)


@dataclass(frozen=True)
class Objection:
    """Why the stage cannot happen with that many entrants; ``at`` is the key inside the stage."""

    at: tuple[str, ...]
    message: str
    warning: bool = False  # the stage can happen, but not as its seed says (validate warns)


@dataclass(frozen=True)
class Admission:
    out: int  # at most this many entrants come out of the stage
    objections: tuple[Objection, ...] = ()


# Each rule: (stage, at most n entrants) -> the bound on what comes out, and objections.
Rule = Callable[[Any, int], tuple[int, list[Objection]]]


SEED_000_FINALISTS = (4, 8)  # "there will be no fewer than 4 and no more than 8 entries remaining"


def finalist_objections(st: EliminationStage) -> list[Objection]:
    """Seed 000's 4..8 finalists against what K gives (K+2 to 3K): refused when no outcome fits,
    a warning when some outcomes do not."""
    least, most = SEED_000_FINALISTS
    low, high = st.k + 2, 3 * st.k
    rule = f"seed 000: 'there will be no fewer than {least} and no more than {most} entries remaining'"
    if high < least or low > most:
        return [Objection(("k",), f"k={st.k} gives {low}..{high} finalists, never {least}..{most} ({rule})")]
    if low < least or high > most:
        return [
            Objection(
                ("k",),
                f"k={st.k} gives {low}..{high} finalists, which can fall outside {least}..{most} ({rule}); "
                "k=2 always fits",
                warning=True,
            )
        ]
    return []


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
    # beyond max_entrants the planner plays a balanced design instead of all N! orders
    return n, []


def unbreakable_tie(st: PermutationsStage, n: int, max_players: int) -> list[Objection]:
    """A warning when up to ``n`` entrants may reach a permutations stage whose game seats fewer:
    such a tie cannot be played off and stays shared."""
    if n <= max_players:
        return []
    return [
        Objection(
            (),
            f"up to {n} entrants can reach stage {st.name!r}, but a game seats at most {max_players}: "
            "a tie among more would be left unbroken (shared places)",
            warning=True,
        )
    ]


def _sprt(st: SprtStage, n: int) -> tuple[int, list[Objection]]:
    # named players: the others pass the stage by (ranked after the two); else exactly two play
    if st.engine is not None or n <= 2:
        return min(n, 2), []
    return n, [
        Objection(
            (),
            f"an sprt stage plays exactly two entries, but up to {n} reach stage {st.name!r}: "
            "name the two with engine and baseline",
        )
    ]


def _spsa(st: SpsaStage, n: int) -> tuple[int, list[Objection]]:
    # a named engine: the others pass the stage by (ranked after it); else exactly one is tuned
    if st.engine is not None or n <= 1:
        return min(n, 1), []
    return n, [
        Objection(
            (),
            f"an spsa stage tunes one engine, but up to {n} entries reach stage {st.name!r}: "
            "name it with engine",
        )
    ]


# planners not named here keep everyone they are given
_RULES: dict[type[StageBase], Rule] = {
    SprtStage: _sprt,
    SpsaStage: _spsa,
    EliminationStage: _elimination,
    KnockoutStage: _knockout,
    SwissStage: _swiss,
    PermutationsStage: _permutations,
}
# a system test can run a single entry (against its mirror), spsa tunes one (against itself), a
# gauntlet or seeding stage a single entrant against its opponents (fastchess's -gauntlet with
# one engine against N); every other planner needs a pair
_MIN_ENTRANTS: dict[type[StageBase], int] = {
    SystemTestStage: 1,
    SpsaStage: 1,
    GauntletStage: 1,
    SeedingStage: 1,
}


def admission(st: AnyStage, n: int) -> Admission:
    """What comes out of ``st`` when at most ``n`` entrants reach it."""
    if st.when == "tied_for_first":
        return Admission(n)  # a tiebreak reorders, it does not change who is left
    least = _MIN_ENTRANTS.get(type(st), 2)
    if n < 1 or n < least:
        too_few = f"stage {st.name!r} can have at most {n} entrant(s); it needs at least {least}"
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


def _elimination_boards(st: EliminationStage, boards: Mapping[str, BoardSpec]) -> list[Objection]:
    specs = [boards.get(b) for b in st.boards]
    if len(specs) == 1 and specs[0] is not None and specs[0].per_round:
        return []
    if any(s is not None and s.per_round for s in specs):
        return [Objection(("boards",), "a per_round board must be the stage's only board")]
    if st.max_rounds is None or len(st.boards) < st.max_rounds:
        return [
            Objection(
                ("boards",),
                "every elimination round needs a different board: name one generated board with "
                "per_round: true, or list at least max_rounds fixed boards",
            )
        ]
    if len(set(st.boards)) != len(st.boards):
        return [Objection(("boards",), "the boards must all differ (one per round)")]
    return []


# planners not named here take any boards the config defines
_BOARD_RULES: dict[type[StageBase], Callable[[Any, Mapping[str, BoardSpec]], list[Objection]]] = {
    EliminationStage: _elimination_boards,
}


def board_objections(st: AnyStage, boards: Mapping[str, BoardSpec]) -> tuple[Objection, ...]:
    """What is wrong with ``st``'s boards for its planner (``boards``: the config's named boards)."""
    rule = _BOARD_RULES.get(type(st))
    return tuple(rule(st, boards)) if rule is not None else ()


# -- how many games a plan implies --------------------------------------------

#: the most games ``tourney validate`` lets one stage imply. A round robin is planned
#: lazily (``runner.domain.stages.round_robin``), so planning no longer holds every
#: pairing; what grows is the coordinator's memory per *played* match: its official
#: result kept for planning (without the moves) and, once, the stage's whole plan when
#: it ends. ``make bench-scale`` measured 3.55 KB per two-game match of a 79,800-match
#: round robin (``coordinator_round_robin``, 400 entries), about 1.8 KB per game: one
#: million games keep the coordinator under 2 GB (issue 13's bound). A round robin
#: of 1,000 entries with two games per pairing (999,000 games) fits.
MAX_STAGE_GAMES = 1_000_000
#: what the limit keeps the coordinator under, for the message
MAX_STAGE_MEMORY = "2 GB"


def stage_games(st: AnyStage, n: int, opponents: int) -> int | None:
    """The most games ``st`` plays with ``n`` entrants (``opponents``: the seed
    opponents it can use); None where it depends on the results (potm_elimination)."""
    boards = max(len(st.boards), 1)
    if isinstance(st, RoundRobinStage):
        return n * (n - 1) // 2 * boards * st.games_per_pairing
    if isinstance(st, SwissStage):
        return st.rounds * (n // 2) * st.games_per_pairing
    if isinstance(st, KnockoutStage):
        return max(n - 1, 0) * st.games_per_pairing
    if isinstance(st, GauntletStage | SeedingStage):
        rivals = len(st.opponents) if st.opponents is not None else opponents
        return n * rivals * boards * st.games_per_pairing
    if isinstance(st, SystemTestStage):
        return n * boards
    if isinstance(st, PermutationsStage):
        return 0 if n > st.max_entrants else math.factorial(n) * boards * st.games_per_order
    if isinstance(st, SprtStage) and st.max_pairs is not None:
        return 2 * st.max_pairs
    if isinstance(st, SpsaStage):
        return 2 * st.pairs
    return None


def game_objections(st: AnyStage, n: int, opponents: int) -> list[Objection]:
    """A stage that would plan more than ``MAX_STAGE_GAMES`` games, with the number."""
    games = stage_games(st, n, opponents)
    if games is None or games <= MAX_STAGE_GAMES:
        return []
    return [
        Objection(
            (),
            f"{st.planner} with {n:,} entrants implies {games:,} games, more than the "
            f"limit of {MAX_STAGE_GAMES:,} games per stage (what keeps the coordinator's memory "
            f"under {MAX_STAGE_MEMORY}: about 1.8 KB per game played)",
        )
    ]


def planned_games(stages: list[AnyStage], entries: int, opponents: int) -> list[int | None]:
    """The most games of each stage, walking the entrants' upper bound through ``admission``."""
    out: list[int | None] = []
    n = entries
    for st in stages:
        out.append(stage_games(st, n, opponents))
        n = admission(st, n).out
    return out
