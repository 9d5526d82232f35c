"""Clocks scaled to the machine (docs/engines.md, "Clocks scaled to the machine").

On workers of unlike speed the same ``tc`` buys different searches; fishtest and OpenBench
scale each worker's clocks by how fast the engine runs there. An engine whose settings ask
for it (``scale_nps: N``) is measured here once per worker process and engine (its digest
and options, and the sandbox it runs in): a fixed search, ``go nodes SPEED_NODES`` from the
start position, in the same sandbox, on the same CPUs and under the same limits as its games
(a quota on the worker's CPU slows the measure as it slows the games). Its speed is the
search's nodes over its time as the engine reports them (``info ... nodes N ... time MS``),
else its ``nps``, else the nodes over the wall time measured here. The match's clocks for
that engine (``tc``'s base and increment, ``st``) are then multiplied by N / measured, and
every game of the match records the factor (``GameRecord.clock_scale``).

A measurement that fails (the engine crashes, says no ``uciok``, never finishes the search)
scales nothing: the games play at the nominal clocks and the engine's own failure shows as
its verdict in them, where it belongs; the worker's log says why. The measure speaks UCI
(the protocol of every engine fishtest and OpenBench test); an xboard engine is refused
with ``scale_nps`` when the config is checked.
"""

from __future__ import annotations

import dataclasses
import json
import logging
import time
from collections.abc import Callable, Mapping

from runner.domain.engine_clock import EngineSettings
from runner.domain.match_values import ClockScale, EntryRef, GameRecord, MatchResult, MatchSpec
from runner.domain.placeholders import fill
from runner.errors import EntryFault
from workers.artifacts import BuildFailed, EntryDir
from workers.sandbox.base import HostFactory, InteractiveProcess, RunOutcome

log = logging.getLogger(__name__)

#: the fixed search measured: nodes over ``SPEED_POSITIONS`` (about 1 s for stockfish here)
SPEED_NODES = 200_000
#: the positions searched, each from a fresh game: the start and three middlegames of
#: stockfish's own bench set (a game's moves are mostly middlegame searches)
SPEED_POSITIONS = (
    "startpos",
    "fen r3k2r/p1ppqpb1/bn2pnp1/3PN3/1p2P3/2N2Q1p/PPPBBPPP/R3K2R w KQkq - 0 10",
    "fen 4rrk1/pp1n3p/3q2pQ/2p1pb2/2PP4/2P3N1/P2B2PP/4RRK1 b - - 7 19",
    "fen rq3rk1/ppp2ppp/1bnpb3/3N2B1/3NP3/7P/PPPQ1PP1/2KR3R w - - 7 14",
)
#: the search before the measure, not counted
WARM_UP_NODES = 20_000
#: how long the measure may take, handshake and search together, before it is given up
SPEED_TIMEOUT_S = 120.0
#: the largest and smallest factor applied: past them the measure is taken for a broken one
FACTOR_RANGE = (0.02, 50.0)

#: measured speeds of this worker process, by ``_key``
_measured: dict[str, int] = {}


def _key(ref: EntryRef, settings: EngineSettings, hosts: HostFactory) -> str:
    return json.dumps([ref.digest, ref.run, ref.args, settings.options, hosts.name], sort_keys=True)


def scale_clocks(
    spec: MatchSpec, entry_dirs: Mapping[str, EntryDir], hosts: HostFactory
) -> tuple[MatchSpec, dict[str, ClockScale]]:
    """``spec`` with each ``scale_nps`` engine's clocks scaled to this worker, and the scales."""
    scales: dict[str, ClockScale] = {}
    entries = dict(spec.entries)
    for name, ref in spec.entries.items():
        settings = EngineSettings.from_dict(ref.engine) if ref.engine else None
        if settings is None or settings.scale_nps is None or not settings.timed:
            continue
        entry_dir = entry_dirs.get(name)
        if entry_dir is None or isinstance(entry_dir, BuildFailed):
            continue
        key = _key(ref, settings, hosts)
        nps = _measured.get(key)
        if nps is None:
            nps = measure_nps(ref, settings, entry_dir, hosts, spec)
            if nps is None:
                continue
            _measured[key] = nps
        low, high = FACTOR_RANGE
        factor = min(high, max(low, settings.scale_nps / nps))
        scales[name] = ClockScale(round(factor, 4), nps, settings.scale_nps)
        scaled = settings.scaled(scales[name].factor).to_dict()
        entries[name] = dataclasses.replace(ref, engine={**ref.engine, **scaled})
    if not scales:
        return spec, scales
    return dataclasses.replace(spec, entries=entries), scales


