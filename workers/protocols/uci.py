"""The UCI protocol for chess engines (docs/engines.md), on the engine protocol base.

Per game (per match with ``restart`` off: from ``ucinewgame`` on for each later game), one
engine process:

    uci                   -> id ..., option name ... type ..., uciok   (within the handshake time)
    setoption name Hash value 16           (each option the engine announced; UCI_Chess960 for 960)
    ucinewgame / isready  -> readyok
    position startpos moves e2e4 ...      (or position fen FEN moves ...)
    go wtime W btime B winc WI binc BI [movestogo N] | go movetime MS | go nodes N | go depth N
                          -> info depth D score cp X|mate M ... / bestmove e7e5 [ponder ...]
    quit

The last ``info`` with a score before ``bestmove`` is the move's reported search.
"""

from __future__ import annotations

import logging
from typing import Any, ClassVar

from runner.domain.games.chess import Chess
from runner.domain.match_values import SearchInfo, Verdict, VerdictKind
from workers.protocols.engine import HANDSHAKE_S, Answer, EngineProtocol, Failed, MoveText, search_info

log = logging.getLogger(__name__)

#: the verdict's detail for a UCI engine in a chess960 game that announces no UCI_Chess960
CANNOT_960 = "cannot play chess960: it announces no UCI_Chess960 option"


class UciProtocol(EngineProtocol):
    name: ClassVar[str] = "uci"

    #: the options the engine announced at its handshake
    announced: set[str] = set()

    def greeting(self) -> str:
        return "uci\n"

    def handshake(self, deadline: float) -> None:
        announced: set[str] = set()

        def uciok(line: str) -> bool:
            words = line.split()
            if words[:2] == ["option", "name"] and "type" in words:
                announced.add(" ".join(words[2 : words.index("type")]))
            return words[:1] == ["uciok"]

        try:
            self.read_until(deadline, "uciok", uciok)
        except Failed as e:
            raise Failed(self._handshake_verdict(e, "uciok")) from None
        self.announced = announced
        if self._chess960 and "UCI_Chess960" not in announced:
            # it would castle the standard way in a 960 game and lose by an illegal move
            raise Failed(self.verdict(VerdictKind.BAD_OUTPUT, CANNOT_960))
        for name, value in self.settings.options.items():
            if name not in announced:
                log.warning("%s: engine announces no option %r; not set", self.seat.player, name)
                continue
            text = str(value).lower() if isinstance(value, bool) else str(value)
            self.send(f"setoption name {name} value {text}\n")
        if self._chess960:
            self.send("setoption name UCI_Chess960 value true\n")
        self.new_game(deadline)

    def new_game(self, deadline: float) -> None:
        self.send("ucinewgame\nisready\n")
        try:
            self.wait_ready(deadline, "readyok", lambda line: line.strip() == "readyok")
        except Failed as e:
            raise Failed(self._handshake_verdict(e, "readyok")) from None
        self._start = self._position_start()
        self._said: list[str] = []  # the moves of this game as sent, in UCI text
        self._scored: list[str] = []  # this move's info lines with a score, unread (``_keep_info``)

    def ask_move(self, state: Any, history: list[Any]) -> None:
        # the game's moves as text, kept from the last ask: only the new ones are written out
        # (a whole game's list on every move was a tenth of the worker's CPU a ply)
        said = self._said
        if len(said) > len(history):
            said.clear()
        said.extend(self.game.format_move(m) for m in history[len(said) :])
        position = f"position {self._start}" + (f" moves {' '.join(said)}" if said else "")
        self._scored.clear()
        self._proc().send(f"{position}\n{self._go()}\n")

    def read_answer_line(self, line: str) -> Answer | None:
        if line.startswith("info "):  # most of what an engine says: kept, read at its move
            self._keep_info(line)
            return None
        words = line.split()
        if not words:
            return None
        if words[0] == "bestmove":
            self._settle_search()
            if len(words) < 2:
                return MoveText("")  # parse_move says it is no move
            return MoveText(words[1])
        if words[0] == "info":
            self._keep_info(line)
            return None
        self.note(line)
        return None

    def _keep_info(self, line: str) -> None:
        """An ``info`` line that may hold the move's search (a score), kept unread: only the
        last one that says something counts, so the lines are read at ``bestmove`` from the
        last back (stockfish prints a dozen a move at 2,000 nodes)."""
        if " score " in line and "string" not in line.split(maxsplit=2)[:2]:
            self._scored.append(line)

    def _settle_search(self) -> None:
        """The move's search: the last kept line with a score of the principal line."""
        for line in reversed(self._scored):
            found = _search_of(line.split())
            if found is not None:
                self.search = found
                break
        self._scored.clear()

    # -- inside ---------------------------------------------------------------------------------
    @property
    def _chess960(self) -> bool:
        return isinstance(self.game, Chess) and self.game.chess960

    def _position_start(self) -> str:
        if not isinstance(self.game, Chess):
            return "startpos"
        fen = self.game.start_fen(self.board_text)
        if fen is None and not self._chess960:
            return "startpos"
        return f"fen {fen or self.game.board_of(self.board_text).fen()}"

    def _go(self) -> str:
        parts = ["go"]
        own = self.settings
        white, black = self.clocks[0], self.clocks[1]
        if own.tc is not None:
            parts += [f"wtime {max(1, int(white.left_ms))}", f"btime {max(1, int(black.left_ms))}"]
            for side, clock in (("winc", white), ("binc", black)):
                tc = clock.settings.tc
                if tc is not None and tc.inc_s:
                    parts.append(f"{side} {int(tc.inc_s * 1000)}")
            to_go = self.clocks[self.seat.index].moves_to_go
            if to_go is not None:
                parts.append(f"movestogo {to_go}")
        if own.st_s is not None:
            parts.append(f"movetime {int(own.st_s * 1000)}")
        if own.nodes is not None:
            parts.append(f"nodes {own.nodes}")
        if own.depth is not None:
            parts.append(f"depth {own.depth}")
        return " ".join(parts)

    def _handshake_verdict(self, e: Failed, waiting_for: str) -> Verdict:
        if e.verdict.kind is VerdictKind.TIMEOUT:
            return self.verdict(VerdictKind.TIMEOUT, f"no {waiting_for} within {HANDSHAKE_S:g} s")
        return e.verdict


def _search_of(words: list[str]) -> SearchInfo | None:
    """The search an ``info`` line reports (its score and depth), None for one that reports
    no score, or another line than the principal one (``multipv`` 2 and on)."""
    if "multipv" in words:
        i = words.index("multipv")
        if i + 1 < len(words) and words[i + 1] != "1":
            return None  # only the principal line is the engine's opinion
    depth = _int_after(words, "depth")
    cp, mate = None, None
    if "score" in words:
        i = words.index("score")
        kind, value = [*words[i + 1 : i + 3], "", ""][:2]
        number = _to_int(value)
        if kind == "cp":
            cp = number
        elif kind == "mate":
            mate = number
    if cp is None and mate is None:
        return None  # depth-only lines ("info depth 5") say nothing of the score
    return search_info(cp, mate, depth)


def _to_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _int_after(words: list[str], key: str) -> int | None:
    if key in words:
        i = words.index(key)
        if i + 1 < len(words):
            return _to_int(words[i + 1])
    return None
