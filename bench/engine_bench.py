"""Engine plies per second against fastchess (issue 29 item 9): stockfish against itself at
2,000 nodes a move, 2 games at once, the same openings, played three ways:

* ``tourney run`` on a ``game: chess`` config, the sandbox on: each match starts both engines
  in sandboxes of their own and keeps them for all its games (``restart`` off,
  docs/engines.md); a match plays pairs / concurrency openings (``openings.per_match``,
  ``--per-match``), so that tourney starts as many engines as fastchess (one a side per
  concurrent slot: 40 games, 2 at once = 2 matches of 10 pairs, 4 engine starts each side);
  plies are counted from the run store's results, the rate over the run's play loop (its
  start and stop are the e2e benchmark's);
* fastchess (``FASTCHESS=path``, or ``fastchess`` on PATH), the reference: engines kept alive
  between games; plies counted from its PGN;
* the bare python-chess loop (bench/bare_uci.py): raw pipes, engines kept alive. It stands in
  for fastchess where fastchess is absent, and shows what the Python side costs where it is.

Printed: each side's plies per second, ``engine plies per second, tourney / fastchess: R``
(issue target R >= 0.9; ``tourney / bare python-chess loop`` without fastchess), and ``time
losses at tc 1+0.01: L of G games`` for tourney and the reference, G = 200 by default
(``TIME_GAMES=N``; ``--quick``: 20). The tourney side is skipped, with a line saying so, where
``game: chess`` is unknown; the whole benchmark where stockfish is not installed.

Stockfish with one thread at fixed nodes, after ``ucinewgame``, plays the same game from the
same opening whoever drives it, so the three sides' ply counts at fixed nodes should agree:
the line that prints them says when they do not.
"""

from __future__ import annotations

import argparse
import dataclasses
import io
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import chess
import chess.pgn
import yaml

from bench.bare_uci import EngineLimit, GamePlan, Played, play_games
from bench.tree_cpu import TreeCpu, run_measured

ROOT = Path(__file__).resolve().parents[1]
NODES = 2000
CONCURRENCY = 2
TIME_CONTROL = EngineLimit(base_s=1.0, inc_s=0.01, margin_ms=50)
#: the engine options every side sets (the chess branch's entries/chess/stockfish has these)
OPTIONS = {"Hash": "16", "Threads": "1"}
#: games of the plies-per-second comparison, and of the time-loss count, by default and --quick
RATE_GAMES, RATE_GAMES_QUICK = 40, 8
RATE_ROUNDS, RATE_ROUNDS_QUICK = 3, 1
TIME_GAMES, TIME_GAMES_QUICK = 200, 20
#: the engine's program name (``/proc/PID/comm``, 15 characters at most): its CPU apart
ENGINE_COMMS = ("stockfish",)
#: tries of a fastchess run that failed on an engine's start-up (its uciok timeout, under load)
STARTUP_TRIES = 3
#: fastchess's PGN Termination for a flag that fell
TIME_FORFEIT = "time forfeit"

#: openings played when the repository ships no EPD book under configs/ (each twice, colours
#: swapped): ten main lines, 6 to 10 plies deep
FALLBACK_BOOK = (
    'r1bqkbnr/1ppp1ppp/p1n5/1B2p3/4P3/5N2/PPPP1PPP/RNBQK2R w KQkq - ; c0 "Ruy Lopez"',
    'rnbqkb1r/1p2pppp/p2p1n2/8/3NP3/2N5/PPP2PPP/R1BQKB1R w KQkq - ; c0 "Sicilian Najdorf"',
    'rnbqkb1r/ppp2ppp/4pn2/3p4/3PP3/2N5/PPP2PPP/R1BQKBNR w KQkq - ; c0 "French"',
    'rn1qkbnr/pp2pppp/2p5/3pPb2/3P4/8/PPP2PPP/RNBQKBNR w KQkq - ; c0 "Caro-Kann"',
    'rnbqkb1r/ppp2ppp/4pn2/3p4/2PP4/2N5/PP2PPPP/R1BQKBNR w KQkq - ; c0 "Queen\'s Gambit Declined"',
    'rnbqkb1r/pp2pppp/2p2n2/3p4/2PP4/5N2/PP2PPPP/RNBQKB1R w KQkq - ; c0 "Slav"',
    'rnbqk2r/ppp1ppbp/3p1np1/8/2PPP3/2N5/PP3PPP/R1BQKBNR w KQkq - ; c0 "King\'s Indian"',
    'rnbqk2r/pppp1ppp/4pn2/8/1bPP4/2N5/PP2PPPP/R1BQKBNR w KQkq - ; c0 "Nimzo-Indian"',
    'rnbqkb1r/ppp2ppp/5n2/3pp3/2P5/2N3P1/PP1PPP1P/R1BQKBNR w KQkq - ; c0 "English"',
    'r1bqk2r/pppp1ppp/2n2n2/2b1p3/2B1P3/2P2N2/PP1P1PPP/RNBQK2R w KQkq - ; c0 "Italian"',
)


