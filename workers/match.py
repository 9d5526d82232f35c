"""The referee loop for one match: every game of ``spec.orders`` on its board, or on each of
its boards in turn (``spec.boards``: a chess match of several openings, ``spec.planned_games``).

Per game: one host per seat (a private copy of the entry, closed at the end
of the game so no process survives it), one protocol per seat, then ask the
player to move, check the move with the game's rules, record it, until the
rules say the game is over. The one exception: a chess engine with ``restart``
off (the default) keeps its host and process across the games of its match
(``workers.kept_engines``); the last game of the match closes it as any other.

Decisions the seeds leave open:

* A verdict against a player (timeout, crash, illegal move, ...) removes its
  seat with ``game.forfeit``. In a two-player game the opponent wins at once;
  in an N-player game (boxing stage 2) play goes on among the rest. A
  ``GameRecord`` has one verdict: the *first* one against a player (the
  later end by the rules is in ``reason``).
* An entry whose build failed (``BuildFailed`` in ``entry_dirs``) forfeits
  every game before the first move with a ``build_failed`` verdict. If every
  seat's build failed, nobody wins.
* A game that reaches its bound (``spec.bound``: a config's ``bound.max_moves``,
  10000 by default, and ``bound.wall_s``; ``runner.domain.game_bound``) stops
  there and is scored by the game's ``adjudicate`` (a draw for m,n,k; pousse
  and boxing name a winner), with a ``normal`` verdict whose reason says which
  bound fired and how it was adjudicated, and ``GameRecord.stopped_by`` set:
  deterministic entries would loop again on a rerun, so it is not a
  ``system_error``.
* Anything that goes wrong in the runner itself (``HostError``, a bug, a
  game or protocol that cannot be set up) does not raise: the match result
  ends with a ``system_error`` game (charged to nobody) and the games before
  it, so the coordinator can retry the match elsewhere.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import time
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor, wait
from typing import Any

from runner.domain.adjudication import Adjudication, ruling
from runner.domain.game_bound import adjudicated, bound_reached
from runner.domain.games import get_game
from runner.domain.games.base import Game, IllegalMove, Outcome
from runner.domain.match_values import (
    EntryRef,
    GameBound,
    GameRecord,
    MatchResult,
    MatchSpec,
    MoveRecord,
    PlannedGame,
    Verdict,
    VerdictKind,
)
from runner.domain.placeholders import board_size, fill, game_seed
from workers.artifacts import BuildFailed, EntryDir
from workers.engine_log import EngineTraffic, log_to, logged
from workers.kept_engines import KeptEngines
from workers.protocols import EntryProtocol, Seat, make_protocol, protocol_class
from workers.protocols.engine import EngineProtocol
from workers.sandbox.base import EntryHost, HostFactory
from workers.stderr_notes import RecordingHost, StderrNotes

log = logging.getLogger(__name__)


class MatchObserver:
    """Hooks for watching a match as it is played (``tourney play`` prints positions)."""

    def building(self, names: list[str]) -> None:
        """The entries ``names`` are being built (once per digest on this machine) before play."""

    def game_started(self, number: int, order: list[str], game: Game[Any, Any], state: Any) -> None:
        """Game ``number`` (1-based) starts; ``order`` is the entry names in seat order."""

    def move_played(self, number: int, move: MoveRecord, game: Game[Any, Any], state: Any) -> None:
        """``move`` was played; ``state`` is the position after it."""

    def game_finished(self, number: int, record: GameRecord, game: Game[Any, Any], state: Any) -> None:
        """Game ``number`` is over (``state`` is None after a system error)."""


def argv_for(
    ref: EntryRef, mark: str, size: str = "", move_time: float | None = None, seed: int | None = None
) -> list[str]:
    """The entry's command line for a seat: ``run`` plus the variant's args, with ``{mark}``,
    ``{seed}``, ``{size}`` and ``{move_time}`` filled in (``runner.domain.placeholders``)."""
    return fill([*ref.run, *ref.args], mark=mark, size=size, move_time=move_time, seed=seed)


class _Game:
    """One game being played; keeps what was played so far for a system-error record."""

    def __init__(
        self,
        spec: MatchSpec,
        game: Game[Any, Any],
        planned: PlannedGame,
        entry_dirs: Mapping[str, EntryDir],
        hosts: HostFactory,
        observer: MatchObserver,
        bound: GameBound,
        kept: KeptEngines | None = None,
        last: bool = True,
    ):
        self.spec = spec
        self.game = game
        self.order = order = list(planned.order)
        #: where this game starts (the match's board, or its opening of ``spec.boards``)
        self.board_text = planned.board_text
        self.recorded_board = planned.recorded_board
        self.entry_dirs = entry_dirs
        self.hosts = hosts
        self.observer = observer
        self.number = planned.number
        self.bound = bound
        #: where engines wait for the match's next game (taken back by its seats here)
        self.kept = kept
        #: the match's last game: its engines quit within it, their last words in its record
        self.last = last
        self.moves: list[MoveRecord] = []
        self.history: list[Any] = []
        self.verdicts: list[Verdict] = []
        self.state: Any = None
        self.protocols: dict[int, EntryProtocol] = {}
        self.open_hosts: dict[int, EntryHost] = {}
        self.reused: set[int] = set()  # seats whose engine played the match's previous game
        self.stderr_notes = StderrNotes()  # what each entry says on stderr reaches the organiser
        self.traffic = EngineTraffic()  # engines' lines in and out, for those with ``log: engine``
        rules = Adjudication.from_dict(spec.adjudication) if spec.adjudication else None
        self.adjudication = rules if rules is not None and rules.active and len(order) == 2 else None

    def play(self) -> GameRecord:
        try:
            return self._on_board(self.traffic.attach(self.stderr_notes.attach(self._play())))
        finally:
            try:
                for host in self.open_hosts.values():
                    host.close()
                self.open_hosts.clear()
            finally:
                for proto in self.protocols.values():
                    proto.close()  # after its host: no process of the seat is left by then
                self.protocols.clear()

    def _play(self) -> GameRecord:
        game, order = self.game, self.order
        self.state = game.new_game(self.board_text, len(order))
        self.observer.game_started(self.number, list(order), game, self.state)
        dirs = [self.entry_dirs[name] for name in order]
        if all(isinstance(d, BuildFailed) for d in dirs):
            first = dirs[0]
            assert isinstance(first, BuildFailed)
            verdict = Verdict(VerdictKind.BUILD_FAILED, order[0], first.detail)
            scores = {n: 0 for n in order}
            return GameRecord(list(order), None, scores, verdict, [], "no entry could be built")
        for seat, d in enumerate(dirs):
            if isinstance(d, BuildFailed) and game.outcome(self.state) is None:
                self._forfeit(seat, Verdict(VerdictKind.BUILD_FAILED, order[seat], d.detail))
        self._seat_all(dirs)
        started = time.monotonic()
        stopped_by: str | None = None
        adjudicated_by: Outcome | None = None
        while game.outcome(self.state) is None:
            stopped_by = bound_reached(self.bound, len(self.moves), time.monotonic() - started)
            if stopped_by is not None:
                break
            self._turn(game.to_move(self.state))
            adjudicated_by = self._adjudicated()
            if adjudicated_by is not None:
                break
        self._keep_engines()
        for proto in self.protocols.values():
            if isinstance(proto, EngineProtocol):
                proto.say_quit()  # all told before any is waited for: they leave side by side
        for proto in self.protocols.values():
            with contextlib.suppress(Exception):  # the game is decided; a failing END changes nothing
                proto.end()
        if stopped_by is not None:
            return self._stopped(stopped_by)
        return self._record(adjudicated_by)

    def _keep_engines(self) -> None:
        """Hand every engine that may play the match's next game to ``self.kept`` (they are no
        longer this game's to end or close); a seat with a verdict against it is already closed."""
        if self.kept is None or self.last:
            return
        for seat, proto in list(self.protocols.items()):
            if isinstance(proto, EngineProtocol) and proto.reusable and seat in self.open_hosts:
                self.kept.keep(self.order[seat], self.open_hosts.pop(seat), proto)
                del self.protocols[seat]

    def _adjudicated(self) -> Outcome | None:
        """The engines' scores end the game (``runner.domain.adjudication``), or None; only
        a game still going by the rules, with no verdict, is adjudicated."""
        if self.adjudication is None or self.verdicts or self.game.outcome(self.state) is not None:
            return None
        seats = {name: seat for seat, name in enumerate(self.order)}
        board = getattr(self.state, "board", None)  # chess: the position, for the tablebase rule
        return ruling(self.adjudication, [(seats[m.player], m.search) for m in self.moves], board)

    def _seat_all(self, dirs: list[EntryDir]) -> None:
        """Open and begin every seat whose entry was built. Every engine is launched (its process
        started and greeted) and then greeted to the end all at once, each on its own deadline
        from its own greeting (``_begin_engines``): a game's engines start side by side (an
        engine's start is as long as a whole fast game), and one slow engine takes nothing of
        another's time (docs/engines.md). Other seats begin after, in seat order, until the
        game is decided."""
        seats = [seat for seat, d in enumerate(dirs) if not isinstance(d, BuildFailed)]
        engines = [
            seat
            for seat in seats
            if issubclass(protocol_class(self.spec.entries[self.order[seat]].protocol), EngineProtocol)
        ]
        for seat in engines:
            self._open(seat, dirs[seat])
        for seat, verdict in self._begin_engines(engines):
            if verdict is not None and self.game.outcome(self.state) is None:
                self._forfeit(seat, verdict)
        for seat in seats:
            if self.game.outcome(self.state) is not None:
                break  # the seats opened early and never begun close with the game
            if seat in engines:
                continue
            if seat not in self.protocols:
                self._open(seat, dirs[seat])
            verdict = self._start(seat)
            if verdict is not None:
                self._forfeit(seat, verdict)

    def _begin_engines(self, seats: list[int]) -> list[tuple[int, Verdict | None]]:
        """Each engine seat's handshake (or a kept engine's new game), all at the same time:
        the first in this thread, the others in threads of their own (each touches only its
        own protocol and process); every one is waited for before any verdict is applied."""
        if len(seats) <= 1:
            return [(seat, self._start(seat)) for seat in seats]
        with ThreadPoolExecutor(max_workers=len(seats) - 1, thread_name_prefix="handshake") as pool:
            others = {seat: pool.submit(self._start, seat) for seat in seats[1:]}
            try:
                first = self._start(seats[0])
            finally:
                wait(others.values())  # no thread still speaks to an engine when this returns or raises
        return [(seats[0], first), *((seat, future.result()) for seat, future in others.items())]

    def _open(self, seat: int, entry_dir: EntryDir) -> None:
        """The seat's host and protocol: its engine from the match's previous game, or a fresh
        one (a fresh engine is launched at once)."""
        assert not isinstance(entry_dir, BuildFailed)
        name = self.order[seat]
        ref = self.spec.entries[name]
        mark = self.game.seat_mark(self.state, seat)
        argv = argv_for(
            ref,
            mark,
            board_size(self.game, self.board_text),
            self.spec.limits.move_wall_s,
            game_seed(self.spec.seed, self.number),
        )
        who = Seat(name, seat, mark, players=len(self.order))
        kept = self.kept.take(name, ref.protocol, argv) if self.kept is not None else None
        if kept is not None:  # its engine from the match's previous game, told a new one starts
            if isinstance(kept.host, RecordingHost):
                kept.host.report_to(self.stderr_notes)
            log_to(kept.host, self.traffic)
            self.open_hosts[seat] = kept.host
            self.protocols[seat] = kept.protocol
            self.reused.add(seat)
            return
        host = self.hosts.open(entry_dir, self.spec.limits, mark)
        if ref.engine.get("log"):  # docs/engines.md, "Engine traffic"
            host = logged(name, host, self.traffic)
        host = self.stderr_notes.recording(name, host)
        self.open_hosts[seat] = host
        proto = make_protocol(
            ref.protocol, self.game, host, argv, who, self.spec.limits, self.board_text, self._engines()
        )
        self.protocols[seat] = proto
        if isinstance(proto, EngineProtocol):
            proto.launch()

    def _start(self, seat: int) -> Verdict | None:
        """Start the seat's game (an engine kept from the previous game is told a new one
        starts); the verdict of a failure to begin, which forfeits the seat."""
        proto = self.protocols[seat]
        if seat in self.reused and isinstance(proto, EngineProtocol):
            who = Seat(self.order[seat], seat, self.game.seat_mark(self.state, seat), players=len(self.order))
            return proto.next_game(who, self.board_text, self._engines())
        return proto.begin(self.state)

    def _engines(self) -> list[dict[str, Any]]:
        return [self.spec.entries[n].engine for n in self.order]

    def _turn(self, seat: int) -> None:
        proto = self.protocols.get(seat)
        if proto is None:
            raise RuntimeError(f"{self.game.name}: seat {seat} is to move but has no player")
        name = self.order[seat]
        reply = proto.request_move(self.state, self.history)
        if reply.verdict is not None:
            self._forfeit(seat, reply.verdict)
            return
        try:
            after = self.game.play(self.state, reply.move)
        except IllegalMove as e:
            self._forfeit(seat, Verdict(VerdictKind.ILLEGAL_MOVE, name, str(e)))
            return
        record = MoveRecord(
            name,
            self.game.format_move(reply.move),
            round(reply.wall_ms, 2),
            round(reply.cpu_ms, 2),
            reply.search,
        )
        for watching in self.protocols.values():  # engines keep both clocks from the recorded time
            watching.moved(seat, record.wall_ms)
        self.moves.append(record)
        self.history.append(reply.move)
        self.state = after
        self.observer.move_played(self.number, record, self.game, after)

    def _forfeit(self, seat: int, verdict: Verdict) -> None:
        self.verdicts.append(verdict)
        self.state = self.game.forfeit(self.state, seat)
        proto = self.protocols.pop(seat, None)
        host = self.open_hosts.pop(seat, None)
        if host is not None:
            host.close()  # its processes die now, not at the end of an N-player game
        if proto is not None:
            proto.close()

    def _record(self, outcome: Outcome | None = None, stopped_by: str = "") -> GameRecord:
        outcome = outcome or self.game.outcome(self.state)
        assert outcome is not None
        order = self.order
        winner = order[outcome.winners[0]] if len(outcome.winners) == 1 else None
        scores = {name: 0 for name in order}
        for seat, score in enumerate(outcome.scores):
            scores[order[seat]] += score
        verdict = self.verdicts[0] if self.verdicts else Verdict(VerdictKind.NORMAL, None, outcome.reason)
        moves = list(self.moves)
        return GameRecord(list(order), winner, scores, verdict, moves, outcome.reason, stopped_by=stopped_by)

    def _stopped(self, stopped_by: str) -> GameRecord:
        """The record of a game stopped at its bound, scored by the game's adjudication."""
        ruling = adjudicated(self.game, self.state, len(self.order), stopped_by, self.bound, len(self.moves))
        return self._record(ruling, stopped_by)

    def _on_board(self, record: GameRecord) -> GameRecord:
        """``record`` naming its board when the match plays several (``GameRecord.board_id``)."""
        return dataclasses.replace(record, board_id=self.recorded_board) if self.recorded_board else record

    def system_error(self, error: BaseException) -> GameRecord:
        detail = f"{type(error).__name__}: {error}".splitlines()[0][:300]
        verdict = Verdict(VerdictKind.SYSTEM_ERROR, None, detail)
        scores = {name: 0 for name in self.order}
        record = GameRecord(list(self.order), None, scores, verdict, list(self.moves), "runner error")
        return self._on_board(record)


