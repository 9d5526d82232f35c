"""Synthetic tournaments: configs with fake entries and games decided by a seeded RNG (no processes)."""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from runner.config import TournamentConfig
from runner.domain.entries import EntrySpec
from runner.domain.match_values import GameRecord, MatchPlan, Verdict, VerdictKind
from runner.domain.stages.base import TournamentState
from runner.domain.stages.tournament import advance


def fake_entry(name: str) -> EntrySpec:
    return EntrySpec(
        name=name,
        game="boxing",
        protocol="potm-arena",
        path=Path("/nonexistent") / name,
        run=["./a.out", "{mark}"],
        build=None,
        digest="0" * 64,
        base_name=name,
    )


def make_config(
    stages: list[dict[str, Any]],
    n: int,
    *,
    game: str = "boxing",
    seed: int = 7,
    opponents: Sequence[str] = (),
    boards: Mapping[str, Any] | None = None,
) -> TournamentConfig:
    data: dict[str, Any] = {
        "name": "sim",
        "seed": seed,
        "game": game,
        "boards": dict(boards)
        if boards is not None
        else {"arena": {"generate": {"blocked": 10}, "per_round": True}},
        "entries": [{"path": "unused"}],
        "stages": stages,
    }
    if opponents:
        data["seed_opponents"] = [{"path": "unused"}]
    cfg = TournamentConfig.model_validate(data)
    names = [f"e{i:03d}" for i in range(1, n + 1)]
    return cfg.bind(
        base_dir=Path("."),
        entries={nm: fake_entry(nm) for nm in names},
        seed_opponents={o: fake_entry(o) for o in opponents},
    )


GameMaker = Callable[[MatchPlan, tuple[str, ...], random.Random], GameRecord]


def random_game(tie_rate: float = 0.1, strength: Mapping[str, float] | None = None) -> GameMaker:
    """Games won by a seeded coin (weighted by ``strength``), ties at ``tie_rate``."""

    def make(m: MatchPlan, order: tuple[str, ...], rng: random.Random) -> GameRecord:
        if rng.random() < tie_rate:
            winner = None
        else:
            weights = [(strength or {}).get(p, 1.0) for p in order]
            winner = rng.choices(list(order), weights=weights)[0]
        scores = {p: (rng.randint(1, 300) if p == winner else 0) for p in order}
        return GameRecord(
            order=list(order),
            winner=winner,
            scores=scores,
            verdict=Verdict(VerdictKind.NORMAL, None, ""),
            moves=[],
        )

    return make


def simulate(
    config: TournamentConfig, rng_seed: int = 0, make_game: GameMaker | None = None, max_steps: int = 500
) -> tuple[TournamentState, dict[str, list[GameRecord]]]:
    """Play every match the planners create, round by round, until the tournament is finished."""
    rng = random.Random(rng_seed)
    make = make_game or random_game()
    results: dict[str, list[GameRecord]] = {}
    for _ in range(max_steps):
        state = advance(config, results)
        pending = [m for m in state.matches if m.match_id not in results]
        if not pending:
            assert state.finished, "no pending match but the tournament is not finished"
            return state, results
        for m in pending:
            results[m.match_id] = [make(m, o, rng) for o in m.orders]
    raise AssertionError("tournament did not finish")