# -- openings ----------------------------------------------------------------------------------
def book_lines() -> tuple[str, list[str]]:
    """(where the openings come from, their EPD lines): the first EPD book under configs/, else
    the fallback list above."""
    books = sorted(ROOT.glob("configs/**/*.epd"))
    if books:
        lines = [ln.strip() for ln in books[0].read_text().splitlines()]
        return str(books[0].relative_to(ROOT)), [ln for ln in lines if ln and not ln.startswith("#")]
    return "the bench's own 10 openings", list(FALLBACK_BOOK)


def opening_fens(epd_lines: Sequence[str]) -> list[str]:
    """Each EPD line as a full FEN (every side is handed the same text)."""
    return [chess.Board.from_epd(line)[0].fen() for line in epd_lines]


def plan_games(fens: Sequence[str], games: int) -> list[GamePlan]:
    """``games`` (rounded up to even) games as fastchess's ``-openings order=sequential -games 2``
    plays them: opening k twice, the second time with colours swapped, wrapping around."""
    pairs = (games + 1) // 2
    return [GamePlan(fens[k % len(fens)], swapped) for k in range(pairs) for swapped in (False, True)]


# -- fastchess ---------------------------------------------------------------------------------
def find_fastchess() -> str | None:
    """``FASTCHESS=path``, else ``fastchess`` on PATH, else None."""
    given = os.environ.get("FASTCHESS")
    if given:
        return given if os.access(given, os.X_OK) else None
    return shutil.which("fastchess")


def find_stockfish() -> str | None:
    return shutil.which("stockfish") or next(
        (p for p in ("/usr/games/stockfish",) if os.access(p, os.X_OK)), None
    )


