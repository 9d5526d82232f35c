"""TRYST'98 (seed 004): the look-ahead plays a fixed foresight, bounded by work (positions
examined), never by a clock, so the same position gives the same move however busy the machine is."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from runner.config import load_config
from runner.domain.placeholders import fill
from tests.entries.harness import build_copy

ROOT = Path(__file__).resolve().parents[2]


def test_tryst98_lookahead_budgets_work_not_time(tmp_path: Path) -> None:
    config = load_config(ROOT / "configs" / "tryst98.yaml")
    spec = config.entry_specs()["lookahead"]
    argv = fill([*spec.run, *spec.args], mark="X", move_time=config.limits_obj.move_wall_s, seed=1)
    assert argv[argv.index("--max-work") + 1] == "5000000"
    assert not any("move_time" in a or "budget-ms" in a for a in [*spec.run, *spec.args])
    built = build_copy(spec.path, tmp_path)
    position = b"20 20 5\n10 10\n11 11\n"

    def move(*extra: str) -> subprocess.CompletedProcess[bytes]:
        done = subprocess.run(
            [*argv, "--foresight", "4", "--max-work", "200000", *extra],
            cwd=built,
            input=position,
            capture_output=True,
            timeout=60,
        )
        assert done.returncode == 0 and re.fullmatch(rb"\d+ \d+\n", done.stdout), done
        return done

    # foresight 4 on 20x20 cannot finish in 200,000 positions: the budget stops it, and says so
    first = move()
    assert re.search(
        r"lookahead: the work budget \(--max-work 200000 positions\) cut the search: played foresight [1-3] of 4",
        first.stderr.decode(),
    ), first.stderr
    # a count, not a clock: the same move and the same line again, and the clock options of
    # earlier versions (a 1 ms budget cut every search at once) change nothing
    for again in (move(), move("--move-time-ms", "1"), move("--budget-ms", "1")):
        assert (again.stdout, again.stderr) == (first.stdout, first.stderr)
    # the shipped config's limits leave the work budget room on a busy machine
    assert config.limits_obj.move_wall_s >= 10 and (config.limits_obj.move_cpu_s or 0) >= 5
    assert spec.deterministic


def nearly_full_20x20() -> tuple[bytes, set[tuple[int, int]]]:
    """A 20x20 board, 20 in a row to win, 396 stones down and no line complete (each even row is
    listed from x=2, so no column is one player's), and its 4 empty cells."""
    moves = []
    for y in range(1, 21):
        xs = list(range(1, 21)) if y % 2 else [*range(2, 21), 1]
        moves += [(x, y) for x in (xs if y < 20 else xs[:16])]
    empty = {(x, y) for x in range(1, 21) for y in range(1, 21)} - set(moves)
    text = "20 20 20\n" + "".join(f"{x} {y}\n" for x, y in moves)
    return text.encode(), empty


def test_lookahead_honours_any_foresight_the_seed_allows_and_refuses_the_rest(tmp_path: Path) -> None:
    """Seed 004: "Level of foresight = mm ( 1.. nnx * nny / 2 )": 200 on 20x20 is played (it used
    to stop at 60, silently); 0 or 513 (beyond any board) is refused with a message; 201 on 20x20
    plays 200, that board's most, and says so."""
    spec = load_config(ROOT / "configs" / "tryst98.yaml").entry_specs()["lookahead"]
    built = build_copy(spec.path, tmp_path)
    position, empty = nearly_full_20x20()
    argv = ["./a.out", "--verbose", "1"]
    done = subprocess.run(
        [*argv, "--foresight", "200"], cwd=built, input=position, capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    x, y = map(int, done.stdout.split())
    assert (x, y) in empty
    levels = re.findall(rb"^foresight (\d+):", done.stderr, re.M)
    assert [int(f) for f in levels] == list(range(1, 201)), done.stderr[-300:]
    assert b"cut the search" not in done.stderr

    for out_of_range in (0, 513):  # no board allows it
        refused = subprocess.run(
            [*argv, "--foresight", str(out_of_range)],
            cwd=built,
            input=position,
            capture_output=True,
            timeout=30,
        )
        assert refused.returncode == 2 and refused.stdout == b""
        assert b"is outside 1..512 (seed 004: 1..nnx*nny/2)" in refused.stderr, refused.stderr
    # above this board's most: that most is played (it searches the whole board), and said
    deeper = subprocess.run(
        [*argv, "--foresight", "201"], cwd=built, input=position, capture_output=True, timeout=30
    )
    assert deeper.returncode == 0 and tuple(map(int, deeper.stdout.split())) in empty
    assert (
        b"lookahead: foresight 201 is above 200, the most this 20x20 board allows "
        b"(seed 004: 1..nnx*nny/2): played foresight 200" in deeper.stderr
    )
    assert re.findall(rb"^foresight (\d+):", deeper.stderr, re.M)[-1] == b"200"
