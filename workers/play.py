"""``tourney play``: one match between entry directories, here and now.

    tourney play --game pousse --size 6 entries/pousse/a entries/pousse/b --games 2

Plays through ``workers.executor.execute_match`` like a worker does: builds
each entry once per digest in this machine's cache (``$TOURNEY_WORK_DIR``, or
``~/.cache/tourney``; a failed build is the entry's ``build_failed`` verdict,
never a traceback), plays K games with the seats rotated (two players:
alternating who goes first), prints every position with the move and its
time, then each game's result. ``--json`` prints one object and nothing
else on stdout: ``{"games": [GameRecord, ...]}`` (``runner.domain.wire``'s JSON of each).

Exit status: 0 when the match was played (whatever the entries did), 1 on a
runner error during the match, 2 for bad arguments, an unusable entry
directory, or an unavailable sandbox.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import random
import re
import sys
import time
from pathlib import Path
from typing import Any, TextIO

from runner.domain.engine_clock import INFINITE_TC, EngineSettings, TimeControl, merged
from runner.domain.entries import EntryError, EntrySpec, load_entry
from runner.domain.games import get_game, is_chess
from runner.domain.games.base import BoardError, Game
from runner.domain.inert import inert
from runner.domain.match_values import (
    EntryRef,
    GameRecord,
    Limits,
    MatchPlan,
    MatchSpec,
    MoveRecord,
    VerdictKind,
    stable_id,
)
from runner.domain.placeholders import ContestParams
from runner.domain.redaction import redact
from runner.domain.registry import ENGINE_PROTOCOLS, UNSANDBOXED_WARNING, protocol_carries
from runner.domain.seeds import derive_seed
from runner.domain.wire import to_builtins
from runner.errors import EXIT_INFRASTRUCTURE, InfrastructureFailure, UsageError
from workers.artifacts import ArtifactCache, BuildFailed, cache_key, local_fetch
from workers.engine_probe import EngineToProbe, engine_problems
from workers.executor import artifacts_dir, contest_params, execute_match, work_dir
from workers.match import MatchObserver
from workers.sandbox import HostError, host_factory


def cache_root() -> Path:
    """This machine's work directory (one for ``tourney play`` and ``tourney worker``)."""
    return work_dir()


def board_from_size(game_name: str, size: str) -> str:
    """The board text for ``--size``: pousse ``6``; mnk ``7x7x4`` or ``"7 7 4"``
    (gomoku also ``15`` or ``15x15``: K is 5); boxing ``32x16`` (an empty arena)."""
    nums_text = [p for p in re.split(r"[\sx,*]+", size.strip().lower()) if p]
    if not nums_text or not all(p.isdigit() for p in nums_text):
        raise UsageError(f"--size {size!r}: expected numbers such as 6, 7x7x4 or 32x16")
    nums = [int(p) for p in nums_text]
    if game_name == "boxing":
        if len(nums) != 2:
            raise UsageError(f"--size {size!r}: boxing takes WxH, e.g. 32x16")
        w, h = nums
        return ("-" * w + "\n") * h
    if game_name in ("mnk", "gomoku"):
        if game_name == "gomoku" and len(nums) in (1, 2):
            w, h = (nums[0], nums[0]) if len(nums) == 1 else (nums[0], nums[1])
            return f"{w} {h} 5"
        if len(nums) != 3:
            raise UsageError(f"--size {size!r}: {game_name} takes W H K, e.g. 7x7x4")
        return " ".join(str(n) for n in nums)
    if len(nums) != 1:
        raise UsageError(f"--size {size!r}: {game_name} takes one number, e.g. 6")
    return str(nums[0])


def _board(args: argparse.Namespace, game: Game[Any, Any]) -> str:
    if args.board and args.size:
        raise UsageError("give --board or --size, not both")
    if args.board:
        try:
            text = Path(args.board).read_text()
        except OSError as e:
            raise UsageError(f"--board {args.board}: {e.strerror or e}") from e
        if game.name != "boxing":
            text = text.strip()  # header-style boards: "6", "7 7 4"
    elif args.size:
        text = board_from_size(game.name, args.size)
    elif is_chess(game) and game.chess960:
        # one of the 960 starts, from --seed (the standard array is one in 960, not the rule)
        text = game.generate_board(random.Random(derive_seed(args.seed, "chess960")))
    else:
        text = game.default_board()
    try:
        game.validate_board(text)
    except BoardError as e:
        raise UsageError(f"not a {game.name} board: {e}") from e
    return text