def fastchess_argv(
    fastchess: str, stockfish: str, book: Path, pgn: Path, games: int, limit: EngineLimit
) -> list[str]:
    """fastchess's command line for the same games (docs/engines.md maps its flags to ours)."""
    each = ["proto=uci", *(f"option.{k}={v}" for k, v in OPTIONS.items()), f"timemargin={limit.margin_ms}"]
    each += [f"tc={limit.tc()}"] if limit.clock else ["tc=inf", f"nodes={limit.nodes}"]
    return [
        fastchess,
        *("-engine", f"cmd={stockfish}", "name=stockfish-a"),
        *("-engine", f"cmd={stockfish}", "name=stockfish-b"),
        *("-each", *each),
        *("-openings", f"file={book}", "format=epd", "order=sequential"),
        *("-rounds", str((games + 1) // 2), "-games", "2"),
        *("-concurrency", str(CONCURRENCY)),
        *("-pgnout", f"file={pgn}"),
    ]


def count_pgn(text: str) -> tuple[int, int, int]:
    """(games, plies, games lost on time) in a PGN, as fastchess writes it."""
    games = plies = flags = 0
    stream = io.StringIO(text)
    while (game := chess.pgn.read_game(stream)) is not None:
        games += 1
        plies += sum(1 for _ in game.mainline_moves())
        flags += game.headers.get("Termination", "") == TIME_FORFEIT
    return games, plies, flags


def book_line(fen: str) -> str:
    """``fen`` as a line of fastchess's EPD book, its move counters kept (``hmvc``, ``fmvn``)."""
    board = chess.Board(fen)
    return board.epd(hmvc=board.halfmove_clock, fmvn=board.fullmove_number)


@dataclasses.dataclass(frozen=True)
class FastchessRun:
    """One whole fastchess command: the PGN it wrote, its wall seconds, its tree's CPU."""

    pgn: str
    wall_s: float
    cpu: TreeCpu


def play_fastchess(
    fastchess: str, stockfish: str, fens: Sequence[str], games: int, limit: EngineLimit, tmp: Path
) -> FastchessRun:
    """fastchess's command for ``games`` games from ``fens`` (``fastchess_argv``), run and measured;
    played again (up to ``STARTUP_TRIES``) when fastchess gave up on an engine's start under load."""
    book, pgn = tmp / "fastchess-book.epd", tmp / "fastchess.pgn"
    # one book line per opening of the schedule, with its move counters (hmvc, fmvn): stockfish
    # scales its evaluation by the 50-move counter, so a book without them plays other games
    book.write_text("".join(book_line(fen) + "\n" for fen in fens))
    argv = fastchess_argv(fastchess, stockfish, book, pgn, games, limit)
    for attempt in range(STARTUP_TRIES):
        pgn.unlink(missing_ok=True)  # fastchess appends to a PGN that is there
        started = time.perf_counter()
        done, cpu = run_measured(argv, cwd=tmp, timeout=3600)
        wall = time.perf_counter() - started
        # under load fastchess may give up on an engine's uciok (its own start-up timeout): again
        if done.returncode == 0 or "startup failure" not in done.stdout or attempt + 1 == STARTUP_TRIES:
            break
        print("  (fastchess: an engine's start-up timed out under load; played again)", flush=True)
    if done.returncode != 0:
        raise RuntimeError(
            f"fastchess failed ({done.returncode}): {done.stdout[-1500:]}{done.stderr[-1500:]}"
        )
    return FastchessRun(pgn.read_text(), wall, cpu)


def run_fastchess(
    fastchess: str, stockfish: str, fens: Sequence[str], games: int, limit: EngineLimit, tmp: Path
) -> Played:
    ran = play_fastchess(fastchess, stockfish, fens, games, limit, tmp)
    played, plies, flags = count_pgn(ran.pgn)
    return Played(played, plies, flags, ran.wall_s, ran.cpu.total_s, ran.cpu.of(*ENGINE_COMMS))


# -- tourney -----------------------------------------------------------------------------------
def chess_known() -> bool:
    from runner.domain.games import GAME_NAMES

    return "chess" in GAME_NAMES


def fastchess_like_per_match(pairs: int) -> int:
    """``openings.per_match`` that starts as many engines as fastchess does: one match per
    worker (``CONCURRENCY``), as fastchess keeps one engine a side per concurrent slot for all
    of its games; each match then starts its two engines once (docs/engines.md, "Openings")."""
    return max(1, -(-pairs // CONCURRENCY))


def stockfish_entries(tmp: Path, stockfish: str) -> list[dict[str, str]]:
    """The config's ``entries``: stockfish-a and stockfish-b, entry directories under ``tmp``
    running ``stockfish`` with ``OPTIONS``."""
    entries = []
    for name in ("stockfish-a", "stockfish-b"):
        entry = tmp / "entries" / name
        entry.mkdir(parents=True, exist_ok=True)
        spec = {"name": name, "game": "chess", "protocol": "uci", "command": stockfish, "options": OPTIONS}
        (entry / "entry.yaml").write_text(yaml.safe_dump(spec))
        entries.append({"path": str(entry)})
    return entries


def tourney_config(
    tmp: Path,
    stockfish: str,
    plans: Sequence[GamePlan],
    limit: EngineLimit,
    sandbox: str,
    per_match: int | None = None,
) -> Path:
    """A ``game: chess`` config playing ``plans`` (docs/engines.md, docs/config.md "Engine
    settings"): two stockfish entries, the pairs' openings as a sequential book, a round robin
    of 2 games an opening (each side white once, the better seed first, as fastchess's
    ``-games 2``), ``per_match`` openings a match (None: ``fastchess_like_per_match``; 1: one
    opening's pair a match, two engine starts a pair)."""
    entries = stockfish_entries(tmp, stockfish)
    fens = [plan.fen for plan in plans[::2]]
    tag = "tc" if limit.clock else "nodes"
    book = tmp / f"engine-bench-{tag}.epd"
    book.write_text("".join(book_line(fen) + "\n" for fen in fens))
    k = fastchess_like_per_match(len(fens)) if per_match is None else per_match
    openings: dict[str, object] = {"file": str(book), "order": "sequential"}
    openings |= {"per_match": k}  # always said: the default (auto) is not one pair a match
    each: dict[str, object] = {"timemargin": limit.margin_ms}
    each |= {"tc": limit.tc()} if limit.clock else {"nodes": limit.nodes}
    config = {
        "name": "engine-bench",
        "seed": 29,
        "game": "chess",
        "sandbox": sandbox,
        # at fixed nodes the move wall bounds a move; generous, a machine under load is no engine fault
        "limits": {"move_wall_s": 30.0},
        "each": each,
        "openings": openings,
        "entries": entries,
        "stages": [
            {"name": "bench", "planner": "round_robin", "games_per_pairing": 2, "boards": ["openings"]}
        ],
    }
    path = tmp / f"engine-bench-{tag}.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def run_tourney(
    stockfish: str,
    plans: Sequence[GamePlan],
    limit: EngineLimit,
    sandbox: str,
    tmp: Path,
    tree: Path = ROOT,
    per_match: int | None = None,
) -> tuple[Played, float]:
    """(what ``tourney run`` played, timed over its play loop; its whole wall seconds); ``tree``:
    the source tree whose tourney runs (another checkout, for before / after figures; one
    without ``openings.per_match`` needs ``per_match`` 1)."""
    from runner.domain.match_values import VerdictKind
    from runner.storage.store import RunStore

    config = tourney_config(tmp, stockfish, plans, limit, sandbox, per_match)
    run_dir = Path(tempfile.mkdtemp(prefix=f"run-{config.stem}-", dir=tmp)) / "run"  # a fresh run each time
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree) + os.pathsep + env.get("PYTHONPATH", "")
    argv = [sys.executable, "-m", "runner.cli", "run", str(config), "--run-dir", str(run_dir)]
    argv += ["--workers", str(CONCURRENCY), "--no-progress"]
    started = time.perf_counter()
    done, cpu = run_measured(argv, cwd=tmp, env=env, timeout=3600)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"tourney run failed ({done.returncode}): {done.stderr[-2000:]}")
    games = plies = flags = 0
    with RunStore.open(run_dir) as store:
        loop_s = float(store.meta()["last_session"]["elapsed_s"])
        for row in store.match_rows():
            for game in row.result.games if row.result is not None else []:
                games += 1
                plies += len(game.moves)
                flags += game.verdict.kind is VerdictKind.TIMEOUT
    return Played(games, plies, flags, loop_s, cpu.total_s, cpu.of(*ENGINE_COMMS)), wall


def play_bare(plans: Sequence[GamePlan], limit: EngineLimit, stockfish: str) -> Played:
    """The bare python-chess loop, with its CPU: this process's and its engines' (each one
    waited for before ``play_games`` returns)."""

    def used() -> tuple[float, float]:
        own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime, kids.ru_utime + kids.ru_stime

    (own0, kids0) = used()
    played = play_games([stockfish], OPTIONS, plans, limit, CONCURRENCY)
    (own1, kids1) = used()
    return dataclasses.replace(played, cpu_s=own1 - own0 + kids1 - kids0, engine_cpu_s=kids1 - kids0)


def _sandbox() -> str:
    from bench.throughput_bench import _sandbox as available

    return available()


# -- the benchmark -----------------------------------------------------------------------------
def main(
    quick: bool = False,
    time_games: int | None = None,
    rate_games: int | None = None,
    before: Path | None = None,
    per_match: int | None = None,
    one_pair_side: bool = False,
) -> None:
    stockfish = find_stockfish()
    if stockfish is None:
        print("engine bench skipped: stockfish is not installed (apt-get install stockfish)")
        return
    if rate_games is None:
        rate_games = RATE_GAMES_QUICK if quick else RATE_GAMES
    if time_games is None:
        time_games = int(os.environ.get("TIME_GAMES", TIME_GAMES_QUICK if quick else TIME_GAMES))
    source, epd = book_lines()
    fens = opening_fens(epd)
    fastchess = find_fastchess()
    # the sandbox the tourney side runs in; None: no tourney side (game: chess unknown here)
    sandbox = _sandbox() if chess_known() else None
    load = os.getloadavg()
    print(
        f"engine bench: {stockfish} vs itself, {NODES} nodes a move, {CONCURRENCY} games at once, "
        f"openings from {source}; load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}",
        flush=True,
    )
    if fastchess is None:
        given = os.environ.get("FASTCHESS")
        where = f"FASTCHESS={given} is no executable" if given else "not on PATH, FASTCHESS=path unset"
        print(f"  fastchess not found ({where}): the bare python-chess loop is the reference")
    if sandbox is None:
        print(
            "  tourney side skipped: game: chess is unknown to this tourney (it comes with the chess branch)"
        )
    tmp = Path(tempfile.mkdtemp(prefix="tourney-engine-bench-"))
    try:
        rounds = RATE_ROUNDS_QUICK if quick else RATE_ROUNDS
        _compare_rates(
            stockfish, fastchess, sandbox, fens, rate_games, rounds, tmp, before, per_match, one_pair_side
        )
        _time_losses(stockfish, fastchess, fens, time_games, sandbox, tmp, per_match)
        load = os.getloadavg()
        print(f"  load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _compare_rates(
    stockfish: str,
    fastchess: str | None,
    sandbox: str | None,
    fens: Sequence[str],
    games: int,
    rounds: int,
    tmp: Path,
    before: Path | None = None,
    per_match: int | None = None,
    one_pair_side: bool = False,
) -> None:
    """Plies per second of each side over ``rounds`` rounds, in an order that rotates each round
    (outside load hits every side alike); each ratio is the median of its rounds' ratios.
    ``before``: another source tree whose tourney is one more side ("tourney before");
    ``one_pair_side``: this tree's tourney at one opening a match is one more ("one pair")."""
    limit = EngineLimit(nodes=NODES, margin_ms=TIME_CONTROL.margin_ms)
    plans = plan_games(fens, games)
    pairs = len(plans) // 2
    k = fastchess_like_per_match(pairs) if per_match is None else per_match
    sides = [*(["fastchess"] if fastchess else []), "bare", *(["tourney"] if sandbox else [])]
    sides += ["before"] if sandbox and before else []
    sides += ["one pair"] if sandbox and one_pair_side else []
    played: dict[str, list[Played]] = {side: [] for side in sides}
    walls: dict[str, list[float]] = {"tourney": [], "before": [], "one pair": []}
    for r in range(rounds):
        for side in sides[r % len(sides) :] + sides[: r % len(sides)]:
            if side == "fastchess" and fastchess is not None:
                played[side].append(run_fastchess(fastchess, stockfish, fens, len(plans), limit, tmp))
            elif side in walls and sandbox is not None:
                tree = before if side == "before" and before else ROOT
                k_side = 1 if side == "one pair" else k
                loop, wall = run_tourney(stockfish, plans, limit, sandbox, tmp, tree, k_side)
                played[side].append(loop)
                walls[side].append(wall)
            else:
                played[side].append(play_bare(plans, limit, stockfish))
    names = {"fastchess": "fastchess", "bare": "bare python-chess loop", "tourney": "tourney"}
    names["before"] = f"tourney before ({before})"
    names["one pair"] = "tourney at one opening a match"
    for side in sides:
        rates = [p.plies_per_s for p in played[side]]
        extra = ""
        if side in walls:
            whole = statistics.median(p.plies / w for p, w in zip(played[side], walls[side], strict=True))
            extra = f" over its play loop ({whole:.1f} over the whole run), sandbox {sandbox}"
        print(
            f"  {names[side]}: {played[side][0].games} games, {played[side][0].plies} plies; "
            f"{statistics.median(rates):.1f} plies/s{extra} (rounds {', '.join(f'{x:.1f}' for x in rates)})",
            flush=True,
        )
    counts = {names[side]: {p.plies for p in played[side]} for side in sides}
    same = len(set().union(*counts.values())) == 1
    if not same:  # fixed nodes, one thread: every driver should see stockfish play the same games
        print(f"  NOT the same games: plies per side {counts}")

    def ratio(side: str, reference: str) -> str:
        per_round = [
            a.plies_per_s / b.plies_per_s for a, b in zip(played[side], played[reference], strict=True)
        ]
        return f"{statistics.median(per_round):.2f} (rounds {', '.join(f'{x:.2f}' for x in per_round)})"

    reference = "fastchess" if fastchess else "bare"
    _compare_cpu(played, names, reference)
    if fastchess:
        print(f"  engine plies per second, bare python-chess loop / fastchess: {ratio('bare', 'fastchess')}")
    line = f"engine plies per second, tourney / {names[reference]}"
    if "before" in played:
        print(f"  engine plies per second, tourney / tourney before: {ratio('tourney', 'before')}")
    if "one pair" in played:
        print(f"  engine plies per second, tourney / {names['one pair']}: {ratio('tourney', 'one pair')}")
    # the engine starts the two sides pay: each of tourney's matches starts one engine a side
    matches = -(-pairs // k)
    starts = f"tourney {k} openings a match: {matches} matches, {2 * matches} engine starts"
    starts += f"; fastchess {CONCURRENCY} slots, {2 * CONCURRENCY}" if fastchess else ""
    if sandbox:
        print(f"{line}: {ratio('tourney', reference)}; {starts}", flush=True)
    else:
        print(f"{line}: not measured (no game: chess here)", flush=True)


def _compare_cpu(played: dict[str, list[Played]], names: dict[str, str], reference: str) -> None:
    """CPU of every process a side ran, a ply (median of its rounds), and against the
    reference: on two shared cores it is what the load leaves of the plies per second, so it
    moves far less from round to round than the rates do."""

    def per_ply_ms(runs: list[Played], engines: bool) -> float:
        return statistics.median(
            1000.0 * ((p.engine_cpu_s if engines else p.cpu_s) or 0.0) / max(1, p.plies) for p in runs
        )

    for side, runs in played.items():
        if all(p.cpu_s is not None for p in runs):
            total, engine = per_ply_ms(runs, False), per_ply_ms(runs, True)
            print(f"  {names[side]}: CPU a ply {total:.2f} ms, of which the engines {engine:.2f} ms")
    for side, other in (("tourney", reference), ("tourney", "before"), ("tourney", "one pair")):
        if side in played and other in played and played[other][0].cpu_s is not None:
            ratio = per_ply_ms(played[side], False) / per_ply_ms(played[other], False)
            print(f"  CPU of every process a ply, {names[side]} / {names[other]}: {ratio:.2f}", flush=True)


def _time_losses(
    stockfish: str,
    fastchess: str | None,
    fens: Sequence[str],
    games: int,
    sandbox: str | None,
    tmp: Path,
    per_match: int | None = None,
) -> None:
    """``time losses at tc 1+0.01: L of G games`` for tourney (where it plays chess) and the reference."""
    plans = plan_games(fens, games)
    tc = TIME_CONTROL.tc()
    sides: list[tuple[str, Played]] = []
    if sandbox is not None:
        played = run_tourney(stockfish, plans, TIME_CONTROL, sandbox, tmp, per_match=per_match)[0]
        sides.append(("tourney", played))
    if fastchess is not None:
        sides.append(("fastchess", run_fastchess(fastchess, stockfish, fens, len(plans), TIME_CONTROL, tmp)))
    else:
        sides.append(
            ("bare python-chess loop", play_games([stockfish], OPTIONS, plans, TIME_CONTROL, CONCURRENCY))
        )
    for name, played in sides:
        print(f"time losses at tc {tc}: {played.time_losses} of {played.games} games ({name})", flush=True)


if __name__ == "__main__":
    cli = argparse.ArgumentParser(prog="python -m bench.engine_bench", description=__doc__)
    cli.add_argument("--quick", action="store_true", help=f"{RATE_GAMES_QUICK} and {TIME_GAMES_QUICK} games")
    cli.add_argument("--time-games", type=int, help=f"games at tc {TIME_CONTROL.tc()} (default {TIME_GAMES})")
    cli.add_argument("--before", type=Path, metavar="TREE", help="also run the tourney of another tree")
    cli.add_argument(
        "--per-match",
        type=int,
        metavar="K",
        help="tourney's openings a match (default: pairs / concurrency, fastchess's engine starts; "
        "1: one pair a match, as a tree without openings.per_match)",
    )
    cli.add_argument(
        "--one-pair-side",
        action="store_true",
        help="also run this tree's tourney at one opening a match, interleaved (a paired A/B of per_match)",
    )
    args = cli.parse_args()
    main(
        args.quick,
        args.time_games,
        before=args.before,
        per_match=args.per_match,
        one_pair_side=args.one_pair_side,
    )
