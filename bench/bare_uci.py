"""The least a program could do to play UCI engine games: the engine benchmark's floor
(bench/engine_bench.py, issue 29 item 9).

python-chess for the rules only; the engines are spoken to over raw pipes (no asyncio engine
layer, no sandbox, no store), each engine started once and kept alive between games
(``ucinewgame`` before each), ``CONCURRENCY`` games at once on threads of their own. A game
ends where ``game: chess`` ends it (docs/engines.md, "The game"): checkmate, stalemate,
insufficient material, the third repetition, the 50-move rule, or a flag falling.

Clocks are kept as tourney's worker and fastchess keep them: the wall time from writing ``go``
to reading ``bestmove``; an engine whose answer comes later than its clock plus the margin
loses on time.
"""

from __future__ import annotations

import itertools
import os
import select
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

import chess

#: how long an engine may take to say ``uciok`` / ``readyok`` (a bench error past it)
HANDSHAKE_S = 10.0
#: how long one move may take at fixed nodes before the bench gives up on the engine
MOVE_S = 30.0
#: a game longer than this is a bench error (the 50-move rule ends every game long before)
MAX_PLIES = 1000


@dataclass(frozen=True)
class EngineLimit:
    """How engines think: fixed ``nodes`` a move, or a clock of ``base_s`` + ``inc_s`` a move."""

    nodes: int | None = None
    base_s: float | None = None
    inc_s: float = 0.0
    margin_ms: int = 50

    @property
    def clock(self) -> bool:
        return self.base_s is not None

    def tc(self) -> str:
        """The time control as fastchess and tourney configs write it (``1+0.01``)."""
        return f"{self.base_s:g}+{self.inc_s:g}"


@dataclass(frozen=True)
class GamePlan:
    """One game: its opening (a FEN) and whether the second engine has white."""

    fen: str
    swapped: bool


@dataclass(frozen=True)
class Played:
    """What one side of the benchmark played, and how long it took (wall seconds)."""

    games: int
    plies: int
    time_losses: int
    wall_s: float
    #: CPU seconds of every process of the side, and of its engines alone (where measured)
    cpu_s: float | None = None
    engine_cpu_s: float | None = None

    @property
    def plies_per_s(self) -> float:
        return self.plies / self.wall_s


class EngineError(RuntimeError):
    """An engine that did not speak UCI as the bench expects (an infrastructure failure)."""


