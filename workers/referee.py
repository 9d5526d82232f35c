"""A game whose rules are a program in any language: a referee spoken to in JSON lines.

Name it like any game from outside the package, with the program's
directory and argv as game parameters::

    game: "workers.referee:RefereeProgram"
    game_params: {program: /srv/contest/nim-referee, run: [awk, -f, nim.awk], name: nim}

The referee is started once per ``RefereeProgram`` instance (one per match on
a worker; one per re-judged result on the coordinator), in the same sandbox
as an entry (a private copy of ``program``, no network, the entry limits with
``wall_s`` per request), and asked one JSON object per line; it answers each
with one JSON line:

    {"op": "default_board"}                          -> {"board": "<text>"}
    {"op": "validate_board", "board": B}             -> {"ok": true} | {"error": "<why>"}
    {"op": "new_game", "board": B, "players": N}     -> {"state": S}
    {"op": "view", "state": S}                       -> {"to_move": i, "legal": ["<move>", ...],
                                                         "outcome": null | {"winners": [i], "scores": [..],
                                                         "reason": "<why>"}, "render": "<text>"}
    {"op": "play", "state": S, "move": "<text>"}     -> {"state": S2} | {"illegal": "<why>"}
    {"op": "forfeit", "state": S, "seat": i}         -> {"state": S2}

``S`` is the referee's own game state, any JSON value: tourney never looks
inside, stores nothing but the move texts, and replays a game by asking the
referee again. A move is its text (``parse_move`` only strips it); whether it
is legal is the referee's answer to ``play``.

Which language lives where: the referee is a program so that an organiser can
write the rules in anything, and it runs sandboxed because it is a program
tourney did not write; but its answers decide matches, so any failure of it
(a crash, a timeout, a line that is not such an object) raises
``RefereeError`` naming the referee, which the match loop turns into a
``system_error``: never charged to an entry, the match is retried.

The program must exist, built, at ``program`` on the coordinator and on every
worker (like a Python plugin, it is the organiser's to install there).
"""

from __future__ import annotations

import contextlib
import json
import threading
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from runner.domain.games.base import BadMoveText, BoardError, Game, IllegalMove, Outcome
from runner.domain.match_values import Limits
from runner.errors import RetryElsewhere
from workers.sandbox import host_factory
from workers.sandbox.base import EntryHost, HostError, InteractiveProcess, RunOutcome

#: the referee's "mark" for its host: no seat's, and not a file-name character, so it
#: never names a POTM arena file
REFEREE_MARK = "~"


class RefereeError(RetryElsewhere, RuntimeError):
    """The referee program failed or answered nonsense: the runner's fault, not an entry's."""


@dataclass(frozen=True)
class RefereeState:
    """The referee's opaque state, kept as canonical JSON text (hashable, comparable)."""

    json: str


@dataclass(frozen=True)
class _View:
    to_move: int
    legal: list[str]
    outcome: Outcome | None
    render: str


