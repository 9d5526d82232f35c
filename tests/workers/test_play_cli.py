"""`tourney play` end to end, as a user runs it (a real subprocess, sandbox none)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from tests import forked_cli
from workers.play import board_from_size, seat_orders
from workers.sandbox import HostError, host_factory

from .conftest import fixture


def tourney(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOURNEY_WORK_DIR": str(tmp_path / "cache")}
    # a generous move time first (a test's own --move-time comes later and wins): the default 1 s
    # is less than a Python entry may need to start on a loaded machine
    play = [*forked_cli.TOURNEY, "play", "--move-time", "10", *args]
    return forked_cli.run(play, capture_output=True, text=True, env=env, timeout=120)


def test_play_json_prints_one_object_with_every_game(tmp_path: Path) -> None:
    p = tourney(
        tmp_path,
        "--game",
        "mnk",
        "--size",
        "3x3x3",
        "--sandbox",
        "none",
        "--games",
        "3",
        "--json",
        str(fixture("mnk/first_empty")),
        str(fixture("gomocup/brain")),
    )
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)  # nothing else on stdout
    assert set(doc) == {"games"} and len(doc["games"]) == 3
    assert [g["order"] for g in doc["games"]] == [
        ["first-empty", "brain"],
        ["brain", "first-empty"],
        ["first-empty", "brain"],
    ]
    for g in doc["games"]:
        assert g["winner"] in ("first-empty", "brain", None)
        assert set(g["scores"]) == {"first-empty", "brain"}
        assert set(g["verdict"]) == {"kind", "player", "detail"} and g["verdict"]["kind"] == "normal"
        assert g["moves"] and all({"player", "move", "wall_ms"} <= set(m) for m in g["moves"])
        assert g["moves"][0]["player"] == g["order"][0]


def test_play_json_reports_an_entry_failure_as_a_verdict(tmp_path: Path) -> None:
    p = tourney(
        tmp_path,
        "--game",
        "boxing",
        "--size",
        "4x2",
        "--sandbox",
        "none",
        "--json",
        "--move-time",
        "0.5",
        str(fixture("boxing/native")),
        str(fixture("boxing/sleeper")),  # native: fast even on a busy machine
    )
    assert p.returncode == 0, p.stderr
    (g,) = json.loads(p.stdout)["games"]
    assert g["winner"] == "native"
    assert g["verdict"] == {
        "kind": "timeout",
        "player": "sleeper",
        "detail": "wall-clock limit 0.5 s exceeded",  # the same words as in the sandbox
    }


def test_play_a_failed_build_is_a_verdict_not_a_traceback(tmp_path: Path) -> None:
    p = tourney(
        tmp_path, "--game", "boxing", "--size", "4x2", "--sandbox", "none", "--quiet", "--games", "2",
        str(fixture("boxing/native")), str(fixture("boxing/broken_build")),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    assert "Traceback" not in p.stdout + p.stderr
    lines = p.stdout.splitlines()
    assert len(lines) == 3 and all("build_failed by broken-build" in ln for ln in lines[:2]), p.stdout
    assert "broken-build: build failed: exit code 1" in p.stderr


def test_play_prints_positions_moves_and_the_result(tmp_path: Path) -> None:
    p = tourney(
        tmp_path,
        "--game",
        "pousse",
        "--size",
        "4",
        "--sandbox",
        "none",
        str(fixture("pousse/t1")),
        str(fixture("pousse/t1")),
    )
    assert p.returncode == 0, p.stderr
    out = p.stdout
    assert "== game 1/1: t1 (X), t1#2 (O)" in out
    assert "t1 (X) plays T1" in out and "+-+-+-+-+" in out
    assert "game 1: t1" in out and "wins" in out


def test_play_quiet_prints_results_only(tmp_path: Path) -> None:
    p = tourney(
        tmp_path,
        "--game",
        "boxing",
        "--size",
        "3x1",
        "--sandbox",
        "none",
        "--quiet",
        "--games",
        "2",
        str(fixture("boxing/first_fit")),
        str(fixture("boxing/native")),
    )
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert [ln.split(":")[0] for ln in lines if ln.startswith("game ")] == ["game 1", "game 2"]
    assert "plays" not in p.stdout and "---" not in p.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--game", "pousse", "--size", "99"], "pousse board size"),
        (["--game", "mnk", "--size", "7x7"], "W H K"),
        (["--game", "checkers"], "unknown game"),
    ],
)
def test_play_bad_arguments_exit_2_with_a_message(tmp_path: Path, args: list[str], needle: str) -> None:
    entry = str(fixture("mnk/first_empty"))
    p = tourney(tmp_path, *args, "--sandbox", "none", entry, entry)
    assert p.returncode == 2 and needle in p.stderr, p.stderr


def test_play_an_entry_for_another_game_exits_2(tmp_path: Path) -> None:
    p = tourney(
        tmp_path,
        "--game",
        "mnk",
        "--sandbox",
        "none",
        str(fixture("mnk/first_empty")),
        str(fixture("pousse/t1")),
    )
    assert p.returncode == 2 and "cannot play mnk" in p.stderr


def test_play_defaults_to_the_bwrap_sandbox_or_says_why_it_cannot(tmp_path: Path) -> None:
    entry = str(fixture("mnk/first_empty"))
    p = tourney(tmp_path, "--game", "mnk", "--json", entry, entry)
    try:
        host_factory("bwrap")
    except HostError as e:
        assert p.returncode == 3 and str(e) in p.stderr
    else:
        assert p.returncode == 0, p.stderr
        assert json.loads(p.stdout)["games"][0]["verdict"]["kind"] == "normal"


@pytest.mark.parametrize(
    ("game", "size", "board"),
    [
        ("pousse", "6", "6"),
        ("mnk", "7x7x4", "7 7 4"),
        ("mnk", "7 7 4", "7 7 4"),
        ("gomoku", "15", "15 15 5"),
        ("boxing", "3x2", "---\n---\n"),
    ],
)
def test_board_from_size(game: str, size: str, board: str) -> None:
    assert board_from_size(game, size) == board


def test_seats_rotate_between_games() -> None:
    assert seat_orders(["a", "b"], 3) == [["a", "b"], ["b", "a"], ["a", "b"]]
    assert seat_orders(["a", "b", "c"], 3) == [["a", "b", "c"], ["b", "c", "a"], ["c", "a", "b"]]


STRICT = """\
import sys