def with_scales(result: MatchResult, scales: dict[str, ClockScale]) -> MatchResult:
    """``result`` with each game recording the scales of the engines that played in it."""
    if not scales:
        return result
    games: list[GameRecord] = []
    for g in result.games:
        own = {name: s for name, s in scales.items() if name in g.order}
        games.append(dataclasses.replace(g, clock_scale=own) if own else g)
    return dataclasses.replace(result, games=games)


def measure_nps(
    ref: EntryRef, settings: EngineSettings, entry_dir: EntryDir, hosts: HostFactory, spec: MatchSpec
) -> int | None:
    """The engine's nodes per second on this worker (module doc), or None if it cannot say."""
    assert not isinstance(entry_dir, BuildFailed)
    argv = fill([*ref.run, *ref.args], mark="w", size="", move_time=spec.limits.move_wall_s, seed=spec.seed)
    limits = dataclasses.replace(spec.limits, move_wall_s=SPEED_TIMEOUT_S)
    host = hosts.open(entry_dir, limits, "w")
    try:
        proc = host.spawn(argv, limits)
        try:
            return _search(proc, settings, time.monotonic() + SPEED_TIMEOUT_S, ref.name)
        finally:
            proc.close()
    except Exception:
        log.exception("%s: speed measure failed; its clocks are not scaled", ref.name)
        return None
    finally:
        host.close()


class _NoAnswer(EntryFault):
    """The engine ended or fell silent during the measure (its games will say how, as verdicts)."""


def _search(proc: InteractiveProcess, settings: EngineSettings, deadline: float, name: str) -> int | None:
    def read() -> str:
        line = proc.read_line(max(0.0, deadline - time.monotonic()), pause=False)
        if isinstance(line, RunOutcome):
            raise _NoAnswer(f"ended or silent ({line.failure})")
        return line

    proc.send("uci\n")
    announced: set[str] = set()
    while (line := read()).strip() != "uciok":
        words = line.split()
        if words[:2] == ["option", "name"] and "type" in words:
            announced.add(" ".join(words[2 : words.index("type")]))
    for option, value in settings.options.items():  # Threads and Hash change the speed
        if option in announced:
            text = str(value).lower() if isinstance(value, bool) else str(value)
            proc.send(f"setoption name {option} value {text}\n")
    proc.send("isready\n")
    while read().strip() != "readyok":
        pass
    # a short search first: a fresh process pages its network and tables in on its first
    # search, which no game's move pays again
    _go(proc, read, "startpos", WARM_UP_NODES)
    nodes = ms = 0
    started = time.monotonic()
    for position in SPEED_POSITIONS:
        n, t = _go(proc, read, position, SPEED_NODES // len(SPEED_POSITIONS))
        nodes, ms = nodes + n, ms + t
    wall_s = time.monotonic() - started
    proc.send("quit\n")
    # the engine's own count over its own time; without a reported time, the wall time here
    speed = nodes * 1000 // ms if ms else int(nodes / wall_s) if wall_s > 0 else 0
    log.info("%s: %d nodes per second here (%d nodes in %d ms)", name, speed, nodes, ms)
    return speed or None


def _go(proc: InteractiveProcess, read: Callable[[], str], position: str, nodes: int) -> tuple[int, int]:
    """One search of ``nodes`` from ``position`` (a fresh game): the nodes and ms it reported
    last before its ``bestmove`` (ms 0 when it reports no ``time``)."""
    proc.send(f"ucinewgame\nposition {position}\ngo nodes {nodes}\n")
    searched = ms = 0
    while not (line := read()).startswith("bestmove"):
        words = line.split()
        if words[:1] == ["info"]:
            searched = _after(words, "nodes") or searched
            ms = _after(words, "time") or ms
    return searched or nodes, ms


def _after(words: list[str], key: str) -> int | None:
    if key in words:
        i = words.index(key)
        if i + 1 < len(words) and words[i + 1].isdigit():
            return int(words[i + 1])
    return None
