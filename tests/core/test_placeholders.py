"""{mark}, {seed}, {size} and {move_time} in an entry's arguments and build command."""

from __future__ import annotations

from runner.domain.games import get_game
from runner.domain.placeholders import (
    ContestParams,
    board_size,
    build_problems,
    fill,
    fill_build,
    game_seed,
    run_arg_problems,
)


def test_board_size_as_play_size_writes_it() -> None:
    assert board_size(get_game("pousse"), "7") == "7"
    assert board_size(get_game("boxing"), "-----\n--o--\n") == "5x2"
    assert board_size(get_game("mnk"), "9 9 5") == "9x9x5"


def test_fill_replaces_every_placeholder() -> None:
    args = ["./a.out", "{mark}", "--size={size}", "--budget", "{move_time}", "plain"]
    assert fill(args, mark="A", size="32x16", move_time=1.0) == [
        "./a.out",
        "A",
        "--size=32x16",
        "--budget",
        "1",
        "plain",
    ]


def test_fill_gives_seed_and_move_time_in_ms_and_keeps_escapes_and_shell_braces() -> None:
    args = ["--seed={seed}", "{move_time_ms}", "{{seed}}", "${HOME}", "{a,b}", "{unknown}"]
    assert fill(args, mark="X", move_time=0.5, seed=42) == [
        "--seed=42",
        "500",
        "{seed}",
        "${HOME}",
        "{a,b}",
        "{unknown}",  # refused where the entry is loaded; the worker never guesses
    ]


def test_game_seeds_are_stable_per_game_and_fit_a_c_int() -> None:
    seeds = [game_seed(1998, n) for n in (1, 2, 3)]
    assert seeds == [game_seed(1998, n) for n in (1, 2, 3)]  # a rerun gets the same ones
    assert len(set(seeds)) == 3 and all(0 <= s < 2**31 for s in seeds)
    assert game_seed(1999, 1) != seeds[0]


def test_unknown_and_misplaced_placeholders_are_named() -> None:
    assert run_arg_problems("--size={size}x{seed}{mark}{move_time}{move_time_ms}") == []
    (problem,) = run_arg_problems("--seed={sed}")
    assert problem.startswith("unknown placeholder {sed} (run arguments know {mark}, {seed}")
    assert build_problems("make SIZE={size} BUDGET={move_time_ms} CC=${CC} && awk '{{print}}'") == []
    (seed,) = build_problems("make SEED={seed}")
    assert "{seed} is per game" in seed and "not in build" in seed
    (unknown,) = build_problems("make N={board}")
    assert "unknown placeholder {board}" in unknown


def test_a_build_command_gets_the_contest_level_values() -> None:
    params = ContestParams("9x9x5", 0.8)
    assert fill_build("BOARD={size} BUDGET_MS={move_time_ms} T={move_time} make", params) == (
        "BOARD=9x9x5 BUDGET_MS=800 T=0.8 make"
    )
