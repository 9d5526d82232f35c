"""Build the sample entries into scratch copies, run single moves, and play whole games.

Single moves (``run_move``) start an entry with ``subprocess`` in a private
copy of its directory (the build output never lands in the source tree) and
hand it a position written by the test, to check what the entry answers.
Whole games go through ``bench.strength.play_game``, i.e. the executor every
worker runs: the real artifact cache, host (``sandbox: none``) and protocol
adapters (``workers.protocols``), judged by the referee loop.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

from bench.strength import ENTRIES, Contestant, entry_dirs, play_game
from runner.domain.match_values import GameRecord, Limits, VerdictKind
from runner.domain.entries import load_entry
from runner.domain.games import get_game
from workers.protocols import GomocupProtocol
from workers.protocols.base import Seat
from workers.artifacts import ArtifactCache, BuildFailed, local_fetch
from workers.cache_paths import user_cache
from workers.sandbox import PlainHostFactory

__all__ = ["ENTRIES", "entry_dirs"]

#: a hang guard, not a speed check: a 20x20 look-ahead move on a machine loaded by other tests
#: takes seconds (the entry's search is capped in work, not time)
MOVE_TIMEOUT_S = 60.0


class EntryFailed(AssertionError):
    """An entry crashed, timed out or printed something that is not a move."""


@dataclass(frozen=True)
class Player:
    """One playable entry (or variant): where to run it and its argv, and how a match names it."""

    name: str
    cwd: Path  # the built scratch copy (single moves run here)
    argv: tuple[str, ...]
    contestant: Contestant  # the entry as the executor plays it (whole games)
    cache: Path  # the artifact cache whole games build into

    def command(self, mark: str) -> list[str]:
        return [a.replace("{mark}", mark) for a in self.argv]


#: where the sample entries are built: the artifact cache of workers.artifacts, as a worker's
#: (by digest, shared by processes, kept between runs). Each worker of each run built every C
#: entry again for its single moves (46 gcc runs in make test-fast); whole games build here too.
ARTIFACTS = user_cache() / "test-artifacts"


def build_copy(entry_dir: Path, dest_root: Path) -> Path:
    """Copy an entry directory, built, under ``dest_root``."""
    dest = dest_root / entry_dir.parent.name / entry_dir.name
    if not dest.exists():
        ref = load_entry(entry_dir)[0].ref()  # its variants share the build
        built = ArtifactCache(ARTIFACTS, PlainHostFactory()).ensure(ref, local_fetch({ref.digest: entry_dir}))
        if isinstance(built, BuildFailed):
            raise EntryFailed(f"{entry_dir}: build failed: {built.detail}")
        shutil.copytree(built, dest)
    return dest


def players(game: str, dest_root: Path) -> dict[str, Player]:
    """Every entry and variant of ``game``, built under ``dest_root``, by name."""
    out: dict[str, Player] = {}
    for d in entry_dirs(game):
        dest = build_copy(d, dest_root)
        for spec in load_entry(d):
            contestant = Contestant(spec.ref(), spec.path)
            out[spec.name] = Player(
                spec.name, dest, (*spec.run, *spec.args), contestant, ARTIFACTS
            )
    return out


def with_args(player: Player, *args: str) -> Player:
    return replace(player, argv=(*player.argv, *args), contestant=player.contestant.with_args(*args))


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
    record: GameRecord


def play(game: str, seats: Sequence[Player], board_text: str) -> GameResult:
    """A whole game through the executor; ``EntryFailed`` when it did not end by the rules."""
    record = play_game(game, board_text, [p.contestant for p in seats], cache_root=seats[0].cache)
    if record.verdict.kind is not VerdictKind.NORMAL:
        v = record.verdict
        raise EntryFailed(f"{game}: {v.kind.value} by {v.player or 'the runner'}: {v.detail}")
    names = [p.name for p in seats]
    walls = [max((m.wall_ms / 1000.0 for m in record.moves if m.player == n), default=0.0) for n in names]
    winner = names.index(record.winner) if record.winner is not None else None
    return GameResult(winner, len(record.moves), walls, record.reason, record)


def play_boxing(seats: Sequence[Player], board: str) -> GameResult:
    return play("boxing", seats, board)


def play_pousse(seats: Sequence[Player], size: int) -> GameResult:
    return play("pousse", seats, str(size))


def play_mnk(seats: Sequence[Player], w: int, h: int, k: int) -> GameResult:
    return play("mnk", seats, f"{w} {h} {k}")


def play_gomocup(seats: Sequence[Player], size: int = 15, k: int = 5) -> GameResult:
    """A free-style gomoku game between two brains, spoken to by the real gomocup adapter."""
    return play("gomoku", seats, f"{size} {size} {k}")


#: a brain under test answers well within this (the strength of the answer is what is tested)
BRAIN_LIMITS = Limits(move_wall_s=10.0)


@contextmanager
def brain(player: Player, board_text: str = "15 15 5", seat: int = 0) -> Iterator[GomocupProtocol]:
    """``player`` as a gomocup brain in seat ``seat``, spoken to by the real adapter on a plain host
    (``begin`` has not been called yet)."""
    mark = "XO"[seat]
    with PlainHostFactory().open(player.cwd, BRAIN_LIMITS, mark) as host:
        proto = GomocupProtocol(
            get_game("gomoku"),
            host,
            player.command(mark),
            Seat(player.name, seat, mark),
            BRAIN_LIMITS,
            board_text=board_text,
        )
        try:
            yield proto
        finally:
            proto.end()
