"""The xboard (CECP, protocol 2) protocol for chess engines (docs/engines.md), on the engine base.

Per game (per match with ``restart`` off: from ``new`` on for each later game), one engine
process:

    xboard / protover 2   -> feature ... done=1     (none within 2 s: a protocol-1 engine)
    new / variant fischerandom / force / post / easy
    level 40 1 0 | level 0 0:10 0.1 | st 1 ; sd N ; nps N (nodes: with st 1) ;
    memory MB / cores N / option NAME=VALUE
    setboard FEN          (a start that is not the standard one; needs feature setboard=1)
    ping N                -> pong N                  (feature ping=1: the game's setup done)
    [force / usermove e2e4 ...] time CS / otim CS / go   (its first move, from force mode)
    time CS / otim CS / usermove e7e5                    (later moves: it is in play mode)
                          -> "ply score time nodes pv" lines, then: move e2e4 | resign
    quit

Thinking lines (``post``) give the move's reported search: score in centipawns (a score
of 100000+N or more is read as a mate), depth in plies.
"""

from __future__ import annotations

import contextlib
import time
from typing import Any, ClassVar

import chess

from runner.domain.games.chess import Chess, ChessState
from runner.domain.match_values import VerdictKind
from workers.protocols.engine import (
    HANDSHAKE_S,
    Answer,
    EngineProtocol,
    Failed,
    MoveText,
    Refusal,
    search_info,
)
from workers.sandbox.base import RunOutcome

#: a protocol-1 engine sends no features: the GUI waits this long for them (the protocol's own rule)
FEATURE_WAIT_S = 2.0
#: xboard scores at or beyond this are mates (the WinBoard convention: 100000 + moves)
MATE_SCORE = 100_000


