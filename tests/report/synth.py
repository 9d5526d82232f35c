"""Synthetic tournaments for the report tests: real referees, seeded random play.

Each builder returns a ``ReportData`` as ``load_report_data`` would, without
a run store: matches are played by picking legal moves with a seeded RNG, so
every transcript replays exactly, and standings are tallied from the games.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from runner.config import TournamentConfig
from runner.domain.entries import EntrySpec
from runner.domain.games import get_game
from runner.domain.games.base import Game
from runner.domain.match_record import MatchRecord
from runner.domain.match_values import (
    GameRecord,
    MatchPlan,
    MatchResult,
    MoveRecord,
    Verdict,
    VerdictKind,
    stable_id,
)
from runner.domain.stages.base import RoundInfo, StageState, StandingRow, TournamentState
from runner.domain.stages.tournament import advance
from runner.report.model import ReportData

POUSSE_ENTRIES = ["alice", "bob", "carol", "dave", "erin", "frank"]


def played(pm: MatchPlan, games: Sequence[GameRecord], worker: str = "") -> MatchRecord:
    """A match the store would hold as done after its first attempt."""
    result = MatchResult(pm.match_id, list(games), worker)
    return MatchRecord(pm, state="done", attempt=1, worker=worker, result=result)


FAULTS = [
    (VerdictKind.TIMEOUT, "no move within 1.0 s (wall)"),
    (VerdictKind.CRASH, "exit status -11 (signal 11)"),
    (VerdictKind.BAD_OUTPUT, "expected 'x y', got 'hello'"),
]


def play_random(
    game: Game[Any, Any],
    board_text: str,
    order: list[str],
    rng: random.Random,
    max_moves: int = 120,
    fault_rate: float = 0.0,
) -> GameRecord:
    """A game of random legal moves. The player to move faults (a verdict)
    with probability ``fault_rate`` per move, or when the game runs past
    ``max_moves``; in a two-player game that ends it."""
    state = game.new_game(board_text, len(order))
    moves: list[MoveRecord] = []
    verdict = Verdict(VerdictKind.NORMAL, None, "")
    while game.outcome(state) is None:
        seat = game.to_move(state)
        if len(moves) >= max_moves or (fault_rate and rng.random() < fault_rate):
            kind, detail = FAULTS[0] if len(moves) >= max_moves else rng.choice(FAULTS)
            state = game.forfeit(state, seat)
            verdict = Verdict(kind, order[seat], detail)
            continue
        move = rng.choice(game.legal_moves(state))
        moves.append(MoveRecord(order[seat], game.format_move(move), round(rng.uniform(1, 40), 2)))
        state = game.play(state, move)
    out = game.outcome(state)
    assert out is not None
    winner = order[out.winners[0]] if out.winners else None
    return GameRecord(
        list(order), winner, {order[i]: s for i, s in enumerate(out.scores)}, verdict, moves, out.reason
    )


def _board_id(text: str) -> str:
    return stable_id("board", text, length=12)


def _play_match(
    game: Game[Any, Any],
    stage: str,
    rnd: int,
    bracket: str,
    pairing: int,
    players: tuple[str, ...],
    board_text: str,
    orders: list[tuple[str, ...]],
    rng: random.Random,
    fault_rate: float = 0.004,
) -> MatchRecord:
    pm = MatchPlan(stage, rnd, bracket, pairing, players, _board_id(board_text), tuple(orders))
    games = tuple(play_random(game, board_text, list(o), rng, fault_rate=fault_rate) for o in orders)
    return played(pm, games, worker="w1")


def tally(
    stage: str, matches: list[MatchRecord], entrants: list[str], status: dict[str, str]
) -> list[StandingRow]:
    """Standings by points (win 1, tie 1/2), then score; what a round robin gives."""
    rows: dict[str, dict[str, float]] = {
        e: {"games": 0, "wins": 0, "ties": 0, "losses": 0, "points": 0.0, "score": 0, "va": 0}
        for e in entrants
    }
    for m in matches:
        for g in m.games:
            for p in g.order:
                r = rows[p]
                r["games"] += 1
                r["score"] += g.scores.get(p, 0)
                if g.winner == p:
                    r["wins"] += 1
                    r["points"] += 1
                elif g.winner is None:
                    r["ties"] += 1
                    r["points"] += 0.5
                else:
                    r["losses"] += 1
            if g.verdict.player in rows:
                rows[g.verdict.player]["va"] += 1
    ordered = sorted(entrants, key=lambda e: (-rows[e]["points"], -rows[e]["score"], e))
    return [
        StandingRow(
            rank=i,
            entry=e,
            games=int(rows[e]["games"]),
            wins=int(rows[e]["wins"]),
            ties=int(rows[e]["ties"]),
            losses=int(rows[e]["losses"]),
            points=rows[e]["points"],
            score=int(rows[e]["score"]),
            verdicts_against=int(rows[e]["va"]),
            extra={"seed": float(entrants.index(e) + 1)},
            status=status.get(e, ""),
        )
        for i, e in enumerate(ordered, start=1)
    ]


def pousse_tournament(
    seed: int = 1, finished: bool = True, entries: Sequence[str] = tuple(POUSSE_ENTRIES)
) -> ReportData:
    """Round-robin seeding, a two-bracket POTM elimination, a round-robin final (pousse)
    among six ``entries``."""
    rng = random.Random(seed)
    game = get_game("pousse")
    boards = {_board_id(t): t for t in ("6", "5", "4", "7")}
    matches: list[MatchRecord] = []
    stages: list[StageState] = []

    # 1. seeding: round robin, each pair twice (each side first once)
    seeding: list[MatchRecord] = []
    for k, (a, b) in enumerate(itertools.combinations(entries, 2)):
        seeding.append(_play_match(game, "seeding", 1, "", k, (a, b), "6", [(a, b), (b, a)], rng))
    matches += seeding
    s_rows = tally("seeding", seeding, list(entries), {})
    seeds = [r.entry for r in s_rows]
    stages.append(
        StageState(
            "seeding",
            "round_robin",
            "done",
            list(entries),
            [RoundInfo(1, "", tuple(m.match_id for m in seeding), (), _board_id("6"))],
            s_rows,
            seeds,
        )
    )

    # 2. elimination: round 1 all in winners; round 2 winners (bye to best seed) + losers
    elim: list[MatchRecord] = []
    rounds: list[RoundInfo] = []
    r1 = [(seeds[0], seeds[5]), (seeds[1], seeds[4]), (seeds[2], seeds[3])]
    r1m = [
        _play_match(game, "elimination", 1, "winners", i, p, "5", [p, (p[1], p[0])], rng)
        for i, p in enumerate(r1)
    ]
    elim += r1m
    rounds.append(RoundInfo(1, "winners", tuple(m.match_id for m in r1m), (), _board_id("5")))
    stay: list[str] = []
    drop: list[str] = []
    for m in r1m:
        lead = m.leaders()
        for p in m.players:
            (stay if p in lead else drop).append(p)
    stay.sort(key=seeds.index)
    drop.sort(key=seeds.index)
    finalists: list[str] = []
    for bracket, members in (("winners", stay), ("losers", drop)):
        byes: tuple[str, ...] = ()
        if len(members) % 2:
            byes = (members[0],)
            members = members[1:]
        pairs = [(members[i], members[-1 - i]) for i in range(len(members) // 2)]
        ms = [
            _play_match(game, "elimination", 2, bracket, i, p, "4", [p, (p[1], p[0])], rng)
            for i, p in enumerate(pairs)
        ]
        elim += ms
        rounds.append(RoundInfo(2, bracket, tuple(m.match_id for m in ms), byes, _board_id("4")))
        # after round 2 the survivors of both brackets (ties keep both) go to the final
        finalists += [*byes, *(p for m in ms for p in m.leaders())]
    matches += elim
    finalists.sort(key=seeds.index)
    e_rows = tally(
        "elimination", elim, seeds, {e: ("advanced" if e in finalists else "eliminated") for e in seeds}
    )
    stages.append(StageState("elimination", "potm_elimination", "done", seeds, rounds, e_rows, finalists))

    # 3. final: round robin among the four
    final: list[MatchRecord] = []
    for k, (a, b) in enumerate(itertools.combinations(finalists, 2)):
        final.append(_play_match(game, "final", 1, "", k, (a, b), "7", [(a, b), (b, a)], rng))
    if not finished:
        final = [
            replace(m, result=None, state="running" if i == 0 else "queued") for i, m in enumerate(final)
        ]
    matches += final
    f_rows = tally("final", final, finalists, {}) if finished else []
    stages.append(
        StageState(
            "final",
            "round_robin",
            "done" if finished else "running",
            finalists,
            [RoundInfo(1, "", tuple(m.match_id for m in final), (), _board_id("7"))],
            f_rows,
        )
    )
    ts = TournamentState(
        matches=[_planned(m) for m in matches],
        stages=stages,
        finished=finished,
        final_ranking=[r.entry for r in f_rows] if finished else [],
    )
    return ReportData(
        name="pousse-demo",
        game_name="pousse",
        tournament=ts,
        matches=matches,
        boards=boards,
        meta={
            "name": "pousse-demo",
            "sandbox": "bwrap",
            "created": "2024-05-01T10:00:00Z",
            "finished": "2024-05-01T10:05:00Z" if finished else None,
            "game": "pousse",
        },
    )


def boxing_permutations(seed: int = 2, sandbox: str = "none", width: int = 8, height: int = 5) -> ReportData:
    """Three entries, all 3! play orders on one small arena (openskill, boxing grids)."""
    rng = random.Random(seed)
    game = get_game("boxing", max_box=3)
    arena = game.generate_board(random.Random(seed), width=width, height=height, blocked=4)
    bid = _board_id(arena)
    entries = ["greedy", "corner", "random"]
    ms: list[MatchRecord] = []
    for k, order in enumerate(itertools.permutations(entries)):
        pm = MatchPlan("tiebreak", 1, "", k, tuple(entries), bid, (order,))
        rec = play_random(game, arena, list(order), rng, max_moves=200, fault_rate=0.02)
        ms.append(played(pm, (rec,)))
    rows = tally("tiebreak", ms, entries, {})
    stage = StageState(
        "tiebreak",
        "permutations",
        "done",
        entries,
        [RoundInfo(1, "", tuple(m.match_id for m in ms), (), bid)],
        rows,
    )
    ts = TournamentState([_planned(m) for m in ms], [stage], True, [r.entry for r in rows])
    return ReportData(
        "boxing-demo",
        "boxing",
        ts,
        ms,
        {bid: arena},
        {"max_box": 3},
        {"name": "boxing-demo", "sandbox": sandbox, "game": "boxing"},
    )


def mnk_knockout(seed: int = 3, names: Sequence[str] = ("north", "south", "east", "west")) -> ReportData:
    """Four entries, a two-round knockout on 5x5 (k=4)."""
    rng = random.Random(seed)
    game = get_game("mnk")
    board = "5 5 4"
    bid = _board_id(board)
    entries = list(names)
    a, b, c, d = entries
    r1 = [
        _play_match(game, "knockout", 1, "", 0, (a, d), board, [(a, d), (d, a)], rng),
        _play_match(game, "knockout", 1, "", 1, (b, c), board, [(b, c), (c, b)], rng),
    ]
    w = [m.leaders()[0] for m in r1]
    r2 = [_play_match(game, "knockout", 2, "", 0, (w[0], w[1]), board, [(w[0], w[1]), (w[1], w[0])], rng)]
    ms = r1 + r2
    rows = tally("knockout", ms, entries, {})
    stage = StageState(
        "knockout",
        "knockout",
        "done",
        entries,
        [
            RoundInfo(1, "", tuple(m.match_id for m in r1), (), bid),
            RoundInfo(2, "", tuple(m.match_id for m in r2), (), bid),
        ],
        rows,
        [rows[0].entry],
    )
    ts = TournamentState([_planned(m) for m in ms], [stage], True, [r.entry for r in rows])
    return ReportData("mnk-demo", "mnk", ts, ms, {bid: board}, {}, {"name": "mnk-demo", "sandbox": "bwrap"})


def _planned(m: MatchRecord) -> MatchPlan:
    return MatchPlan(m.stage, m.round, m.bracket, m.pairing, m.players, m.board_id, m.orders)


POTM_STAGES: list[dict[str, Any]] = [
    {
        "name": "seeding",
        "planner": "seeding",
        "boards": ["seeding-board"],
        "games_per_pairing": 2,
        "scoring": {"win": [1000, 1200], "tie": [500, 600], "add_game_score": True},
        "rank_by": ["points"],
    },
    {
        "name": "elimination",
        "planner": "potm_elimination",
        "boards": ["round"],
        "games_per_pairing": 2,
        "k": 2,
    },
    {
        "name": "final",
        "planner": "round_robin",
        "boards": ["final-board"],
        "games_per_pairing": 2,
        "scoring": {"win": [1000, 1200], "tie": [500, 600], "add_game_score": True},
        "rank_by": ["points"],
    },
]


def _fake_entry(name: str) -> EntrySpec:
    return EntrySpec(
        name, "boxing", "potm-arena", Path("/nonexistent") / name, ["./a.out", "{mark}"], None, "0" * 64
    )


def potm_finals(n: int = 13, seed: int = 5) -> ReportData:
    """Seed 000's finals with the real planners (``advance``) and real boxing
    games of random legal moves: seeding against three seed programs, the
    two-bracket elimination with byes, a round-robin final."""
    cfg = TournamentConfig.model_validate(
        {
            "name": "potm-finals-demo",
            "seed": seed,
            "game": "boxing",
            "game_params": {"max_box": 4},
            "boards": {
                "seeding-board": {"generate": {"width": 12, "height": 6, "blocked": 6}},
                "round": {"generate": {"width": 12, "height": 6, "blocked": 6}, "per_round": True},
                "final-board": {"generate": {"width": 12, "height": 6, "blocked": 4}},
            },
            "entries": [{"path": "unused"}],
            "seed_opponents": [{"path": "unused"}],
            "stages": POTM_STAGES,
        }
    )
    names = [f"bot-{i:02d}" for i in range(1, n + 1)]
    opponents = ["old-greedy", "old-sprague", "old-random"]
    cfg.bind(
        base_dir=Path("."),
        entries={nm: _fake_entry(nm) for nm in names},
        seed_opponents={o: _fake_entry(o) for o in opponents},
    )
    game = cfg.game_rules()
    rng = random.Random(seed)
    results: dict[str, list[GameRecord]] = {}
    for _ in range(200):  # bounded: one pass per round
        pending = [m for m in advance(cfg, results).matches if m.match_id not in results]
        if not pending:
            break
        for m in pending:
            board = cfg.board_text(m.board_id)
            results[m.match_id] = [play_random(game, board, list(o), rng, fault_rate=0.01) for o in m.orders]
    state = advance(cfg, results)
    assert state.finished
    matches = [played(pm, results[pm.match_id], worker="w1") for pm in state.matches]
    boards = {m.board_id: cfg.board_text(m.board_id) for m in matches}
    meta = {
        "name": cfg.name,
        "sandbox": "bwrap",
        "created": "2024-05-01 10:00:00 UTC",
        "finished": "2024-05-01 10:20:00 UTC",
    }
    return ReportData(cfg.name, "boxing", state, matches, boards, dict(cfg.game_params), meta, None, cfg)
