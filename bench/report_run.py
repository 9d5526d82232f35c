"""A synthetic finished run directory of any size, for the report's scale test and bench.

``make_run(run_dir, entries=N, boards=B)`` writes what ``tourney run`` leaves
behind (``config.yaml``, ``resolved.json``, ``tournament.sqlite``) for an m,n,k
tournament: a round robin of N entries on B boards (``N*(N-1)/2 * B`` matches,
two games each), or a swiss of N entries (``swiss_rounds``: ``N/2`` matches a
round), then a knockout of the first stage's top ``cup`` entries. Nothing
is executed: every game is random legal play by the real referee (seeded, so
a transcript replays exactly), and every match goes through the run store's
own API as the coordinator drives it (``advance`` -> ``sync_plan`` ->
``dispatch`` -> ``accept``), so the report reads an ordinary run.

101 entries on 10 boards make 50,500 league matches (+ the cup): the issue's
"50,000-match run"; so do 10,000 entries in a 10-round swiss, a field whose
standings are too long for one page. Entries are variants of the sample
``entries/mnk/random``.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

from runner.config import load_config
from runner.domain.games import get_game
from runner.domain.games.base import Game
from runner.domain.match_values import GameRecord, MatchPlan, MatchResult, MoveRecord, Verdict, VerdictKind
from runner.domain.stages.tournament import advance, match_spec
from runner.storage.run_dir import RunDir, create_run
from runner.storage.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
RANDOM_ENTRY = ROOT / "entries" / "mnk" / "random"
#: small boards keep generation quick (a few moves per game) while still differing
BOARD_TEXTS = ["3 3 3", "4 3 3", "3 4 3", "4 4 3", "5 3 3", "3 5 3", "5 4 3", "4 5 3", "4 4 4", "5 5 4"]

CONFIG = """\
name: {name}
description: synthetic run for the report's scale checks (bench/report_run.py)
seed: 7
game: mnk
sandbox: none
boards:
{boards}
  cupboard: {{text: "5 5 4"}}
entries:
  - path: {entry}
    include: [random]
    variants: {{prefix: p, count: {entries}}}
stages:
  - name: league
    planner: round_robin
    boards: [{board_names}]
    games_per_pairing: 2
    scoring: {{win: 1, tie: 0.5, loss: 0}}
    advance: {{top: {cup}}}
  - name: cup
    planner: knockout
    boards: [cupboard]
    games_per_pairing: 2
    scoring: {{win: 1, tie: 0.5, loss: 0}}
    match_win_by: [wins]
"""


def play_random(game: Game[Any, Any], board_text: str, order: list[str], rng: random.Random) -> GameRecord:
    """One game of uniformly random legal moves, judged by the game's own rules."""
    state = game.new_game(board_text, len(order))
    moves: list[MoveRecord] = []
    while (out := game.outcome(state)) is None:
        seat = game.to_move(state)
        move = rng.choice(game.legal_moves(state))
        moves.append(MoveRecord(order[seat], game.format_move(move), round(rng.uniform(0.5, 9.0), 1)))
        state = game.play(state, move)
    winner = order[out.winners[0]] if out.winners else None
    scores = {order[i]: s for i, s in enumerate(out.scores)}
    return GameRecord(list(order), winner, scores, Verdict(VerdictKind.NORMAL, None, ""), moves, out.reason)


#: ``shape="swiss"``: a swiss of many entries instead of the league (10,000 entries, 10 rounds:
#: 50,000 matches), for a field whose standings and bracket are larger than a page shows
SWISS_STAGE = """\
  - name: league
    planner: swiss
    rounds: {rounds}
    boards: [b0]
    games_per_pairing: 2
    scoring: {{win: 1, tie: 0.5, loss: 0}}
    advance: {{top: {cup}}}
"""


def config_text(name: str, entries: int, boards: int, cup: int, swiss_rounds: int = 0) -> str:
    if not 1 <= boards <= len(BOARD_TEXTS):
        raise ValueError(f"boards: 1..{len(BOARD_TEXTS)}")
    names = [f"b{i}" for i in range(boards)]
    text = CONFIG.format(
        name=name,
        boards="\n".join(f'  {n}: {{text: "{t}"}}' for n, t in zip(names, BOARD_TEXTS, strict=False)),
        board_names=", ".join(names),
        entry=RANDOM_ENTRY,
        entries=entries,
        cup=cup,
    )
    if swiss_rounds:
        start = text.index("  - name: league")
        end = text.index("  - name: cup")
        text = text[:start] + SWISS_STAGE.format(rounds=swiss_rounds, cup=cup) + text[end:]
    return text


def make_run(
    run_dir: Path,
    *,
    entries: int = 101,
    boards: int = 10,
    cup: int = 32,
    swiss_rounds: int = 0,
    seed: int = 1,
) -> int:
    """Write a finished synthetic run into ``run_dir`` (new); return its number of matches.
    ``swiss_rounds``: the first stage is a swiss of that many rounds instead of the league."""
    run_dir = Path(run_dir)
    if run_dir.exists():
        raise FileExistsError(f"{run_dir} exists")
    run_dir.parent.mkdir(parents=True, exist_ok=True)
    config_path = run_dir.parent / f"{run_dir.name}.yaml"
    config_path.write_text(config_text(run_dir.name, entries, boards, cup, swiss_rounds))
    config = load_config(config_path)
    rng = random.Random(seed)
    game = get_game(config.game, **config.game_params)
    results: dict[str, list[GameRecord]] = {}
    with create_run(RunDir(run_dir), config_path, config, run_id=f"synthetic-{seed}") as store:
        while True:
            state = advance(config, results)
            if state.finished:
                break
            store.sync_plan([match_spec(config, pm) for pm in state.matches])
            todo = [pm for pm in state.matches if pm.match_id not in results]
            if not todo:
                raise RuntimeError("the plan is stuck: no finished tournament and nothing to play")
            for pm in todo:
                results[pm.match_id] = _play(store, config.board_text(pm.board_id), pm, game, rng)
        store.set_meta(finished=time.time())
    return len(results)


def _play(
    store: RunStore, board_text: str, pm: MatchPlan, game: Game[Any, Any], rng: random.Random
) -> list[GameRecord]:
    _, attempt = store.dispatch(pm.match_id)
    games = [play_random(game, board_text, list(order), rng) for order in pm.orders]
    accepted = store.accept(pm.match_id, attempt, MatchResult(pm.match_id, games, "synthetic"), attempt_cap=3)
    if accepted.status != "accepted":
        raise RuntimeError(f"{pm.match_id}: {accepted}")
    return games


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(
        allow_abbrev=False, prog="python -m bench.report_run", description=__doc__.splitlines()[0]
    )
    ap.add_argument("run_dir", type=Path)
    ap.add_argument("--entries", type=int, default=101)
    ap.add_argument("--boards", type=int, default=10)
    ap.add_argument("--cup", type=int, default=32)
    ap.add_argument("--swiss-rounds", type=int, default=0, help="a swiss of this many rounds, not the league")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    n = make_run(
        args.run_dir, entries=args.entries, boards=args.boards, cup=args.cup, swiss_rounds=args.swiss_rounds
    )
    print(f"wrote {args.run_dir}: {n} matches in {time.perf_counter() - t0:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
