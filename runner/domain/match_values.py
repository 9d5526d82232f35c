"""A match's values: how it is planned, what a worker needs to play it, what comes back.

Plain frozen dataclasses and nothing else: no JSON here. They cross the boundary between
coordinator and workers, and go into the store, through the one codec of
``runner.domain.wire`` (``encode``/``decode``), which walks their fields and annotations.
Adding a field to a match is a change to this file alone: give it a default (so that a spec
or result stored before it still reads) and every writer and reader carries it.

The coordinator plans ``MatchPlan``s, makes them ``MatchSpec``s (the plan plus the board's
text, the entries' artifacts, limits, seed, sandbox); a worker answers with a ``MatchResult``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any


class VerdictKind(StrEnum):
    """How a game can end (docs/sandbox.md)."""

    NORMAL = "normal"
    ILLEGAL_MOVE = "illegal_move"
    BAD_OUTPUT = "bad_output"
    TIMEOUT = "timeout"
    CPU_LIMIT = "cpu_limit"
    MEMORY_LIMIT = "memory_limit"
    CRASH = "crash"
    LEFT_PROCESSES = "left_processes"
    NO_OUTPUT = "no_output"
    #: a chess engine gave the game up (xboard ``resign``): charged to it, the opponent wins
    RESIGN = "resign"
    BUILD_FAILED = "build_failed"
    SYSTEM_ERROR = "system_error"


@dataclass(frozen=True)
class Verdict:
    """Why a game ended. ``player`` is the entry charged (None for ``normal``
    and for ``system_error``, which is never charged to an entry)."""

    kind: VerdictKind
    player: str | None = None
    detail: str = ""

    def label(self) -> str:
        """``kind (player)``, or the kind alone when nobody is charged."""
        return self.kind.value + (f" ({self.player})" if self.player else "")


@dataclass(frozen=True)
class Limits:
    """Resource limits for one entry. Per move unless said otherwise."""

    move_wall_s: float = 1.0
    move_cpu_s: float | None = None  # None: same as the wall limit
    memory_mb: int = 512
    output_kb: int = 64
    processes: int = 32
    open_files: int = 64
    file_size_mb: int = 16
    game_wall_s: float | None = None  # persistent protocols: whole-game budget
    #: after a move's program exits, how long descendants may take to go (or to enter the
    #: kernel's exit path) before they count as left_processes: on the move's clock
    exit_grace_ms: int = 300

    @property
    def cpu_s(self) -> float:
        return self.move_cpu_s if self.move_cpu_s is not None else self.move_wall_s


#: the move bound of a game when a config names none (``bound.max_moves``): explicit,
#: documented (docs/config.md), and reported in the game's reason when it fires
DEFAULT_MAX_MOVES = 10_000


@dataclass(frozen=True)
class GameBound:
    """When a game is stopped before the rules end it, to be adjudicated (``Game.adjudicate``).

    ``max_moves``: after this many moves (None: no move bound). ``wall_s``: once the game
    has run this long by the worker's clock, checked between moves (None: no wall bound).
    """

    max_moves: int | None = DEFAULT_MAX_MOVES
    wall_s: float | None = None


@dataclass(frozen=True)
class EntryRef:
    """An entry as a match needs it: its artifact digest and how to run it."""

    name: str
    digest: str  # sha256 of the packed entry directory (docs/config.md)
    protocol: str
    run: list[str]  # argv, with "{mark}" placeholders
    build: str | None = None
    args: list[str] = field(default_factory=list)  # variant's extra argv
    #: a chess engine's clock and options (``runner.domain.engine_clock.EngineSettings.to_dict``);
    #: empty for every other protocol
    engine: dict[str, Any] = field(default_factory=dict)
    #: the node count its ``bench`` command must print (entry.yaml ``bench:``): the worker
    #: refuses a build that prints another (``runner.domain.bench``); None: not checked
    bench: int | None = None


@dataclass(frozen=True)
class SeatOption:
    """An engine option a plan sets for one of its players, over the entry's own and the
    config's (an spsa stage's perturbed values: ``runner.domain.stages.spsa``)."""

    player: str
    name: str
    value: int | float


@dataclass(frozen=True)
class MatchPlan:
    """One match as a planner decides it: who plays, where, and in which seat orders.

    ``orders`` lists, per game, the entry names in seat order (seat 0 moves
    first). This is the one description of a match's place in the tournament:
    ``MatchSpec`` extends it, the store persists it inside the spec, and the
    report and ``tourney matches`` read it back from a ``MatchRecord``.
    """

    stage: str
    round: int
    bracket: str  # "" when the stage has none; "winners" / "losers" in potm_elimination
    pairing: int  # position within the round (and bracket)
    players: tuple[str, ...]
    board_id: str
    orders: tuple[tuple[str, ...], ...]
    #: derived from the plan (docs/architecture.md) unless given: ad-hoc matches (``tourney play``, tests)
    #: name their own
    match_id: str = ""
    #: engine options this match sets for its players (``match_spec`` lays them over the
    #: entries' settings); empty for every planner but spsa
    seat_options: tuple[SeatOption, ...] = ()

    def __post_init__(self) -> None:
        # frozen: normalise the sequences once, and compute the id once rather than on every read
        object.__setattr__(self, "players", tuple(self.players))
        object.__setattr__(self, "orders", tuple(tuple(o) for o in self.orders))
        object.__setattr__(self, "seat_options", tuple(self.seat_options))
        if not self.match_id:
            # docs/architecture.md: derived from (stage, round, bracket, pairing, board, seat order)
            parts: tuple[object, ...] = (
                self.stage,
                self.round,
                self.bracket,
                self.pairing,
                self.board_id,
                self.orders,
            )
            if self.seat_options:
                # other options are another match: a result played with other values is never reused
                parts += (tuple((o.player, o.name, o.value) for o in self.seat_options),)
            object.__setattr__(self, "match_id", stable_id(*parts))

    def options_of(self, player: str) -> dict[str, int | float]:
        """The engine options this match sets for ``player`` (none: its entry's own)."""
        return {o.name: o.value for o in self.seat_options if o.player == player}

    @classmethod
    def ad_hoc(
        cls,
        match_id: str,
        board_id: str,
        orders: Sequence[Sequence[str]],
        stage: str = "",
        round: int = 0,
        bracket: str = "",
    ) -> MatchPlan:
        """A match outside any tournament plan (``tourney play``, benchmarks, tests): its
        players are everyone seated, in order of first appearance."""
        players = tuple(dict.fromkeys(p for o in orders for p in o))
        return cls(stage, round, bracket, 0, players, board_id, tuple(tuple(o) for o in orders), match_id)


@dataclass(frozen=True)
class NamedBoard:
    """One of the boards a match plays one after another (``MatchSpec.boards``)."""

    board_id: str
    text: str


@dataclass(frozen=True)
class PlannedGame:
    """One game of a match as it is to be played: its 1-based number, its board and seat order.
    ``recorded_board`` is what its ``GameRecord.board_id`` says: "" on a match of one board."""

    number: int
    board_id: str
    board_text: str
    order: tuple[str, ...]
    recorded_board: str = ""


@dataclass(frozen=True, kw_only=True)
class MatchSpec(MatchPlan):
    """One match as a worker plays it: its plan (the fields it inherits, so that a spec's
    JSON is flat: the plan's keys beside the rest) plus what execution needs."""

    game: str
    board_text: str
    entries: dict[str, EntryRef]
    limits: Limits
    seed: int
    sandbox: str = "bwrap"  # "bwrap" | "none"
    game_params: dict[str, Any] = field(default_factory=dict)  # e.g. boxing max_box
    bound: GameBound = field(default_factory=GameBound)  # when a game is stopped and adjudicated
    #: fair timing (config ``timing.exclusive_cores``): the match holds a core of its own
    exclusive_cores: bool = False
    #: adjudication from engines' reported scores (``runner.domain.adjudication``); empty: none
    adjudication: dict[str, Any] = field(default_factory=dict)
    #: the boards the match plays one after another, each with every seat order of ``orders``
    #: (chess ``openings.per_match``: K openings, each a colour-swapped game pair, the engines
    #: kept across all of them; docs/engines.md); empty: the one board ``board_id``/``board_text``
    boards: tuple[NamedBoard, ...] = ()

    def planned_games(self) -> list[PlannedGame]:
        """Every game of the match in playing order: board by board, each in every seat order.
        The one place that says which board a game starts on (worker, re-judging, reports)."""
        if not self.boards:
            return [PlannedGame(n, self.board_id, self.board_text, o) for n, o in enumerate(self.orders, 1)]
        games = [(b, o) for b in self.boards for o in self.orders]
        return [PlannedGame(n, b.board_id, b.text, o, b.board_id) for n, (b, o) in enumerate(games, 1)]

    def board_text_of(self, record: GameRecord) -> str:
        """The text of the board ``record`` started on (the match's own unless it names one of
        ``boards``); "" for a board the match does not have."""
        if not record.board_id:
            return self.board_text
        return next((b.text for b in self.boards if b.board_id == record.board_id), "")

    @classmethod
    def playing(cls, plan: MatchPlan, **execution: Any) -> MatchSpec:
        """``plan`` made playable with ``execution`` (``game``, ``board_text``, ``entries``, ...)."""
        return cls(**{f.name: getattr(plan, f.name) for f in fields(MatchPlan)}, **execution)

    @classmethod
    def of(
        cls,
        match_id: str,
        game: str,
        board_id: str,
        board_text: str,
        orders: Sequence[Sequence[str]],
        entries: dict[str, EntryRef],
        limits: Limits,
        seed: int,
        sandbox: str = "bwrap",
        game_params: dict[str, Any] | None = None,
        stage: str = "",
        round: int = 0,
        bracket: str = "",
        bound: GameBound | None = None,
    ) -> MatchSpec:
        """A spec for a match outside any tournament plan (``tourney play``, benchmarks,
        tests); its plan is ``MatchPlan.ad_hoc``."""
        plan = MatchPlan.ad_hoc(match_id, board_id, orders, stage=stage, round=round, bracket=bracket)
        return cls.playing(
            plan, game=game, board_text=board_text, entries=entries, limits=limits, seed=seed,
            sandbox=sandbox, game_params=dict(game_params or {}), bound=bound or GameBound(),
        )  # fmt: skip

    @property
    def plan(self) -> MatchPlan:
        """The plan alone (what the planners and the store's plan columns compare)."""
        return MatchPlan(**{f.name: getattr(self, f.name) for f in fields(MatchPlan)})


@dataclass(frozen=True)
class SearchInfo:
    """An engine's last report of its search for one move: the score from the mover's side
    (``cp`` centipawns, or ``mate`` in moves, negative when it is mated) and the depth.
    Adjudication (docs/engines.md) and the PGN's move comments read it."""

    cp: int | None = None
    mate: int | None = None
    depth: int | None = None


@dataclass(frozen=True)
class MoveRecord:
    player: str
    move: str  # the game's canonical move text
    wall_ms: float
    cpu_ms: float | None = None
    #: what an engine last reported of its search before this move (chess), else None
    search: SearchInfo | None = None


@dataclass(frozen=True)
class GameRecord:
    """One finished game. ``winner`` is None for a draw or a system error."""

    order: list[str]
    winner: str | None
    scores: dict[str, int]
    verdict: Verdict
    moves: list[MoveRecord]
    reason: str = ""  # the rules' reason for a normal end ("5 in a row", ...)
    #: "" when the game ended by the rules or a verdict; else the bound that stopped it
    #: ("max_moves" or "wall", ``MatchSpec.bound``) and ``reason`` says how it was adjudicated
    stopped_by: str = ""
    #: per entry, what it wrote on stderr during this game (distinct lines, capped:
    #: ``workers.stderr_notes``), so what an entry says about itself (a work budget
    #: that cut its search) reaches the organiser; only entries that wrote anything
    stderr: dict[str, list[str]] = field(default_factory=dict)
    #: the board the game started on when its match plays several (``MatchSpec.boards``: a
    #: chess opening's name); "" on a match of one board, whose board is the match's own
    board_id: str = ""
    #: per engine whose clocks were scaled to the worker's speed (``scale_nps``): by how much,
    #: and the speed measured (docs/engines.md, "Clocks scaled to the machine")
    clock_scale: dict[str, ClockScale] = field(default_factory=dict)
    #: per engine with ``log: engine``: every line to and from it in this game, timestamped
    #: and capped (``workers.engine_log``); written to ``logs/engines/`` in the run directory
    engine_logs: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ClockScale:
    """How one engine's clocks were scaled on the worker that played the game: ``factor`` =
    ``scale_nps`` / ``measured_nps`` (the engine's speed in that worker's sandbox)."""

    factor: float
    measured_nps: int
    scale_nps: int


@dataclass(frozen=True)
class TimingConditions:
    """How a match's moves were timed on the worker that played it (issue 14, fair timing)."""

    #: the match held CPUs no other match on that machine used (``cpus``), else shared the machine
    exclusive: bool
    #: the CPUs the match's processes were pinned to (empty: not pinned)
    cpus: list[int]
    #: CPUs the worker may use, and how many matches it runs at once
    worker_cores: int
    worker_concurrency: int
    #: seconds the match waited for a free core before it started
    waited_s: float = 0.0


@dataclass(frozen=True)
class MatchResult:
    match_id: str
    games: list[GameRecord]
    worker: str = ""
    digests: dict[str, str] = field(default_factory=dict)
    #: entry name -> its build log, for the entries whose build failed (at most its last
    #: 64 KiB: ``workers.executor.BUILD_LOG_MAX``); it travels with the result so that the
    #: coordinator's store keeps it and ``tourney build-log`` prints it on the organiser's machine
    build_logs: dict[str, str] = field(default_factory=dict)
    #: how its moves were timed (None: a result from before fair timing, or never played)
    timing: TimingConditions | None = None
    #: a ``system_error`` that arose while the worker prepared one entry's artifact (its own
    #: fault: disk full, cache unwritable): that entry's digest, so that one entry's artifact
    #: counts at most once in a row against a worker (``runner.orchestration.workers_health``)
    artifact_fault: str = ""

    @property
    def system_error(self) -> Verdict | None:
        for g in self.games:
            if g.verdict.kind is VerdictKind.SYSTEM_ERROR:
                return g.verdict
        return None


def system_error_result(
    spec: MatchSpec, detail: str, *, worker: str, reason: str = "", digests: dict[str, str] | None = None
) -> MatchResult:
    """A match that could not be played: one ``system_error`` game per planned
    game, charged to nobody and scoring nothing (a worker's own failure, or the
    coordinator giving a match up at the attempt cap)."""
    games = [
        GameRecord(
            order=list(planned.order),
            winner=None,
            scores={p: 0 for p in planned.order},
            verdict=Verdict(VerdictKind.SYSTEM_ERROR, None, detail),
            moves=[],
            reason=reason,
            board_id=planned.recorded_board,
        )
        for planned in spec.planned_games()
    ]
    return MatchResult(spec.match_id, games, worker=worker, digests=dict(digests or {}))


def stable_id(*parts: object, length: int = 16) -> str:
    """A short deterministic id from JSON-serialisable parts (match ids, board ids)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:length]
