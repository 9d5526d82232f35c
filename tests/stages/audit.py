"""An independent check of a POTM elimination bracket from the audit JSON alone.

``check_elimination`` replays the bracket the way a third party would, from
``tourney matches --json`` rows and ``tourney standings --json`` (here: the
functions behind them), and asserts every rule of seed 000 / docs/config.md. It
does not import the planner: it re-derives each round from the rules.
"""

from __future__ import annotations

import re
from collections import defaultdict
from typing import Any


def repeat_free_matching_exists(pool: list[str], met: set[frozenset[str]]) -> bool:
    memo: dict[frozenset[str], bool] = {}

    def go(remaining: frozenset[str]) -> bool:
        if not remaining:
            return True
        if remaining in memo:
            return memo[remaining]
        first = min(remaining, key=pool.index)
        ok = any(
            go(remaining - {first, other})
            for other in remaining
            if other != first and frozenset((first, other)) not in met
        )
        memo[remaining] = ok
        return ok

    return go(frozenset(pool))


def check_elimination(stage: dict[str, Any], rows: list[dict[str, Any]], k: int) -> dict[str, Any]:
    """Assert the seed 000 rules on one elimination stage; returns a few facts for further checks."""
    by_id = {r["match_id"]: r for r in rows}
    entrants: list[str] = stage["entrants"]
    seed = {e: i for i, e in enumerate(entrants)}
    where = dict.fromkeys(entrants, "winners")
    had_bye: set[str] = set()
    met: set[frozenset[str]] = set()
    cuts: dict[int, list[tuple[str, str]]] = defaultdict(list)
    for note in stage["notes"]:
        cut = re.match(r"round (\d+): (\S+) cut from the (winners|losers) bracket by seed", note)
        if cut:
            cuts[int(cut.group(1))].append((cut.group(2), cut.group(3)))
    rounds: dict[int, list[dict[str, Any]]] = defaultdict(list)
    for info in stage["rounds"]:
        rounds[info["round"]].append(info)
    boards_seen: set[str] = set()
    extra_matches = 0
    assert sorted(rounds) == list(range(1, len(rounds) + 1)), "rounds are numbered 1, 2, ..."
    for r in sorted(rounds):
        infos = rounds[r]
        winners = sorted((e for e in entrants if where[e] == "winners"), key=seed.__getitem__)
        losers = sorted((e for e in entrants if where[e] == "losers"), key=seed.__getitem__)
        w_play = len(winners) > 2 * k
        l_play = len(losers) >= 2 and (w_play or len(winners) + len(losers) > 3 * k)
        assert {i["bracket"] for i in infos} == {
            b for b, on in (("winners", w_play), ("losers", l_play)) if on
        }, f"round {r}: brackets that play"
        round_boards = {i["board_id"] for i in infos}
        assert len(round_boards) == 1, "both brackets of a round share its board"
        board = round_boards.pop()
        assert board not in boards_seen, f"round {r} reuses board {board}"
        boards_seen.add(board)
        for info in infos:
            members = winners if info["bracket"] == "winners" else losers
            matches = [by_id[mid] for mid in info["matches"]]
            for m in matches:
                assert m["board_id"] == board and m["round"] == r and m["bracket"] == info["bracket"]
                a, b = m["players"]
                assert m["orders"] == [[a, b], [b, a]], "two games, each side first once"
            byes = info["byes"]
            assert len(byes) <= 1
            pool = list(members)
            pairs = [tuple(m["players"]) for m in matches]
            if len(members) % 2:
                fresh = [e for e in members if e not in had_bye]
                if fresh:
                    assert byes == [fresh[0]], f"round {r}: the bye goes to the best seed without one"
                    pool.remove(fresh[0])
                else:
                    assert byes == [], "never two byes"
                    extra = pairs.pop()
                    assert extra[0] == members[0], "the extra match is the best seed's"
                    pool.remove(members[0])
                    extra_matches += 1
            else:
                assert byes == []
            for e in byes:
                assert e not in had_bye, "never two byes"
                had_bye.add(e)
            played = sorted(p for pair in pairs for p in pair)
            assert played == sorted(pool), f"round {r}: each member plays exactly once"
            canonical = [frozenset((pool[i], pool[-1 - i])) for i in range(len(pool) // 2)]
            got = [frozenset(p) for p in pairs]
            repeats = [p for p in got if p in met]
            if not any(p in met for p in canonical):
                assert got == canonical, f"round {r}: best plays worst"
            if repeats:
                assert not repeat_free_matching_exists(pool, met), f"round {r}: avoidable repeat {repeats}"
            for pair in pairs:
                assert seed[pair[0]] < seed[pair[1]]
        # apply the results: a loss drops a winners-bracket member, eliminates a losers-bracket one
        lost: set[str] = set()
        for info in infos:
            for mid in info["matches"]:
                m = by_id[mid]
                assert m["status"] == "done"
                met.add(frozenset(m["players"]))
                w = m["result"]["match_winner"]
                if w is not None:
                    a, b = m["players"]
                    lost.add(b if w == a else a)
        for e in lost:
            where[e] = "losers" if where[e] == "winners" else "out"
        for e, which in cuts.get(r, []):
            assert where[e] == which
            where[e] = "losers" if which == "winners" else "out"
    winners = [e for e in entrants if where[e] == "winners"]
    losers = [e for e in entrants if where[e] == "losers"]
    if len(entrants) > 2 * k:
        assert len(winners) <= 2 * k
        assert len(winners) + len(losers) <= 3 * k
        assert len(winners) + len(losers) >= k + 2
    assert set(stage["advancing"]) == set(winners + losers)
    statuses = {row["entry"]: row["status"] for row in stage["standings"]}
    for e in entrants:
        if where[e] == "out":
            assert statuses[e].startswith("eliminated in round")
        else:
            assert statuses[e] == f"survivor ({where[e]} bracket)"
    return {"rounds": len(rounds), "extra_matches": extra_matches, "survivors": len(winners) + len(losers)}
