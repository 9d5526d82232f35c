"""Data that crosses the boundary between coordinator and workers.

Everything here is plain data that round-trips through JSON (``to_dict`` /
``from_dict``) because Celery carries it as JSON only (docs/scale-out.md). The
coordinator builds ``MatchSpec``s; a worker returns a ``MatchResult``.

The wire messages (at the end of this module) wrap them: the coordinator
sends a ``TaskEnvelope``; a worker answers through the run's inbox with
``Started``, ``Finished`` and ``Skipped`` notes.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar

from runner.errors import MessageRejected


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
    player: str | None
    detail: str

    def label(self) -> str:
        """``kind (player)``, or the kind alone when nobody is charged."""
        return self.kind.value + (f" ({self.player})" if self.player else "")

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind.value, "player": self.player, "detail": self.detail}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Verdict:
        return cls(VerdictKind(d["kind"]), d.get("player"), d.get("detail", ""))


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Limits:
        return cls(**d)


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

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GameBound:
        return cls(**d)


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

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if not self.engine:  # absent when empty: specs and signatures of other games read as before
            del d["engine"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> EntryRef:
        return cls(**d)


@dataclass(frozen=True)
class MatchPlan:
    """One match as a planner decides it: who plays, where, and in which seat orders.

    ``orders`` lists, per game, the entry names in seat order (seat 0 moves
    first). This is the one description of a match's place in the tournament:
    ``MatchSpec`` holds it, the store persists it inside the spec, and the
    report and ``tourney matches`` read it back from a ``MatchRecord``.
    Adding a field here is enough for it to travel everywhere (``to_dict`` and
    ``from_dict`` walk the dataclass fields).
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

    def __post_init__(self) -> None:
        # frozen: normalise the sequences once, and compute the id once rather than on every read
        object.__setattr__(self, "players", tuple(self.players))
        object.__setattr__(self, "orders", tuple(tuple(o) for o in self.orders))
        if not self.match_id:
            # docs/architecture.md: derived from (stage, round, bracket, pairing, board, seat order)
            parts = (self.stage, self.round, self.bracket, self.pairing, self.board_id, self.orders)
            object.__setattr__(self, "match_id", stable_id(*parts))

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

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"match_id": self.match_id}
        for f in fields(self):
            if f.name != "match_id":
                d[f.name] = getattr(self, f.name)
        d["players"] = list(self.players)
        d["orders"] = [list(o) for o in self.orders]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MatchPlan:
        """A plan from ``to_dict`` output or from a flat spec dict; specs written before
        ``pairing`` and ``players`` travelled with them read as pairing 0 and the seated players."""
        orders = [list(o) for o in d["orders"]]
        known = {f.name for f in fields(cls)}
        values = {k: v for k, v in d.items() if k in known}
        values.setdefault("stage", "")
        values.setdefault("round", 0)
        values.setdefault("bracket", "")
        values.setdefault("pairing", 0)
        values.setdefault("players", list(dict.fromkeys(p for o in orders for p in o)))
        return cls(**values)


