"""What a UCI engine's move carries of its search (docs/engines.md, "UCI"): the last ``info``
line with a score of the principal line before ``bestmove``, read from a scripted engine."""

from __future__ import annotations

from pathlib import Path

from runner.domain.games.chess import Chess
from runner.domain.match_values import Limits, SearchInfo
from workers.protocols.base import Seat
from workers.protocols.uci import UciProtocol
from workers.sandbox.base import EntryHost, InteractiveProcess, RunOutcome


class ScriptedEngine(InteractiveProcess):
    """Answers the handshake, then each ``go`` with the next scripted block of lines."""

    def __init__(self, moves: list[list[str]]):
        self.moves, self.out, self.sent = moves, list[str](), list[str]()

    def send(self, text: str) -> None:
        self.sent += text.splitlines()
        for line in text.splitlines():
            if line == "uci":
                self.out += ["id name scripted", "uciok"]
            elif line == "isready":
                self.out.append("readyok")
            elif line.startswith("go"):
                self.out += self.moves.pop(0)

    def read_line(self, timeout_s: float, *, pause: bool = True) -> str | RunOutcome:
        return self.out.pop(0)

    @property
    def cpu_ms(self) -> float:
        return 0.0

    def close(self) -> None:
        return None


class OneEngineHost(EntryHost):
    def __init__(self, engine: ScriptedEngine):
        self.engine, self.workdir = engine, Path(".")

    def run(self, argv: list[str], stdin: bytes, limits: Limits) -> RunOutcome:
        raise AssertionError("an engine is spawned, never run")

    def spawn(self, argv: list[str], limits: Limits) -> InteractiveProcess:
        return self.engine

    def close(self) -> None:
        return None


def searches(moves: list[list[str]]) -> list[SearchInfo | None]:
    game = Chess()
    engine = ScriptedEngine(moves)
    host = OneEngineHost(engine)
    proto = UciProtocol(game, host, ["engine"], Seat("e", 0, "w"), Limits(), board_text="startpos")
    state = game.new_game("startpos", 2)
    assert proto.begin(state) is None
    found = []
    history: list[object] = []
    for _ in range(len(moves)):
        reply = proto.request_move(state, history)
        assert reply.verdict is None and reply.move is not None
        found.append(reply.search)
        state = game.play(state, reply.move)
        history.append(reply.move)
    return found


def test_the_last_scored_line_of_the_principal_variation_is_the_moves_search() -> None:
    first = [
        "info depth 1 seldepth 1 multipv 1 score cp 20 nodes 20 pv e2e4",
        "info depth 2 seldepth 2 multipv 1 score cp 35 nodes 80 pv e2e4 e7e5",
        "info depth 2 seldepth 2 multipv 2 score cp 10 nodes 80 pv d2d4",  # not the principal line
        "info depth 3 currmove e2e4 currmovenumber 1",  # no score
        "info string NNUE evaluation using nn.nnue enabled score 99",  # a string, whatever it says
        "bestmove e2e4 ponder e7e5",
    ]
    second = ["info depth 4 score mate -3 nodes 900 pv e7e5", "bestmove e7e5"]
    third = ["bestmove g1f3"]  # no info at all: no search, not the last move's
    assert searches([first, second, third]) == [SearchInfo(35, None, 2), SearchInfo(None, -3, 4), None]


def test_a_malformed_last_score_leaves_the_one_before() -> None:
    lines = ["info depth 5 score cp 12 pv e2e4", "info depth 6 score cp oops", "bestmove e2e4"]
    assert searches([lines]) == [SearchInfo(12, None, 5)]