# plays only if the contest's parameters reached its argv through {size} and {move_time}
if sys.argv[1:] != ["--size", "3x3x3", "--move-time", "5"]:
    sys.exit(3)
lines = sys.stdin.read().split("\\n")
w, h, _ = (int(v) for v in lines[0].split())
taken = {tuple(int(v) for v in ln.split()) for ln in lines[1:] if ln.strip()}
x, y = next((x, y) for y in range(1, h + 1) for x in range(1, w + 1) if (x, y) not in taken)
print(x, y)
"""


def test_play_a_named_variant_that_learns_size_and_move_time(tmp_path: Path) -> None:
    entry = tmp_path / "strict"
    entry.mkdir()
    (entry / "main.py").write_text(STRICT)
    (entry / "entry.yaml").write_text(
        "name: plain\ngame: mnk\nprotocol: mnk\nrun: [python3, main.py]\n"
        'variants:\n  strict: {args: ["--size", "{size}", "--move-time", "{move_time}"]}\n'
    )
    p = tourney(
        tmp_path, "--game", "mnk", "--size", "3x3x3", "--sandbox", "none", "--json", "--move-time", "5",
        f"{entry}:strict", str(fixture("mnk/first_empty")),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    (g,) = json.loads(p.stdout)["games"]
    assert g["order"] == ["strict", "first-empty"]
    assert g["verdict"]["kind"] == "normal", g["verdict"]
    wrong = tourney(tmp_path, "--game", "mnk", "--sandbox", "none", f"{entry}:nope", str(entry))
    assert wrong.returncode != 0 and "no variant 'nope'; it has plain, strict" in wrong.stderr


SEEDED = """\
import random
import sys