class RefereeProgram(Game[RefereeState, str]):
    name = "referee"

    def __init__(
        self,
        program: str,
        run: list[str],
        name: str = "referee",
        sandbox: Literal["bwrap", "none"] = "bwrap",
        wall_s: float = 5.0,
        memory_mb: int = 256,
    ) -> None:
        if not Path(program).is_dir():
            raise ValueError(f"referee program directory {program!r} does not exist here")
        if not run:
            raise ValueError("run must name the referee's argv")
        self.name = name  # type: ignore[misc]  # one class, many games: the instance names its own
        self.program = str(Path(program).resolve())
        self.run = list(run)
        self.sandbox = sandbox
        self.limits = Limits(move_wall_s=wall_s, memory_mb=memory_mb)
        self._lock = threading.Lock()
        self._host: EntryHost | None = None
        self._proc: InteractiveProcess | None = None
        self._views: dict[str, _View] = {}
        try:  # start it now: a referee that cannot run is a config error, reported where it is named
            self._default_board = self.default_board()
        except (RefereeError, HostError) as e:
            raise ValueError(f"{e} (program {self.program})") from e

    # -- talking to the program --------------------------------------------
    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            if self._proc is None:
                host = host_factory(self.sandbox).open(Path(self.program), self.limits, REFEREE_MARK)
                self._host = host
                self._proc = host.spawn(self.run, self.limits)
                weakref.finalize(self, _close, self._proc, self._host)
            with contextlib.suppress(OSError):  # if it has gone, reading says how
                self._proc.send(json.dumps(request, separators=(",", ":")) + "\n")
            line = self._proc.read_line(self.limits.move_wall_s)
        who = f"referee {' '.join(self.run)}"
        if isinstance(line, RunOutcome):
            why = line.detail or (f"exit code {line.exit_code}" if line.exit_code is not None else "ended")
            raise RefereeError(f"{who}: no answer to {request['op']}: {why}")
        try:
            answer = json.loads(line)
        except ValueError:
            raise RefereeError(f"{who}: answered {request['op']} with {line[:80]!r}, not JSON") from None
        if not isinstance(answer, dict):
            raise RefereeError(f"{who}: answered {request['op']} with {line[:80]!r}, not an object")
        return answer

    def _field(self, answer: dict[str, Any], key: str, op: str) -> Any:
        if key not in answer:
            raise RefereeError(f"referee {' '.join(self.run)}: its answer to {op} has no {key!r}: {answer}")
        return answer[key]

    def _state(self, answer: dict[str, Any], op: str) -> RefereeState:
        return RefereeState(
            json.dumps(self._field(answer, "state", op), sort_keys=True, separators=(",", ":"))
        )

    def _view(self, state: RefereeState) -> _View:
        if state.json not in self._views:
            a = self._ask({"op": "view", "state": json.loads(state.json)})
            o = self._field(a, "outcome", "view")
            outcome = (
                None if o is None else Outcome(tuple(o["winners"]), tuple(o["scores"]), str(o["reason"]))
            )
            self._views[state.json] = _View(
                int(self._field(a, "to_move", "view")),
                [str(m) for m in self._field(a, "legal", "view")],
                outcome,
                str(self._field(a, "render", "view")),
            )
        return self._views[state.json]

    # -- the Game interface ------------------------------------------------
    def default_board(self) -> str:
        if hasattr(self, "_default_board"):
            return self._default_board
        return str(self._field(self._ask({"op": "default_board"}), "board", "default_board"))

    def validate_board(self, board_text: str) -> None:
        answer = self._ask({"op": "validate_board", "board": board_text})
        if "error" in answer:
            raise BoardError(str(answer["error"]))

    def new_game(self, board_text: str, players: int) -> RefereeState:
        answer = self._ask({"op": "new_game", "board": board_text, "players": players})
        if "error" in answer:
            raise BoardError(str(answer["error"]))
        return self._state(answer, "new_game")

    def to_move(self, state: RefereeState) -> int:
        return self._view(state).to_move

    def legal_moves(self, state: RefereeState) -> list[str]:
        return list(self._view(state).legal)

    def play(self, state: RefereeState, move: str) -> RefereeState:
        answer = self._ask({"op": "play", "state": json.loads(state.json), "move": move})
        if "illegal" in answer:
            raise IllegalMove(str(answer["illegal"]))
        return self._state(answer, "play")

    def outcome(self, state: RefereeState) -> Outcome | None:
        return self._view(state).outcome

    def forfeit(self, state: RefereeState, seat: int) -> RefereeState:
        return self._state(
            self._ask({"op": "forfeit", "state": json.loads(state.json), "seat": seat}), "forfeit"
        )

    def render(self, state: RefereeState) -> str:
        return self._view(state).render

    def parse_move(self, text: str) -> str:
        move = text.strip()
        if not move or "\n" in move:
            raise BadMoveText(f"a move is one non-empty line, got {text[:20]!r}")
        return move

    def format_move(self, move: str) -> str:
        return move


def _close(proc: InteractiveProcess, host: EntryHost) -> None:
    proc.close()
    host.close()