def play_match(
    spec: MatchSpec,
    entry_dirs: Mapping[str, EntryDir],
    hosts: HostFactory,
    worker: str = "",
    *,
    observer: MatchObserver | None = None,
    max_moves: int | None = None,
) -> MatchResult:
    """Play every game of ``spec``; never raises for entry or runner failures (see module doc).

    ``max_moves``, when given, replaces the move bound of ``spec.bound`` (tests).

    ``entry_dirs`` maps each entry name to its built directory (``ArtifactCache.ensure``),
    or to ``BuildFailed``; ``hosts`` makes the per-game hosts (``host_factory(spec.sandbox)``).
    """
    watch = observer or MatchObserver()
    digests = {name: ref.digest for name, ref in spec.entries.items()}
    records: list[GameRecord] = []
    try:
        game = get_game(spec.game, **spec.game_params)
    except Exception as e:
        log.exception("match %s: cannot set up game %s", spec.match_id, spec.game)
        order = spec.orders[0] if spec.orders else sorted(spec.entries)
        verdict = Verdict(VerdictKind.SYSTEM_ERROR, None, f"cannot set up game {spec.game!r}: {e}")
        first = spec.boards[0].board_id if spec.boards else ""
        record = GameRecord(
            list(order), None, {n: 0 for n in order}, verdict, [], "runner error", board_id=first
        )
        return MatchResult(spec.match_id, [record], worker, digests)
    bound = spec.bound if max_moves is None else dataclasses.replace(spec.bound, max_moves=max_moves)
    kept = KeptEngines()  # this match's engines between its games, and no other's
    try:
        planned_games = spec.planned_games()
        for planned in planned_games:
            number = planned.number
            last = number == len(planned_games)
            run = _Game(spec, game, planned, entry_dirs, hosts, watch, bound, kept, last)
            try:
                record = run.play()
            except Exception as e:
                log.exception("match %s game %d: runner error", spec.match_id, number)
                record = run.system_error(e)
                records.append(record)
                with contextlib.suppress(Exception):
                    watch.game_finished(number, record, game, None)
                break  # the match will be retried as a whole
            records.append(record)
            watch.game_finished(number, record, game, run.state)
    finally:
        kept.close()  # engines of a match cut short; none after its last game
    return MatchResult(spec.match_id, records, worker, digests)