# a player whose every choice comes from its {seed}: it says which seed it got on stderr
seed = int(sys.argv[1])
print(f"seed {seed}", file=sys.stderr)
lines = sys.stdin.read().split("\\n")
w, h, _ = (int(v) for v in lines[0].split())
taken = {tuple(int(v) for v in ln.split()) for ln in lines[1:] if ln.strip()}
free = [(x, y) for y in range(1, h + 1) for x in range(1, w + 1) if (x, y) not in taken]
x, y = random.Random(seed * 1000 + len(taken)).choice(free)
print(x, y)
"""


def _seeded_entry(tmp_path: Path) -> Path:
    entry = tmp_path / "seeded"
    entry.mkdir(exist_ok=True)
    (entry / "main.py").write_text(SEEDED)
    (entry / "entry.yaml").write_text(
        'name: seeded\ngame: mnk\nprotocol: mnk\nrun: [python3, main.py, "{seed}"]\n'
    )
    return entry


@pytest.mark.integration  # three `tourney play` runs: the fast lane's slowest test
def test_seed_placeholder_replays_a_match_move_for_move(tmp_path: Path) -> None:
    from runner.domain.placeholders import game_seed

    entry = _seeded_entry(tmp_path)

    def play(seed: int) -> list[dict[str, object]]:
        p = tourney(
            tmp_path, "--game", "mnk", "--size", "3x3x3", "--sandbox", "none", "--json", "--games", "2",
            "--seed", str(seed), "--move-time", "5", str(entry), f"{entry}",
        )  # fmt: skip
        assert p.returncode == 0, p.stderr
        games: list[dict[str, object]] = json.loads(p.stdout)["games"]
        return games

    first, again, other = play(5), play(5), play(6)
    moves = [[m["move"] for m in g["moves"]] for g in first]  # type: ignore[attr-defined]
    assert moves == [[m["move"] for m in g["moves"]] for g in again]  # type: ignore[attr-defined]
    assert moves != [[m["move"] for m in g["moves"]] for g in other]  # type: ignore[attr-defined]
    # each game has its own seed (both seats get it), the same on every play; what the entry
    # wrote on stderr is kept with the game, once per distinct line with its count
    for k, g in enumerate(first, start=1):
        stderr = g["stderr"]
        assert isinstance(stderr, dict) and set(stderr) == {"seeded", "seeded#2"}
        for lines in stderr.values():
            assert len(lines) == 1 and lines[0].startswith(f"seed {game_seed(5, k)} (x"), lines
    assert game_seed(5, 1) != game_seed(5, 2)


def test_a_budget_cut_of_the_tryst98_lookahead_reaches_the_result(tmp_path: Path) -> None:
    """The look-ahead's work budget (20,000 positions in its lookahead-quick variant) stops
    foresight 3 on 20x20; the line it writes on stderr is in the game's record, not lost with
    the process."""
    root = Path(__file__).resolve().parents[2] / "entries" / "mnk"
    p = tourney(
        tmp_path, "--game", "mnk", "--size", "20x20x3", "--sandbox", "none", "--json", "--move-time", "5",
        f"{root / 'lookahead'}:lookahead-quick", str(root / "greedy"),
    )  # fmt: skip
    assert p.returncode == 0, p.stderr
    (g,) = json.loads(p.stdout)["games"]
    lines = g.get("stderr", {}).get("lookahead-quick", [])
    assert any(
        "lookahead: the work budget (--max-work 20000 positions) cut the search: played foresight" in ln
        for ln in lines
    ), g


def test_play_prints_what_an_entry_wrote_on_stderr_after_the_game() -> None:
    import io

    from runner.domain.games import get_game
    from runner.domain.match_values import GameRecord, Verdict, VerdictKind
    from workers.play import _Printer

    out = io.StringIO()
    record = GameRecord(
        ["a", "b"], "a", {"a": 1, "b": 0}, Verdict(VerdictKind.NORMAL, None, "3 in a row"), [],
        "3 in a row", stderr={"a": ["lookahead: the work budget cut the search (x2)", "\x1b[31m"]},
    )  # fmt: skip
    _Printer(out, positions=False, total=1).game_finished(1, record, get_game("mnk"), None)
    assert out.getvalue().splitlines()[1:] == [
        "  a wrote on stderr: lookahead: the work budget cut the search (x2)",
        "  a wrote on stderr: \\x1b[31m",  # entry text stays inert on the terminal
    ]