def named_entry(arg: str) -> EntrySpec:
    """``ENTRY_DIR`` (its base entry) or ``ENTRY_DIR:VARIANT`` (one of its entry.yaml variants)."""
    path, variant = arg, ""
    if not Path(arg).is_dir() and ":" in arg:
        path, _, variant = arg.rpartition(":")
    try:
        specs = load_entry(Path(path))
    except EntryError as e:
        raise UsageError(str(e)) from e
    if not variant:
        return specs[0]  # the base entry comes first
    for spec in specs:
        if spec.name == variant:
            return spec
    raise UsageError(f"{path}: no variant {variant!r}; it has {', '.join(s.name for s in specs)}")


def _entries(args: argparse.Namespace, game: Game[Any, Any]) -> list[EntrySpec]:
    """The base entry of each ENTRY_DIR, renamed ``name#2``... when one plays itself."""
    specs: list[EntrySpec] = []
    seen: dict[str, int] = {}
    for d in args.entries:
        spec = named_entry(d)
        if not protocol_carries(spec.protocol, game.name):
            raise UsageError(
                f"{d}: protocol {spec.protocol} cannot play {game.name} (the entry is for {spec.game})"
            )
        seen[spec.name] = seen.get(spec.name, 0) + 1
        if seen[spec.name] > 1:
            spec = dataclasses.replace(spec, name=f"{spec.name}#{seen[spec.name]}")
        if spec.protocol in ENGINE_PROTOCOLS:
            spec = dataclasses.replace(spec, engine=merged(spec.engine, _engine_flags(args)))
            why = EngineSettings.from_dict(spec.engine).refusal(spec.protocol)
            if why is not None:
                raise UsageError(f"{d}: {why}")
        specs.append(spec)
    if not game.min_players <= len(specs) <= game.max_players:
        players = f"{game.min_players}..{game.max_players}"
        raise UsageError(f"{game.name} takes {players} players, got {len(specs)}")
    return specs


def _engine_flags(args: argparse.Namespace) -> dict[str, Any]:
    """``--tc`` / ``--st`` / ``--nodes`` / ``--depth`` as engine settings (docs/engines.md); none:
    the default clock."""
    flags: dict[str, Any] = {}
    if getattr(args, "tc", None) == INFINITE_TC:
        flags["tc"] = INFINITE_TC  # no clock: --nodes or --depth bound the search
    elif getattr(args, "tc", None):
        try:
            flags["tc"] = TimeControl.parse(args.tc).text()
        except ValueError as e:
            raise UsageError(f"--tc: {e}") from None
    if getattr(args, "st", None) is not None:
        if args.st <= 0:
            raise UsageError("--st must be positive")
        flags["st_s"] = args.st
    if getattr(args, "timemargin", None) is not None:
        if args.timemargin < 0:
            raise UsageError("--timemargin must be 0 or more (ms)")
        flags["timemargin_ms"] = args.timemargin
    for key in ("nodes", "depth"):
        value = getattr(args, key, None)
        if value is not None:
            if value < 1:
                raise UsageError(f"--{key} must be at least 1")
            flags[key] = value
    return flags


def seat_orders(names: list[str], games: int) -> list[list[str]]:
    """Game g seats the players rotated by g (two players: alternating who goes first)."""
    n = len(names)
    return [names[g % n :] + names[: g % n] for g in range(games)]


class _Printer(MatchObserver):
    """Prints positions and results as the match goes."""

    def __init__(self, out: TextIO, *, positions: bool, total: int):
        self.out = out
        self.positions = positions
        self.total = total
        self.marks: dict[str, str] = {}

    def game_started(self, number: int, order: list[str], game: Game[Any, Any], state: Any) -> None:
        self.marks = {name: game.seat_mark(state, seat) for seat, name in enumerate(order)}
        if not self.positions:
            return
        seats = ", ".join(f"{name} ({self.marks[name]})" for name in order)
        print(f"== game {number}/{self.total}: {seats}", file=self.out)
        print(game.render(state), file=self.out)

    def move_played(self, number: int, move: MoveRecord, game: Game[Any, Any], state: Any) -> None:
        if not self.positions:
            return
        who = f"{move.player} ({self.marks.get(move.player, '?')})"
        print(f"{who} plays {inert(move.move, one_line=True)}  [{move.wall_ms:.0f} ms]", file=self.out)
        print(game.render(state), file=self.out)

    def game_finished(self, number: int, record: GameRecord, game: Game[Any, Any], state: Any) -> None:
        print(result_line(number, record), file=self.out, flush=True)
        for name, lines in sorted(record.stderr.items()):  # what the entry said about itself
            for line in lines:
                shown = inert(redact(line), one_line=True)  # printed before the result is made
                print(f"  {name} wrote on stderr: {shown}", file=self.out, flush=True)


def result_line(number: int, record: GameRecord) -> str:
    v = record.verdict
    head = f"{record.winner} wins" if record.winner else "no winner"
    if v.kind is VerdictKind.NORMAL:
        why = record.reason
    else:
        why = f"{v.kind.value} by {v.player or 'the runner'}: {inert(redact(v.detail), one_line=True)}"
    scores = ", ".join(f"{name} {record.scores.get(name, 0)}" for name in record.order)
    return f"game {number}: {head} ({why}); scores: {scores}; {len(record.moves)} moves"


