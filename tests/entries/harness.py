"""Build the sample entries into scratch copies and play them as plain processes.

The real referee loop (workers/) sandboxes entries; these helpers only need
to know that an entry plays legally and how strong it is, so they start each
entry with ``subprocess`` in a private copy of its directory (the build output
never lands in the source tree) and judge every move with the pure referees
in ``runner.games``.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import subprocess
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.entries import load_entry, read_entry_yaml
from runner.games import Boxing, Game, get_game

REPO = Path(__file__).resolve().parents[2]
ENTRIES = REPO / "entries"
MOVE_TIMEOUT_S = 10.0
BUILD_TIMEOUT_S = 120.0


class EntryFailed(AssertionError):
    """An entry crashed, timed out or printed something that is not a move."""


@dataclass(frozen=True)
class Player:
    """One playable entry (or variant): where to run it and its argv."""

    name: str
    cwd: Path
    argv: tuple[str, ...]

    def command(self, mark: str) -> list[str]:
        return [a.replace("{mark}", mark) for a in self.argv]


def build_copy(entry_dir: Path, dest_root: Path) -> Path:
    """Copy an entry directory under ``dest_root`` and run its build there."""
    dest = dest_root / entry_dir.parent.name / entry_dir.name
    if not dest.exists():
        shutil.copytree(
            entry_dir, dest, ignore=shutil.ignore_patterns("__pycache__", "a.out", "*.o", "build")
        )
        command = read_entry_yaml(entry_dir).build
        if command:
            done = subprocess.run(
                ["sh", "-c", command], cwd=dest, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S
            )
            if done.returncode != 0:
                raise EntryFailed(f"{entry_dir}: build failed: {done.stderr.strip()}")
    return dest


def entry_dirs(game: str) -> list[Path]:
    return sorted(p for p in (ENTRIES / game).iterdir() if (p / "entry.yaml").is_file())


def players(game: str, dest_root: Path) -> dict[str, Player]:
    """Every entry and variant of ``game``, built under ``dest_root``, by name."""
    out: dict[str, Player] = {}
    for d in entry_dirs(game):
        dest = build_copy(d, dest_root)
        for spec in load_entry(d):
            out[spec.name] = Player(spec.name, dest, (*spec.run, *spec.args))
    return out


def with_args(player: Player, *args: str) -> Player:
    return Player(player.name, player.cwd, (*player.argv, *args))


def run_move(player: Player, mark: str, stdin: str, timeout: float = MOVE_TIMEOUT_S) -> tuple[str, float]:
    """One per-move run: stdout and wall seconds; ``EntryFailed`` on a crash or timeout."""
    started = time.monotonic()
    try:
        done = subprocess.run(
            player.command(mark),
            cwd=player.cwd,
            input=stdin.encode("latin-1"),
            capture_output=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired as e:
        raise EntryFailed(f"{player.name}: no answer within {timeout} s") from e
    wall = time.monotonic() - started
    if done.returncode != 0:
        raise EntryFailed(
            f"{player.name}: exit {done.returncode}: {done.stderr.decode(errors='replace')[-300:]}"
        )
    return done.stdout.decode("latin-1"), wall


@dataclass
class GameResult:
    winner: int | None  # seat index, None for a draw
    moves: int
    max_wall_s: list[float]  # per seat
    reason: str


def _finish(game: Game[Any, Any], state: Any, walls: list[float]) -> GameResult:
    outcome = game.outcome(state)
    if outcome is None:
        raise EntryFailed(f"{game.name}: no result after {state.moves} moves")
    winner = outcome.winners[0] if outcome.winners else None
    return GameResult(winner, state.moves, walls, outcome.reason)


def play_boxing(seats: Sequence[Player], board: str, max_moves: int = 5000) -> GameResult:
    game = Boxing()
    state = game.new_game(board, len(seats))
    walls = [0.0] * len(seats)
    while game.outcome(state) is None and state.moves < max_moves:
        seat = game.to_move(state)
        out, wall = run_move(seats[seat], game.seat_mark(state, seat), game.arena_text(state))
        walls[seat] = max(walls[seat], wall)
        state = game.play(state, game.move_from_output(state, out))
    return _finish(game, state, walls)


def play_pousse(seats: Sequence[Player], size: int, max_moves: int = 2000) -> GameResult:
    game = get_game("pousse")
    state = game.new_game(str(size), 2)
    history: list[str] = []
    walls = [0.0, 0.0]
    while game.outcome(state) is None and len(history) < max_moves:
        seat = game.to_move(state)
        out, wall = run_move(seats[seat], "XO"[seat], "\n".join([str(size), *history]) + "\n")
        walls[seat] = max(walls[seat], wall)
        move = game.parse_move(out.strip())
        state = game.play(state, move)
        history.append(game.format_move(move))
    return _finish(game, state, walls)


def play_mnk(seats: Sequence[Player], w: int, h: int, k: int) -> GameResult:
    game = get_game("mnk")
    state = game.new_game(f"{w} {h} {k}", 2)
    history: list[str] = []
    walls = [0.0, 0.0]
    while game.outcome(state) is None:
        seat = game.to_move(state)
        out, wall = run_move(seats[seat], "XO"[seat], "\n".join([f"{w} {h} {k}", *history]) + "\n")
        walls[seat] = max(walls[seat], wall)
        move = game.parse_move(out.strip())
        state = game.play(state, move)
        history.append(game.format_move(move))
    return _finish(game, state, walls)


class Brain:
    """A Gomocup brain process, spoken to line by line with a deadline per answer."""

    def __init__(self, player: Player):
        self.player = player
        self.proc = subprocess.Popen(
            player.command("X"),
            cwd=player.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        assert self.proc.stdout is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        self.selector = selectors.DefaultSelector()
        self.selector.register(self.proc.stdout, selectors.EVENT_READ)
        self.pending = b""

    def send(self, text: str) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(text.encode())
        self.proc.stdin.flush()

    def answer(self, timeout: float = MOVE_TIMEOUT_S) -> str:
        """The next line that is not MESSAGE/DEBUG chatter."""
        deadline = time.monotonic() + timeout
        assert self.proc.stdout is not None
        while True:
            while b"\n" in self.pending:
                line, self.pending = self.pending.split(b"\n", 1)
                text = line.decode(errors="replace").strip()
                if text and not text.upper().startswith(("MESSAGE", "DEBUG")):
                    return text
            left = deadline - time.monotonic()
            if left <= 0 or not self.selector.select(left):
                raise EntryFailed(f"{self.player.name}: no answer within {timeout} s")
            chunk = self.proc.stdout.read()
            if not chunk:
                raise EntryFailed(f"{self.player.name}: closed its output (exit {self.proc.poll()})")
            self.pending += chunk

    def close(self) -> None:
        """Say END, then make sure the process is gone (it is ours: stop it by handle)."""
        with contextlib.suppress(OSError):
            self.send("END\n")
        try:
            self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.selector.close()
        assert self.proc.stdout is not None
        self.proc.stdout.close()
        if self.proc.stdin is not None:
            with contextlib.suppress(OSError):
                self.proc.stdin.close()


def play_gomocup(seats: Sequence[Player], size: int = 15, k: int = 5) -> GameResult:
    """A free-style gomoku game between two brains (moves are 0-based on the wire)."""
    game = get_game("gomoku")
    state = game.new_game(f"{size} {size} {k}", 2)
    brains = [Brain(p) for p in seats]
    walls = [0.0, 0.0]
    try:
        for b in brains:
            b.send(f"START {size}\n")
            if b.answer().upper() != "OK":
                raise EntryFailed(f"{b.player.name}: did not answer OK to START")
            b.send(f"INFO win_length {k}\nINFO timeout_turn 1000\n")
        last: tuple[int, int] | None = None
        while game.outcome(state) is None:
            seat = game.to_move(state)
            brain = brains[seat]
            brain.send("BEGIN\n" if last is None else f"TURN {last[0]},{last[1]}\n")
            started = time.monotonic()
            text = brain.answer()
            walls[seat] = max(walls[seat], time.monotonic() - started)
            x, y = (int(v) for v in text.split(","))
            state = game.play(state, game.parse_move(f"{x + 1} {y + 1}"))
            last = (x, y)
    finally:
        for b in brains:
            b.close()
    return _finish(game, state, walls)