class UciEngine:
    """One engine process over raw pipes, read with ``select`` so every wait is bounded."""

    def __init__(self, argv: Sequence[str], options: dict[str, str]) -> None:
        self.proc = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
        )
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self._stdin = self.proc.stdin
        self._fd = self.proc.stdout.fileno()
        self._buf = b""
        try:
            self.send("uci")
            self.read_until("uciok", HANDSHAKE_S)
            for name, value in options.items():
                self.send(f"setoption name {name} value {value}")
            self.new_game()
        except BaseException:
            self.close()
            raise

    def send(self, line: str) -> None:
        self._stdin.write(line.encode() + b"\n")
        self._stdin.flush()

    def _line(self, deadline: float) -> str:
        while b"\n" not in self._buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise EngineError(f"engine pid {self.proc.pid}: no answer in time")
            ready, _, _ = select.select([self._fd], [], [], left)
            if ready:
                chunk = os.read(self._fd, 65536)
                if not chunk:
                    raise EngineError(
                        f"engine pid {self.proc.pid} closed its output (exit {self.proc.poll()})"
                    )
                self._buf += chunk
        line, _, self._buf = self._buf.partition(b"\n")
        return line.decode(errors="replace").strip()

    def read_until(self, first_word: str, within_s: float) -> str:
        """The first line starting with ``first_word``; the lines before it are skipped."""
        deadline = time.monotonic() + within_s
        while True:
            line = self._line(deadline)
            if line.split(" ", 1)[0] == first_word:
                return line

    def new_game(self) -> None:
        self.send("ucinewgame")
        self.send("isready")
        self.read_until("readyok", HANDSHAKE_S)

    def best_move(self, position: str, go: str, within_s: float) -> tuple[str, float]:
        """The engine's move in ``position`` and the wall seconds from ``go`` to its answer."""
        self.send(position)
        started = time.perf_counter()
        self.send(go)
        line = self.read_until("bestmove", within_s)
        elapsed = time.perf_counter() - started
        words = line.split()
        if len(words) < 2:
            raise EngineError(f"engine pid {self.proc.pid}: {line!r} names no move")
        return words[1], elapsed

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                self.send("quit")
                self.proc.wait(timeout=2)
            except (OSError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        self._stdin.close()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def _game_over(board: chess.Board) -> bool:
    # the ends runner/domain/games/chess.py gives (draws without a claim, as engine testers do);
    # claim_draw=True would also try every legal move for a repetition, a cost no tester pays
    return board.outcome(claim_draw=False) is not None or board.is_repetition(3) or board.is_fifty_moves()


def _go(limit: EngineLimit, clocks: dict[bool, float]) -> str:
    if not limit.clock:
        return f"go nodes {limit.nodes}"
    inc_ms = round(limit.inc_s * 1000)
    wtime, btime = (max(0, round(clocks[side] * 1000)) for side in (chess.WHITE, chess.BLACK))
    go = f"go wtime {wtime} btime {btime} winc {inc_ms} binc {inc_ms}"
    return go + (f" nodes {limit.nodes}" if limit.nodes else "")


def play_game(white: UciEngine, black: UciEngine, fen: str, limit: EngineLimit) -> tuple[int, bool]:
    """One game from ``fen``: (its plies, whether it ended by a flag falling)."""
    board = chess.Board(fen)
    for engine in (white, black):
        engine.new_game()
    clocks = {chess.WHITE: limit.base_s or 0.0, chess.BLACK: limit.base_s or 0.0}
    moves: list[str] = []
    for _ in range(MAX_PLIES):
        if _game_over(board):
            return len(moves), False
        engine = white if board.turn == chess.WHITE else black
        position = f"position fen {fen}" + (" moves " + " ".join(moves) if moves else "")
        within = clocks[board.turn] + limit.margin_ms / 1000 + 1 if limit.clock else MOVE_S
        word, elapsed = engine.best_move(position, _go(limit, clocks), within)
        if limit.clock:
            clocks[board.turn] -= elapsed
            if clocks[board.turn] < -limit.margin_ms / 1000:
                return len(moves), True
            clocks[board.turn] += limit.inc_s
        move = chess.Move.from_uci(word)
        if move not in board.legal_moves:
            raise EngineError(f"illegal move {word} in {board.fen()}")
        board.push(move)
        moves.append(word)
    raise EngineError(f"a game from {fen} passed {MAX_PLIES} plies")


def play_games(
    argv: Sequence[str],
    options: dict[str, str],
    plans: Sequence[GamePlan],
    limit: EngineLimit,
    concurrency: int,
) -> Played:
    """Every planned game, ``concurrency`` at once, each thread with its own two engines."""
    started = time.perf_counter()
    next_plan = itertools.count()
    lock = threading.Lock()
    totals = {"plies": 0, "losses": 0}
    errors: list[BaseException] = []

    def worker() -> None:
        try:
            engines = (UciEngine(argv, options), UciEngine(argv, options))
        except BaseException as e:
            errors.append(e)
            return
        try:
            while not errors:
                with lock:
                    index = next(next_plan)
                if index >= len(plans):
                    return
                plan = plans[index]
                white, black = (engines[1], engines[0]) if plan.swapped else engines
                plies, lost = play_game(white, black, plan.fen, limit)
                with lock:
                    totals["plies"] += plies
                    totals["losses"] += lost
        except BaseException as e:  # handed to the caller's thread below
            errors.append(e)
        finally:
            for engine in engines:
                engine.close()

    threads = [threading.Thread(target=worker, name=f"bare-uci-{i}") for i in range(concurrency)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        raise errors[0]
    return Played(len(plans), totals["plies"], totals["losses"], time.perf_counter() - started)