class XboardProtocol(EngineProtocol):
    name: ClassVar[str] = "xboard"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.features: dict[str, str] = {}
        self._seen = 0  # moves of the history the engine knows
        self._playing = False  # in play mode (after its first go), not force mode
        self._board: chess.Board | None = None  # the position it is thinking on
        self._pings = 0  # ping numbers sent: each game's setup ends with a new one

    def greeting(self) -> str:
        return "xboard\nprotover 2\n"

    def handshake(self, deadline: float) -> None:
        proc = self._proc()
        # a protocol-1 engine sends no features: after FEATURE_WAIT_S of none, go on without
        # (a wait, not a deadline: the engine is left running)
        wait_until = min(deadline, self._launched + FEATURE_WAIT_S)
        while self.features.get("done") != "1":
            line = proc.wait_line(max(0.0, wait_until - time.monotonic()))
            if line is None and not self.features:
                break
            if line is None:
                detail = f"no feature done=1 within {HANDSHAKE_S:g} s"
                raise Failed(self.verdict(VerdictKind.TIMEOUT, detail))
            if isinstance(line, RunOutcome):
                raise Failed(self._ended(line, "its features"))
            if self._feature(line):
                wait_until = deadline  # protocol 2: wait for done=1 up to the handshake's end
            else:
                self.note(line)
        why = self.cannot_play()
        if why is not None:
            raise Failed(self.verdict(VerdictKind.BAD_OUTPUT, why))
        self.new_game(deadline)

    def cannot_play(self) -> str | None:
        """What the game asks that the engine's features say it cannot do, in one line."""
        if isinstance(self.game, Chess) and self.game.chess960:
            variants = self.features.get("variants", "").split(",")
            if "fischerandom" not in variants:
                return "cannot play chess960: its features name no variant fischerandom"
        if self.settings.nodes is not None and self.features.get("nps") != "1":
            # xboard has no node count: nps N with st 1 is one only to an engine that says it
            # counts nodes as time (feature nps=1); to others it is a clock they lose on
            return f"cannot search nodes={self.settings.nodes}: it declares no feature nps=1"
        return None

    def new_game(self, deadline: float) -> None:
        self._seen, self._playing, self._board = 0, False, None
        self.send("".join(self._setup()))
        if self.features.get("ping") == "1":
            pong = ["pong", str(self._pings)]
            try:
                self.wait_ready(deadline, " ".join(pong), lambda line: line.split()[:2] == pong)
            except Failed as e:
                if e.verdict.kind is VerdictKind.TIMEOUT:
                    detail = f"no pong within {HANDSHAKE_S:g} s"
                    raise Failed(self.verdict(VerdictKind.TIMEOUT, detail)) from None
                raise

    def ask_move(self, state: Any, history: list[Any]) -> None:
        new = history[self._seen :]
        lines = []
        if not self._playing or len(new) != 1:
            lines.append("force\n")
            lines += [self._usermove(m) for m in new]
            lines += self._clocks()
            lines.append("go\n")
        else:  # in play mode the opponent's move starts its search: clocks first
            lines += self._clocks()
            lines.append(self._usermove(new[0]))
        self._board = state.board if isinstance(state, ChessState) else None
        self._seen = len(history) + 1  # once it answers, it knows its own move too
        self._playing = True
        self._proc().send("".join(lines))

    def read_answer_line(self, line: str) -> Answer | None:
        words = line.split()
        if not words:
            return None
        if words[0] == "move" and len(words) >= 2:
            return MoveText(self._as_uci(words[1]))
        if words[0] == "resign":
            return Refusal(VerdictKind.RESIGN, "resigned")
        if words[0] in ("Illegal", "Error") or line.startswith("Illegal move"):
            return Refusal(VerdictKind.BAD_OUTPUT, f"refused the game: {line[:80]}")
        if words[0].isdigit() and len(words) >= 4:
            self._thinking(words)
            return None
        self.note(line)
        return None

    # -- inside ---------------------------------------------------------------------------------
    def _feature(self, line: str) -> bool:
        """Take a ``feature`` line's items (accepting each); False for any other line."""
        words = line.split(maxsplit=1)
        if words[:1] != ["feature"]:
            return False
        accepted = []
        for item in _feature_items(words[1] if len(words) > 1 else ""):
            key, _, value = item.partition("=")
            self.features[key] = value.strip('"')
            accepted.append(f"accepted {key}\n")
        self.send("".join(accepted))
        return True

    def _setup(self) -> list[str]:
        s = self.settings
        out = ["new\n"]
        if isinstance(self.game, Chess) and self.game.chess960:
            out.append("variant fischerandom\n")
        out += ["force\n", "post\n", "easy\n"]
        if s.tc is not None:
            minutes, seconds = divmod(round(s.tc.base_s), 60)
            base = f"{minutes}" if not seconds else f"{minutes}:{seconds:02d}"
            out.append(f"level {s.tc.moves or 0} {base} {s.tc.inc_s:g}\n")
        if s.st_s is not None:  # whole seconds (EngineSettings.refusal refuses the rest)
            out.append(f"st {max(1, int(s.st_s))}\n")
        if s.nodes is not None:  # to an engine with feature nps=1 only (``cannot_play``)
            # xboard has no node limit: with nps N an engine counts N nodes as one second, so
            # nodes per move are nps N and st 1 (where no other clock is set)
            out.append(f"nps {s.nodes}\n")
            if not s.timed:
                out.append("st 1\n")
        if s.depth is not None:
            out.append(f"sd {s.depth}\n")
        for name, value in s.options.items():
            if name == "Hash" and self.features.get("memory") == "1":
                out.append(f"memory {value}\n")
            elif name == "Threads" and self.features.get("smp") == "1":
                out.append(f"cores {value}\n")
            else:
                out.append(f"option {name}={value}\n")
        if isinstance(self.game, Chess):
            fen = self.game.start_fen(self.board_text)
            if fen is not None:
                if self.features.get("setboard") != "1":
                    raise Failed(
                        self.verdict(VerdictKind.BAD_OUTPUT, "cannot start from a FEN (no setboard)")
                    )
                out.append(f"setboard {fen}\n")
        if self.features.get("ping") == "1":
            self._pings += 1
            out.append(f"ping {self._pings}\n")
        return out

    def _as_uci(self, text: str) -> str:
        """An engine's move as UCI text: xboard engines may answer in SAN (``O-O``, ``Nf3``)."""
        board = self._board
        if board is None:
            return text
        with contextlib.suppress(ValueError):
            return board.uci(board.parse_uci(text))
        with contextlib.suppress(ValueError):
            return board.uci(board.parse_san(text))
        return text  # parse_move or the rules say what is wrong with it

    def _clocks(self) -> list[str]:
        if self.settings.tc is None:
            return []
        own, other = self.clocks[self.seat.index], self.clocks[1 - self.seat.index]
        return [f"time {max(1, int(own.left_ms / 10))}\n", f"otim {max(1, int(other.left_ms / 10))}\n"]

    def _usermove(self, move: Any) -> str:
        text = self.game.format_move(move)
        return f"usermove {text}\n" if self.features.get("usermove") == "1" else f"{text}\n"

    def _thinking(self, words: list[str]) -> None:
        depth, score = _to_int(words[0]), _to_int(words[1])
        if score is None:
            return
        if abs(score) >= MATE_SCORE:
            mate = abs(score) - MATE_SCORE
            self.search = search_info(None, mate if score > 0 else -mate, depth)
        else:
            self.search = search_info(score, None, depth)


def _feature_items(text: str) -> list[str]:
    """``a=1 b="x y" c=2`` -> ``['a=1', 'b="x y"', 'c=2']`` (quoted values may hold spaces)."""
    items, current, quoted = [], "", False
    for ch in text:
        if ch == '"':
            quoted = not quoted
        if ch == " " and not quoted:
            if current:
                items.append(current)
            current = ""
            continue
        current += ch
    if current:
        items.append(current)
    return items


def _to_int(text: str) -> int | None:
    try:
        return int(text.rstrip(".&?"))
    except ValueError:
        return None
