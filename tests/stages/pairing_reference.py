"""The original recursive pairing search, kept as the reference that the
iterative one (``runner.domain.stages.pairing``) must reproduce exactly."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from runner.domain.stages.common import PAIRING_SEARCH_BUDGET


def reference_pair_off(
    players: Sequence[str],
    candidates: Callable[[str, list[str]], list[str]],
    met: Callable[[str, str], bool],
    budget: int = PAIRING_SEARCH_BUDGET,
) -> list[tuple[str, str]]:
    """Pairs for an even number of players with the fewest repeat pairings.

    The first unpaired player takes the first of ``candidates(player, rest)``
    that still lets everyone else be paired; with backtracking this gives
    the first pairing, in the candidates' preference order, among those with
    the fewest repeats (``met``). A search that outgrows its node budget falls
    back to the greedy choice (never seen with real brackets).
    """
    assert len(players) % 2 == 0

    class _Budget(Exception):
        pass

    nodes = 0

    def search(remaining: list[str], repeats_left: int) -> list[tuple[str, str]] | None:
        nonlocal nodes
        if not remaining:
            return []
        nodes += 1
        if nodes > budget:
            raise _Budget
        p, rest = remaining[0], remaining[1:]
        for c in candidates(p, rest):
            cost = 1 if met(p, c) else 0
            if cost > repeats_left:
                continue
            sub = search([x for x in rest if x != c], repeats_left - cost)
            if sub is not None:
                return [(p, c), *sub]
        return None

    for allowed in range(len(players) // 2 + 1):
        nodes = 0
        try:
            found = search(list(players), allowed)
        except _Budget:
            break
        if found is not None:
            return found
    # greedy fallback: first non-repeat candidate, else the first candidate
    out: list[tuple[str, str]] = []
    remaining = list(players)
    while remaining:
        p, rest = remaining[0], remaining[1:]
        cands = candidates(p, rest)
        c = next((x for x in cands if not met(p, x)), cands[0])
        out.append((p, c))
        remaining = [x for x in rest if x != c]
    return out
