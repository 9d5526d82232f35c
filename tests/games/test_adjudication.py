"""How each game scores a game stopped at its configured bound (``Game.adjudicate``,
docs/config.md ``bound``), and when a bound fires (``runner.domain.game_bound``)."""

from __future__ import annotations

from runner.domain.game_bound import MOVE_BOUND, WALL_BOUND, adjudicated, bound_reached
from runner.domain.games import Boxing, Mnk, Pousse
from runner.domain.match_values import GameBound


def _pousse(moves: list[str], size: str = "4") -> tuple[Pousse, object]:
    rules = Pousse()
    state = rules.new_game(size, 2)
    for m in moves:
        state = rules.play(state, rules.parse_move(m))
        assert rules.outcome(state) is None
    return rules, state


def test_pousse_never_adjudicates_a_draw_more_markers_win() -> None:
    rules, state = _pousse(["L1", "L2", "L3"])  # X 2 markers, O 1
    ruling = rules.adjudicate(state, 2)  # type: ignore[arg-type]
    assert ruling.winners == (0,) and ruling.scores == (1, 0)
    assert ruling.reason == "X has more markers on the board (2 to 1)"


def test_pousse_equal_markers_go_to_the_fuller_line() -> None:
    # X: L1 L1 (two in row 1); O: T4 B3 (one each in two lines)
    rules, state = _pousse(["L1", "T4", "L1", "B3"])
    ruling = rules.adjudicate(state, 2)  # type: ignore[arg-type]
    assert ruling.winners == (0,)
    assert ruling.reason.startswith("equal markers (2 each); X has the fuller line (2 of 4 to 1)")


def test_pousse_equal_markers_and_lines_go_to_o() -> None:
    rules, state = _pousse(["L1", "L2"])
    ruling = rules.adjudicate(state, 2)  # type: ignore[arg-type]
    assert ruling.winners == (1,) and ruling.scores == (0, 1)
    assert "O, the second player" in ruling.reason


def test_mnk_adjudicates_a_draw() -> None:
    rules = Mnk()
    state = rules.play(rules.new_game("5 5 4", 2), rules.parse_move("1 1"))
    ruling = rules.adjudicate(state, 2)
    assert ruling.winners == () and ruling.scores == (0, 0) and ruling.reason == "a draw"


def test_boxing_gives_the_most_marks_the_win_and_their_score() -> None:
    rules = Boxing()
    state = rules.new_game(("-" * 8 + "\n") * 4, 3)
    for m in ["1 1 2", "3 1 1", "4 1 1"]:  # A 4 cells, B 1, C 1
        state = rules.play(state, rules.parse_move(m))
    ruling = rules.adjudicate(state, 3)
    assert ruling.winners == (0,) and ruling.scores == (4, 0, 0)
    assert ruling.reason == "A has the most marks (4 to 1)"


def test_boxing_a_tie_for_the_most_marks_is_a_draw() -> None:
    rules = Boxing()
    state = rules.new_game(("-" * 8 + "\n") * 4, 2)
    for m in ["1 1 1", "3 1 1"]:
        state = rules.play(state, rules.parse_move(m))
    ruling = rules.adjudicate(state, 2)
    assert ruling.winners == () and ruling.scores == (0, 0)
    assert ruling.reason == "A, B share the most marks (1): a draw"


def test_boxing_leaves_a_forfeited_seat_out() -> None:
    rules = Boxing()
    state = rules.new_game(("-" * 8 + "\n") * 4, 3)
    for m in ["1 1 2", "3 1 1", "4 1 1"]:
        state = rules.play(state, rules.parse_move(m))
    state = rules.forfeit(state, 0)  # A had the most
    ruling = rules.adjudicate(state, 3)
    assert ruling.winners == () and "B, C share" in ruling.reason


def test_bounds_fire_on_moves_or_on_the_clock() -> None:
    bound = GameBound(max_moves=10, wall_s=2.0)
    assert bound_reached(bound, 9, 1.9) is None
    assert bound_reached(bound, 10, 0.0) == MOVE_BOUND
    assert bound_reached(bound, 3, 2.0) == WALL_BOUND
    assert bound_reached(GameBound(max_moves=None), 10**9, 10**6) is None
    assert GameBound().max_moves == 10_000 and GameBound().wall_s is None  # the documented default


def test_the_reason_says_which_bound_and_how_it_was_adjudicated() -> None:
    rules, state = _pousse(["L1", "L2", "L3"])
    moved = adjudicated(rules, state, 2, MOVE_BOUND, GameBound(max_moves=3), 3)
    ruling = "adjudicated: X has more markers on the board (2 to 1)"
    assert moved.reason == f"move bound reached (3 moves); {ruling}"
    timed = adjudicated(rules, state, 2, WALL_BOUND, GameBound(wall_s=1.5), 3)
    assert timed.reason.startswith("game wall budget reached (1.5 s, after 3 moves); adjudicated: X has")
