"""Property tests: random legal play in every game keeps the rules' invariants.

Moves are chosen by a ``random.Random`` seeded from hypothesis, so a failure
reproduces from the seed it prints. Boards stay small to keep this quick.
"""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from runner.domain.games.base import Game
from runner.domain.games.boxing import BLOCKED, VACANT, Boxing
from runner.domain.games.mnk import EMPTY as MNK_EMPTY
from runner.domain.games.mnk import Mnk
from runner.domain.games.pousse import EMPTY, Pousse, PousseMove, PousseState

FAST = settings(max_examples=40, deadline=None)
seeds = st.integers(min_value=0, max_value=2**32 - 1)


def _pousse_line(state: PousseState, move: PousseMove) -> str:
    i = move.number - 1
    rows = state.rows()
    return rows[i] if move.side in "LR" else "".join(r[i] for r in rows)


@FAST
@given(seed=seeds, size=st.integers(min_value=4, max_value=6))
def test_pousse_random_play_ends_and_counts_markers(seed: int, size: int) -> None:
    game, rng = Pousse(), random.Random(seed)
    state = game.new_game(str(size), 2)
    for _ in range(5000):
        if game.outcome(state) is not None:
            break
        move = rng.choice(game.legal_moves(state))
        mover, other = "XO"[game.to_move(state)], "XO"[1 - game.to_move(state)]
        before = Counter(state.cells)
        full = EMPTY not in _pousse_line(state, move)
        state = game.play(state, move)
        after = Counter(state.cells)
        total_before, total_after = before["X"] + before["O"], after["X"] + after["O"]
        if full:  # one marker in, one pushed off
            assert total_after == total_before
            assert (after[mover] - before[mover], after[other] - before[other]) in {(0, 0), (1, -1)}
        else:
            assert total_after == total_before + 1
            assert (after[mover] - before[mover], after[other] - before[other]) == (1, 0)
    outcome = game.outcome(state)
    assert outcome is not None, "pousse game did not end within 5000 moves"
    assert len(outcome.winners) == 1 and sorted(outcome.scores) == [0, 1]


@FAST
@given(
    seed=seeds,
    width=st.integers(min_value=1, max_value=9),
    height=st.integers(min_value=1, max_value=7),
    blocked_share=st.floats(min_value=0, max_value=0.5),
    max_box=st.integers(min_value=1, max_value=5),
)
def test_boxing_random_play_conserves_cells(
    seed: int, width: int, height: int, blocked_share: float, max_box: int
) -> None:
    game, rng = Boxing(max_box=max_box), random.Random(seed)
    cells = width * height
    board = game.generate_board(
        rng, width=width, height=height, blocked=min(cells - 1, int(cells * blocked_share))
    )
    state = game.new_game(board, 2)
    blocked = state.cells.count(BLOCKED)
    bound = state.vacant  # every move marks at least one vacant cell
    for _ in range(bound):
        if game.outcome(state) is not None:
            break
        move = rng.choice(game.legal_moves(state))
        mark = game.seat_mark(state, game.to_move(state))
        before = state
        state = game.play(state, move)
        assert len(state.cells) == cells and state.cells.count(BLOCKED) == blocked
        assert state.cells.count(VACANT) == before.cells.count(VACANT) - move.size**2 == state.vacant
        assert state.cells.count(mark) == before.cells.count(mark) + move.size**2
        # marks only grow: every cell that held something still holds it
        assert all(a == b for a, b in zip(before.cells, state.cells, strict=True) if a != VACANT)
        # the arena an entry would print reads back as the same move
        assert game.move_from_output(before, game.arena_text(state)) == move
    outcome = game.outcome(state)
    assert outcome is not None and state.vacant == 0
    winner = outcome.winners[0]
    assert outcome.scores[winner] == state.cells.count(game.seat_mark(state, winner))
    assert outcome.scores[1 - winner] == 0


def _next_after(seat: int, active: tuple[int, ...]) -> int:
    later = [s for s in active if s > seat]
    return later[0] if later else min(active)


@FAST
@given(seed=seeds, players=st.integers(min_value=2, max_value=6))
def test_boxing_n_players_with_forfeits(seed: int, players: int) -> None:
    game, rng = Boxing(max_box=3), random.Random(seed)
    state = game.new_game(game.generate_board(rng, width=8, height=6, blocked=5), players)
    for _ in range(state.vacant + players):
        if game.outcome(state) is not None:
            break
        seat = game.to_move(state)
        assert seat in state.active
        if rng.random() < 0.1:
            gone = rng.choice(state.active)
            state = game.forfeit(state, gone)
            assert gone not in state.active
            if len(state.active) > 1:
                # the rotation goes on from where it was, skipping the seat that left
                assert game.to_move(state) == (_next_after(seat, state.active) if gone == seat else seat)
            continue
        state = game.play(state, rng.choice(game.legal_moves(state)))
        if game.outcome(state) is None:
            assert game.to_move(state) == _next_after(seat, state.active)
    outcome = game.outcome(state)
    assert outcome is not None
    assert len(outcome.scores) == players and len(outcome.winners) == 1
    winner = outcome.winners[0]
    assert winner in state.active
    assert outcome.scores[winner] == state.cells.count(game.seat_mark(state, winner))
    assert sum(outcome.scores) == outcome.scores[winner]


@FAST
@given(
    seed=seeds,
    width=st.integers(min_value=1, max_value=7),
    height=st.integers(min_value=1, max_value=7),
    k=st.integers(min_value=1, max_value=7),
)
def test_mnk_random_play_ends_within_the_board(seed: int, width: int, height: int, k: int) -> None:
    game, rng = Mnk(), random.Random(seed)
    k = min(k, max(width, height))
    state = game.new_game(f"{width} {height} {k}", 2)
    for _ in range(width * height):
        if game.outcome(state) is not None:
            break
        move = rng.choice(game.legal_moves(state))
        filled = state.cells.count(MNK_EMPTY)
        state = game.play(state, move)
        assert state.cells.count(MNK_EMPTY) == filled - 1
    outcome = game.outcome(state)
    assert outcome is not None
    if not outcome.winners:
        assert MNK_EMPTY not in state.cells and outcome.reason == "draw"
    if k == 1:
        assert outcome.winners == (0,) and state.moves == 1


@FAST
@given(seed=seeds)
def test_move_text_round_trips_for_every_legal_move(seed: int) -> None:
    rng = random.Random(seed)
    cases: list[tuple[Game[Any, Any], str]] = [
        (Pousse(), "5"),
        (Mnk(), "4 3 3"),
        (Boxing(max_box=3), "----\n-o--\n"),
    ]
    for game, board in cases:
        state = game.new_game(board, 2)
        for move in game.legal_moves(state):
            assert game.parse_move(game.format_move(move)) == move
        move = rng.choice(game.legal_moves(state))
        game.play(state, game.parse_move(game.format_move(move)))
