"""Start every chess engine of a run once before the run (docs/engines.md, "Before a run").

fastchess stops with the error when an engine cannot start; a tournament that scored it as
losing every pair would end an SPRT "H0 accepted" on a typo. And what an engine announces
at its handshake (UCI options, xboard features) decides whether it can play the game as
asked: chess960 needs UCI's ``UCI_Chess960`` or xboard's ``variants`` with ``fischerandom``;
an xboard engine on ``nodes`` needs ``feature nps=1``. So ``tourney run`` and ``tourney
play`` start each engine entry here (in the run's sandbox, as a game would), greet it as
the game would (``begin``: the protocols refuse what they cannot carry as a verdict), and
stop before any game with one line per engine that failed.

Entries with a ``build`` are skipped: they are built by the workers, and their failures are
``build_failed`` verdicts. Entries that would start the same engine (the same protocol,
command line and settings, and the same files beside their ``entry.yaml``: stockfish
against itself under two names) are started once, and a failure is each one's line: an
engine start is most of what the check costs (about 0.1 s of CPU for stockfish).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.domain.games import get_game
from runner.domain.match_values import Limits
from runner.domain.placeholders import fill
from runner.domain.registry import ENGINE_PROTOCOLS
from workers.protocols import Seat, make_protocol
from workers.protocols.engine import EngineProtocol
from workers.sandbox import host_factory


@dataclass(frozen=True)
class EngineToProbe:
    """One engine entry as the run will start it."""

    name: str
    protocol: str
    path: Path  # the entry's directory (its working copy is made from it)
    run: list[str]  # its command line (``command:`` or ``run:`` plus a variant's ``args``)
    engine: dict[str, Any]  # its engine settings (``EntryRef.engine``)


def engine_problems(
    engines: list[EngineToProbe],
    game_name: str,
    game_params: dict[str, Any],
    board_text: str,
    sandbox: str,
    limits: Limits,
) -> list[str]:
    """One line for each engine that cannot start or cannot play the game as asked (module
    doc), in the order given; [] when every one can."""
    engines = [e for e in engines if e.protocol in ENGINE_PROTOCOLS]
    if not engines:
        return []
    game = get_game(game_name, **game_params)
    hosts = host_factory(sandbox)
    alike: dict[str, EngineToProbe] = {}  # one engine of each kind (module doc)
    kinds = [_kind(e) for e in engines]
    for kind, e in zip(kinds, engines, strict=True):
        alike.setdefault(kind, e)
    with ThreadPoolExecutor(max_workers=min(4, len(alike)), thread_name_prefix="probe") as pool:
        answers = pool.map(lambda e: _probe(e, game, hosts, board_text, limits), alike.values())
        found = dict(zip(alike, answers, strict=True))
    return [
        f"engine {e.name} ({' '.join(e.run)}): {found[kind]}"
        for kind, e in zip(kinds, engines, strict=True)
        if found[kind] is not None
    ]


def _kind(e: EngineToProbe) -> str:
    """What decides how the check of ``e`` ends: its protocol, command line and settings, and
    every file of its directory but its ``entry.yaml`` (which names it), by content."""
    files = hashlib.sha256()
    for path in sorted(p for p in e.path.rglob("*") if p.is_file() and p != e.path / "entry.yaml"):
        files.update(str(path.relative_to(e.path)).encode() + b"\0")
        files.update(hashlib.sha256(path.read_bytes()).digest())
    return json.dumps([e.protocol, e.run, e.engine, files.hexdigest()], sort_keys=True, default=str)


def _probe(e: EngineToProbe, game: Any, hosts: Any, board_text: str, limits: Limits) -> str | None:
    """What stops ``e`` from playing (the verdict's detail), None if nothing does."""
    state = game.new_game(board_text, 2)
    mark = game.seat_mark(state, 0)
    host = hosts.open(e.path, limits, mark)
    proto = None
    try:
        argv = fill(list(e.run), mark=mark, size="", move_time=limits.move_wall_s, seed=0)
        seat = Seat(e.name, 0, mark, players=2)
        proto = make_protocol(e.protocol, game, host, argv, seat, limits, board_text, [e.engine, e.engine])
        assert isinstance(proto, EngineProtocol)
        verdict = proto.begin(state)
        if verdict is not None:
            return verdict.detail or verdict.kind.value
        return None
    finally:
        if proto is not None:
            with contextlib.suppress(Exception):  # it answered or not: the probe is over
                proto.end()
        host.close()
        if proto is not None:
            proto.close()