@dataclass(frozen=True)
class MatchSpec:
    """One match as a worker plays it: the plan plus what execution needs
    (the board's text, the entries' artifacts and argv, limits, seed, sandbox).

    ``to_dict`` is flat (the plan's fields beside the rest), the JSON the
    store keeps and the workers receive.
    """

    plan: MatchPlan
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
        tests), from the flat fields in the order of ``to_dict``; its plan is ``MatchPlan.ad_hoc``."""
        plan = MatchPlan.ad_hoc(match_id, board_id, orders, stage=stage, round=round, bracket=bracket)
        params = dict(game_params or {})
        return cls(plan, game, board_text, entries, limits, seed, sandbox, params, bound or GameBound())

    # the plan's fields a worker reads, by their old names
    @property
    def match_id(self) -> str:
        return self.plan.match_id

    @property
    def board_id(self) -> str:
        return self.plan.board_id

    @property
    def orders(self) -> list[list[str]]:
        return [list(o) for o in self.plan.orders]

    @property
    def stage(self) -> str:
        return self.plan.stage

    @property
    def round(self) -> int:
        return self.plan.round

    @property
    def bracket(self) -> str:
        return self.plan.bracket

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.plan.to_dict(),
            "game": self.game,
            "board_text": self.board_text,
            "entries": {k: v.to_dict() for k, v in self.entries.items()},
            "limits": self.limits.to_dict(),
            "seed": self.seed,
            "sandbox": self.sandbox,
            "game_params": dict(self.game_params),
            "bound": self.bound.to_dict(),
            # only when asked for: specs stored or sent before fair timing read the same
            **({"exclusive_cores": True} if self.exclusive_cores else {}),
            **({"adjudication": dict(self.adjudication)} if self.adjudication else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MatchSpec:
        return cls(
            plan=MatchPlan.from_dict(d),
            game=d["game"],
            board_text=d["board_text"],
            entries={k: EntryRef.from_dict(v) for k, v in d["entries"].items()},
            limits=Limits.from_dict(d["limits"]),
            seed=d["seed"],
            sandbox=d.get("sandbox", "bwrap"),
            game_params=dict(d.get("game_params", {})),
            # specs stored before bounds were configurable had the default move bound
            bound=GameBound.from_dict(d["bound"]) if "bound" in d else GameBound(),
            exclusive_cores=bool(d.get("exclusive_cores", False)),
            adjudication=dict(d.get("adjudication") or {}),
        )


@dataclass(frozen=True)
class MoveRecord:
    player: str
    move: str  # the game's canonical move text
    wall_ms: float
    cpu_ms: float | None = None
    #: what an engine last reported of its search before this move (chess), else None
    search: SearchInfo | None = None

    def to_dict(self) -> dict[str, Any]:
        # asdict's generic deep copy, once per move of every result, was a visible
        # share of a worker's time per match (issue 13); the fields are plain values
        return {
            "player": self.player,
            "move": self.move,
            "wall_ms": self.wall_ms,
            "cpu_ms": self.cpu_ms,
            "search": self.search.to_dict() if self.search is not None else None,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MoveRecord:
        search = d.get("search")
        return cls(
            d["player"],
            d["move"],
            d["wall_ms"],
            d.get("cpu_ms"),
            SearchInfo.from_dict(search) if isinstance(search, dict) else None,
        )


@dataclass(frozen=True)
class SearchInfo:
    """An engine's last report of its search for one move: the score from the mover's side
    (``cp`` centipawns, or ``mate`` in moves, negative when it is mated) and the depth.
    Adjudication (docs/engines.md) and the PGN's move comments read it."""

    cp: int | None = None
    mate: int | None = None
    depth: int | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"cp": self.cp, "mate": self.mate, "depth": self.depth}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> SearchInfo:
        def num(key: str) -> int | None:
            v = d.get(key)
            return int(v) if v is not None else None

        return cls(num("cp"), num("mate"), num("depth"))


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
    #: ``workers.stderr_notes``), so what an entry says about itself (a time budget
    #: that cut its search) reaches the organiser; only entries that wrote anything
    stderr: dict[str, list[str]] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "order": list(self.order),
            "winner": self.winner,
            "scores": dict(self.scores),
            "verdict": self.verdict.to_dict(),
            "moves": [m.to_dict() for m in self.moves],
            "reason": self.reason,
        }
        if self.stopped_by:
            d["stopped_by"] = self.stopped_by
        if self.stderr:  # absent when empty: older readers and signatures see what they always did
            d["stderr"] = {k: list(v) for k, v in self.stderr.items()}
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> GameRecord:
        return cls(
            order=list(d["order"]),
            winner=d.get("winner"),
            scores={k: int(v) for k, v in d["scores"].items()},
            verdict=Verdict.from_dict(d["verdict"]),
            moves=[MoveRecord.from_dict(m) for m in d["moves"]],
            reason=d.get("reason", ""),
            stopped_by=str(d.get("stopped_by", "")),
            stderr={str(k): [str(x) for x in v] for k, v in (d.get("stderr") or {}).items()},
        )


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

    def to_dict(self) -> dict[str, Any]:
        # what ``asdict`` gives, without its recursive deep copy (every result carries one)
        return {
            "exclusive": self.exclusive,
            "cpus": list(self.cpus),
            "worker_cores": self.worker_cores,
            "worker_concurrency": self.worker_concurrency,
            "waited_s": self.waited_s,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TimingConditions:
        return cls(
            exclusive=bool(d["exclusive"]),
            cpus=[int(c) for c in d.get("cpus", [])],
            worker_cores=int(d["worker_cores"]),
            worker_concurrency=int(d["worker_concurrency"]),
            waited_s=float(d.get("waited_s", 0.0)),
        )


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

    @property
    def system_error(self) -> Verdict | None:
        for g in self.games:
            if g.verdict.kind is VerdictKind.SYSTEM_ERROR:
                return g.verdict
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "match_id": self.match_id,
            "games": [g.to_dict() for g in self.games],
            "worker": self.worker,
            "digests": dict(self.digests),
            **({"build_logs": dict(self.build_logs)} if self.build_logs else {}),
            **({"timing": self.timing.to_dict()} if self.timing is not None else {}),
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> MatchResult:
        timing = d.get("timing")
        return cls(
            match_id=d["match_id"],
            games=[GameRecord.from_dict(g) for g in d["games"]],
            worker=d.get("worker", ""),
            digests=dict(d.get("digests", {})),
            build_logs={str(k): str(v) for k, v in (d.get("build_logs") or {}).items()},
            timing=TimingConditions.from_dict(timing) if isinstance(timing, dict) else None,
        )


def system_error_result(
    spec: MatchSpec, detail: str, *, worker: str, reason: str = "", digests: dict[str, str] | None = None
) -> MatchResult:
    """A match that could not be played: one ``system_error`` game per planned
    game, charged to nobody and scoring nothing (a worker's own failure, or the
    coordinator giving a match up at the attempt cap)."""
    games = [
        GameRecord(
            order=list(order),
            winner=None,
            scores={p: 0 for p in order},
            verdict=Verdict(VerdictKind.SYSTEM_ERROR, None, detail),
            moves=[],
            reason=reason,
        )
        for order in spec.orders
    ]
    return MatchResult(spec.match_id, games, worker=worker, digests=dict(digests or {}))


def stable_id(*parts: object, length: int = 16) -> str:
    """A short deterministic id from JSON-serialisable parts (match ids, board ids)."""
    blob = json.dumps(parts, sort_keys=True, separators=(",", ":"), default=str)
    return hashlib.sha256(blob.encode()).hexdigest()[:length]


# -- wire messages ------------------------------------------------------------------------------
#: the task envelope's version: a worker refuses an envelope of another version
ENVELOPE_VERSION = 1
#: the key a signature over the rest of a message will travel under (not signed yet):
#: ``from_dict`` ignores it, and ``canonical_json`` of ``unsigned(d)`` is what it covers
SIGNATURE_KEY = "sig"


class WireError(MessageRejected, ValueError):
    """A message that is not one of ours: malformed, unknown kind or version."""


def canonical_json(payload: dict[str, Any]) -> bytes:
    """The one byte string a message stands for (sorted keys, no spaces): what a signature covers."""
    return json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def unsigned(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` without its signature, i.e. what the signature was computed over."""
    return {k: v for k, v in d.items() if k != SIGNATURE_KEY}


def _field(d: dict[str, Any], key: str) -> Any:
    try:
        return d[key]
    except KeyError:
        raise WireError(f"message has no {key!r}: {sorted(d)}") from None


@dataclass(frozen=True)
class TaskEnvelope:
    """One attempt of a match, as the coordinator sends it to a worker.

    Paths never travel: a worker shares no file system with the coordinator;
    entries come by digest (``spec.entries``). The heartbeat timing is the
    coordinator's (its lease depends on it).
    """

    run: str
    attempt: int
    spec: MatchSpec
    heartbeat_s: float = 5.0
    heartbeat_ttl_s: float = 15.0
    #: a second copy of a straggling attempt (docs/fleet.md): the worker that plays the first
    #: copy (its enrolled name), which hands this one back for another worker to take
    copy_of: str = ""
    #: a verification replay of an accepted attempt (``timing.verify_sample``, docs/fleet.md): the
    #: worker that played it (its enrolled name), which hands this one back for another to take
    verify_of: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "v": ENVELOPE_VERSION,
            "run": self.run,
            "attempt": self.attempt,
            "spec": self.spec.to_dict(),
            "heartbeat_s": self.heartbeat_s,
            "heartbeat_ttl_s": self.heartbeat_ttl_s,
        }
        if self.copy_of:
            d["copy_of"] = self.copy_of
        if self.verify_of:
            d["verify_of"] = self.verify_of
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TaskEnvelope:
        if d.get("v") != ENVELOPE_VERSION:
            raise WireError(f"unknown envelope version {d.get('v')!r}; upgrade this worker")
        try:
            return cls(
                run=str(_field(d, "run")),
                attempt=int(_field(d, "attempt")),
                spec=MatchSpec.from_dict(_field(d, "spec")),
                heartbeat_s=float(d.get("heartbeat_s", 5.0)),
                heartbeat_ttl_s=float(d.get("heartbeat_ttl_s", 15.0)),
                copy_of=str(d.get("copy_of", "")),
                verify_of=str(d.get("verify_of", "")),
            )
        except (KeyError, TypeError) as e:
            raise WireError(f"malformed envelope: {e}") from e


@dataclass(frozen=True)
class Started:
    """A worker began playing an attempt. ``execution`` is unique per task execution,
    so a second one for the same attempt means the broker redelivered the task."""

    KIND: ClassVar[str] = "started"

    match_id: str
    attempt: int
    worker: str
    execution: str = ""
    ts: float = 0.0  # the worker's wall clock (time.time()), for logs only
    #: it plays a second copy of a straggling attempt (``TaskEnvelope.copy_of``)
    copy: bool = False
    #: it plays a verification replay (``TaskEnvelope.verify_of``)
    verify: bool = False

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": self.KIND,
            "match_id": self.match_id,
            "attempt": self.attempt,
            "worker": self.worker,
            "execution": self.execution,
            "ts": self.ts,
        }
        if self.copy:
            d["copy"] = True
        if self.verify:
            d["verify"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Started:
        return cls(
            str(_field(d, "match_id")),
            int(_field(d, "attempt")),
            str(d.get("worker", "")),
            str(d.get("execution", "")),
            float(d.get("ts", 0.0)),
            bool(d.get("copy", False)),
            bool(d.get("verify", False)),
        )


@dataclass(frozen=True)
class Finished:
    """A worker played an attempt (a failure of its machine is a ``system_error`` result)."""

    KIND: ClassVar[str] = "result"

    match_id: str
    attempt: int
    result: MatchResult
    worker: str = ""
    #: the run the attempt belongs to: a result is bound to its run, match and attempt (and,
    #: through ``result.digests``, to the code it played; docs/fleet.md)
    run: str = ""
    #: the result of a verification replay (``TaskEnvelope.verify_of``): never official
    verify: bool = False

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "kind": self.KIND,
            "run": self.run,
            "match_id": self.match_id,
            "attempt": self.attempt,
            "worker": self.worker,
            "result": self.result.to_dict(),
        }
        if self.verify:
            d["verify"] = True
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Finished:
        return cls(
            str(_field(d, "match_id")),
            int(_field(d, "attempt")),
            MatchResult.from_dict(_field(d, "result")),
            str(d.get("worker", "")),
            str(d.get("run", "")),
            bool(d.get("verify", False)),
        )


@dataclass(frozen=True)
class Skipped:
    """A worker dropped a task unplayed: the run no longer wanted that attempt, or (``reason``
    set) the worker refuses it (quarantined, a limit above its ceilings) and hands it back."""

    KIND: ClassVar[str] = "skipped"

    match_id: str
    attempt: int
    worker: str
    reason: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.KIND,
            "match_id": self.match_id,
            "attempt": self.attempt,
            "worker": self.worker,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Skipped:
        return cls(
            str(_field(d, "match_id")),
            int(_field(d, "attempt")),
            str(d.get("worker", "")),
            str(d.get("reason", "")),
        )


@dataclass(frozen=True)
class LiveMatch:
    """What a worker is doing with an attempt right now, for the live progress display only.

    Not a note: it never reaches the store and decides nothing. A worker keeps it in the
    run's live hash (``KEYS.live``), rewritten at most once a second while it changes
    (``workers.live``); ``phase`` is "starting", "building" (``building`` names the
    entries whose build runs now) or "playing" (game ``game`` of ``games``, ``moves``
    moves into it).
    """

    match_id: str
    attempt: int
    worker: str
    players: tuple[str, ...]
    games: int
    phase: str = "starting"
    game: int = 0
    moves: int = 0
    building: tuple[str, ...] = ()

    def describe(self) -> str:
        """``"game 2/4, move 37"``, ``"building greedy, searcher"``, ``"starting"``."""
        if self.phase == "building":
            return "building " + ", ".join(self.building)
        if self.phase == "playing":
            return f"game {self.game}/{self.games}, move {self.moves}"
        return self.phase

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["players"] = list(self.players)
        d["building"] = list(self.building)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> LiveMatch:
        try:
            return cls(
                str(d["match_id"]),
                int(d["attempt"]),
                str(d.get("worker", "")),
                tuple(str(p) for p in d.get("players", [])),
                int(d.get("games", 0)),
                str(d.get("phase", "starting")),
                int(d.get("game", 0)),
                int(d.get("moves", 0)),
                tuple(str(b) for b in d.get("building", [])),
            )
        except (KeyError, TypeError, ValueError) as e:
            raise WireError(f"malformed live record: {e}") from e


#: what a worker pushes to a run's inbox
Note = Started | Finished | Skipped
_NOTE_KINDS: dict[str, type[Started] | type[Finished] | type[Skipped]] = {
    k.KIND: k for k in (Started, Finished, Skipped)
}


def note_from_dict(d: dict[str, Any]) -> Note:
    """The note a worker pushed; ``WireError`` when it is not one."""
    if not isinstance(d, dict):
        raise WireError(f"a note is a JSON object, not {type(d).__name__}")
    kind = d.get("kind")
    note_class = _NOTE_KINDS.get(str(kind))
    if note_class is None:
        raise WireError(f"unknown note kind {kind!r}")
    try:
        return note_class.from_dict(d)
    except (KeyError, TypeError, ValueError) as e:
        if isinstance(e, WireError):
            raise
        raise WireError(f"malformed {kind} note: {e}") from e