def _build_failures(
    cache: ArtifactCache, refs: dict[str, EntryRef], params: ContestParams | None
) -> dict[str, str]:
    """Each entry whose build failed (as the cache recorded it while the match was played), with why."""
    failed = {name: cache.cached(cache_key(ref, params)) for name, ref in refs.items()}
    return {name: f.detail for name, f in failed.items() if isinstance(f, BuildFailed)}


def write_play_pgn(path: Path, spec: MatchSpec, games: list[GameRecord]) -> None:
    """The match's games as PGN (``--pgn FILE``; docs/engines.md, "PGN"), Round 1, 2, ..."""
    # local: start-up time: the PGN writer loads python-chess, which only a chess match needs
    from runner.domain.chess_pgn import game_pgn

    now, text = time.time(), ""
    for n, record in enumerate(games, start=1):
        pgn = game_pgn("tourney play", spec, n, record, now, round_text=str(n))
        pgn.headers.pop("Opening", None)  # the board's id here is a hash, not a name
        text += str(pgn) + "\n\n"
    try:
        path.write_text(text)
    except OSError as e:
        raise UsageError(f"--pgn {path}: {e.strerror or e}") from e


def cmd_play(args: argparse.Namespace) -> int:
    params: dict[str, Any] = {"variant": args.variant} if getattr(args, "variant", None) else {}
    try:
        game = get_game(args.game, **params)
    except ValueError as e:
        raise UsageError(str(e)) from e
    if args.games < 1:
        raise UsageError("--games must be at least 1")
    if getattr(args, "pgn", None) and not is_chess(game):
        raise UsageError(f"--pgn: {game.name} games have no PGN (chess only)")
    board = _board(args, game)
    specs = _entries(args, game)
    try:
        hosts = host_factory(args.sandbox)
    except HostError as e:  # as `tourney run` and `tourney worker` say it (README.md, "Exit codes")
        raise InfrastructureFailure(str(e)) from e
    if args.sandbox == "none":
        print(f"tourney play: {UNSANDBOXED_WARNING}", file=sys.stderr, flush=True)
    move_time = args.move_time if args.move_time is not None else game.default_move_wall_s
    if move_time <= 0:
        raise UsageError("--move-time must be positive")
    limits = Limits(move_wall_s=move_time)
    # an engine that cannot start, or cannot play this game as asked, stops here in one line
    # each, as fastchess does (workers/engine_probe.py)
    to_probe = [
        EngineToProbe(s.name, s.protocol, s.path, [*s.run, *s.args], s.engine) for s in specs if not s.build
    ]
    problems = engine_problems(to_probe, args.game, params, board, args.sandbox, limits)
    if problems:
        raise UsageError("\n".join(problems))
    names = [s.name for s in specs]
    refs = {s.name: s.ref() for s in specs}
    match_id = stable_id("play", args.game, board, names, [s.digest for s in specs], args.games)
    spec = MatchSpec.playing(
        MatchPlan.ad_hoc(match_id, stable_id(board), seat_orders(names, args.games), stage="play"),
        game=args.game,  # the reference as given: a worker resolves it the same way
        board_text=board,
        entries=refs,
        limits=limits,
        seed=args.seed,
        sandbox=args.sandbox,
        game_params=params,
    )
    fetch = local_fetch({s.digest: s.path for s in specs})
    printer = None if args.json else _Printer(sys.stdout, positions=not args.quiet, total=args.games)
    result = execute_match(spec, fetch, artifacts_dir(), worker="", observer=printer, hosts=hosts)
    if getattr(args, "pgn", None):
        write_play_pgn(Path(args.pgn), spec, result.games)
    cache = ArtifactCache(artifacts_dir(), hosts)
    for name, detail in _build_failures(cache, refs, contest_params(spec)).items():
        print(f"{name}: build failed: {inert(detail, one_line=True)}", file=sys.stderr)
    if args.json:
        print(json.dumps({"games": to_builtins(result.games)}))
    else:
        wins = {name: sum(1 for g in result.games if g.winner == name) for name in names}
        points = {name: sum(g.scores.get(name, 0) for g in result.games) for name in names}
        summary = ", ".join(f"{n} {wins[n]} win(s), {points[n]} point(s)" for n in names)
        print(f"match: {summary}")
    error = result.system_error
    if error is not None:
        print(f"tourney play: runner error: {inert(error.detail, one_line=True)}", file=sys.stderr)
        return EXIT_INFRASTRUCTURE  # this machine failed, not the entries (README.md, "Exit codes")
    return 0
