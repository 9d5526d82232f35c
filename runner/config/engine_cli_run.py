"""A fastchess/cutechess command line (``runner.config.engine_cli``) as a tourney config, written
into the run directory (docs/engines.md, "tourney fastchess and tourney cutechess").

The engines named on the command line have no entry directory: each becomes one under
``RUN/cli/engines/NAME`` (``entry.yaml`` and, for a program the sandbox cannot see, a copy of
it, or of its ``dir=``), so that everything after is an ordinary run: packed by digest, sent to
any worker, played in the sandbox, re-judged, resumable. The book becomes ``RUN/cli/book.epd``:
the tool's openings in the order it would play them (``start``, ``order``, ``-srand``), one per
game pair (shuffled, then from ``start`` on round the book: fastchess's order), cycled when the
book is shorter than the match (as both tools wrap around), or the
start position for every pair without one. Writing the same command line again writes the same
files, so the same command resumes its run (an engine binary that changed refuses the resume).
"""

from __future__ import annotations

import os
import random
import re
import shutil
from pathlib import Path
from typing import Any

import chess
import yaml

from runner.config.engine_cli import EngineArgs, EngineCli, EngineCliError, pairs_per_encounter
from runner.domain.names import NAME_PATTERN, entry_name_problem
from runner.domain.openings import BookError, auto_per_match, read_book, select

#: directories the sandbox shows the engine as they are on this machine (workers/sandbox/bwrap_view.py)
SYSTEM_DIRS = ("/usr/", "/bin/", "/sbin/", "/lib/", "/lib64/", "/opt/")
#: the most a command-line engine's copied directory may hold
COPY_LIMIT_BYTES = 512 * 1024 * 1024
CLI_DIR = "cli"
CONFIG_FILE = "config.yaml"
BOOK_FILE = "book.epd"
#: a move's wall bound for engines given nodes or depth only (a clock bounds the rest)
UNTIMED_MOVE_WALL_S = 60.0


def write_cli_config(cli: EngineCli, run_dir: Path, cwd: Path) -> Path:
    """Write the config (and the engines' entries, the book) under ``run_dir/cli``; its path."""
    base = run_dir / CLI_DIR
    (base / "engines").mkdir(parents=True, exist_ok=True)
    playing = cli.playing()
    lines: list[dict[str, Any]] = []
    for e in playing:
        name = e.display_name()
        problem = entry_name_problem(name)
        if problem:
            raise EngineCliError(f"-engine name={name!r}: {problem}")
        _write_entry(base / "engines" / name, name, e, cwd)
        line: dict[str, Any] = {"path": f"engines/{name}"}
        own = _settings(e.over(EngineArgs()), include_each=False, each=cli.each)
        if own:
            line["engine"] = own
        lines.append(line)
    pairs = pairs_per_encounter(cli)
    _write_book(cli, base / BOOK_FILE, pairs, cwd)
    config: dict[str, Any] = {
        "name": tournament_name(cli),
        "description": f"tourney {cli.tool} " + ", ".join(e.display_name() for e in playing),
        "seed": cli.srand,
        "game": "chess",
        "game_params": {"variant": cli.variant},
        "openings": _openings(cli, pairs),
        "entries": lines,
        "stages": [_stage(cli, pairs, [e.display_name() for e in playing])],
    }
    each = _settings(cli.each, include_each=True, each=cli.each)
    if cli.engine_log:
        each["log"] = "engine"
    if each:
        config["each"] = each
    timed = any(k in e.settings for e in playing for k in ("tc", "st")) or not any(
        k in e.settings for e in playing for k in ("nodes", "depth")
    )
    if not timed:
        config["limits"] = {"move_wall_s": UNTIMED_MOVE_WALL_S}
    adjudication = _adjudication(cli, cwd)
    if adjudication:
        config["adjudication"] = adjudication
    if cli.use_affinity:
        config["timing"] = {"exclusive_cores": True}
    if cli.tournament == "gauntlet":
        config["entries"], config["seed_opponents"] = lines[: cli.seeds], lines[cli.seeds :]
    path = base / CONFIG_FILE
    text = f"# written by tourney {cli.tool} (runner/config/engine_cli_run.py)\n" + yaml.safe_dump(
        config, sort_keys=False
    )
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)
    return path


def tournament_name(cli: EngineCli) -> str:
    """``-event``'s name made a tournament name (letters, digits, - and _), else the tool's."""
    if cli.event:
        name = re.sub(r"[^A-Za-z0-9_-]+", "-", cli.event).strip("-_")[:64]
        if re.fullmatch(NAME_PATTERN, name):
            return name
    return cli.tool


def _settings(e: EngineArgs, *, include_each: bool, each: EngineArgs) -> dict[str, Any]:
    """The tourney engine settings (``EngineModel``) of one engine's own words, or of ``-each``'s."""
    out: dict[str, Any] = {}
    settings = (
        e.settings if include_each else {k: v for k, v in e.settings.items() if each.settings.get(k) != v}
    )
    for key, value in settings.items():
        if key in ("nodes", "depth", "timemargin"):
            out[key] = int(value)
        elif key == "st":
            out[key] = float(value)
        elif key == "restart":
            out[key] = value == "on"
        else:
            out[key] = value
    options = e.options if include_each else {k: v for k, v in e.options.items() if each.options.get(k) != v}
    if options:
        out["options"] = {k: _option_value(v) for k, v in options.items()}
    return out


def _option_value(text: str) -> str | int:
    """A whole number as a number (a spin option), anything else as written."""
    try:
        return int(text)
    except ValueError:
        return text


def _program(e: EngineArgs, cwd: Path) -> Path:
    """The engine's program on this machine: ``cmd`` in ``dir`` (or the current directory), or
    a bare name on PATH."""
    assert e.cmd is not None
    cmd = Path(e.cmd).expanduser()
    if not cmd.is_absolute():
        if e.dir is None and "/" not in e.cmd:
            found = shutil.which(e.cmd)
            if found is None:
                raise EngineCliError(
                    f"-engine cmd={e.cmd}: no such program (not in the current directory or PATH)"
                )
            return Path(found)
        cmd = (cwd / Path(e.dir or ".").expanduser() / cmd).resolve()
    if not cmd.is_file():
        raise EngineCliError(f"-engine cmd={e.cmd}: {cmd} is not a file")
    return cmd


def _write_entry(path: Path, name: str, e: EngineArgs, cwd: Path) -> None:
    """``entry.yaml`` and, for a program the sandbox does not show, a copy of it (module doc)."""
    program = _program(e, cwd)
    resolved = program.resolve()
    path.mkdir(parents=True, exist_ok=True)
    if any(str(resolved).startswith(d) for d in SYSTEM_DIRS) and e.dir is None:
        run = [str(program)]  # the sandbox shows it where it is
    elif e.dir is not None:
        source = (cwd / Path(e.dir).expanduser()).resolve()
        inside = resolved.relative_to(source) if resolved.is_relative_to(source) else None
        if inside is None:
            raise EngineCliError(f"-engine cmd={e.cmd}: {resolved} is not inside dir={e.dir}")
        _copy_tree(source, path / "engine")
        run = [f"./engine/{inside}"]
    else:
        target = path / "engine" / resolved.name
        target.parent.mkdir(exist_ok=True)
        if not target.is_file() or target.read_bytes() != resolved.read_bytes():
            shutil.copy2(resolved, target)
        run = [f"./engine/{resolved.name}"]
    entry = {
        "name": name,
        "game": "chess",
        "protocol": e.proto or "uci",
        "run": run + list(e.args),
    }
    text = f"# written by tourney for -engine cmd={e.cmd}\n" + yaml.safe_dump(entry, sort_keys=False)
    target_yaml = path / "entry.yaml"
    if not target_yaml.is_file() or target_yaml.read_text() != text:
        target_yaml.write_text(text)


def _copy_tree(source: Path, target: Path) -> None:
    total = sum(p.stat().st_size for p in source.rglob("*") if p.is_file())
    if total > COPY_LIMIT_BYTES:
        raise EngineCliError(
            f"-engine dir={source}: {total // 2**20} MiB; an engine's directory is copied into its "
            f"entry and may hold {COPY_LIMIT_BYTES // 2**20} MiB"
        )
    if target.exists():
        shutil.rmtree(target)
    # links are followed: an entry holds regular files only (docs/config.md)
    shutil.copytree(source, target, symlinks=False, ignore=shutil.ignore_patterns(".git"))


def _write_book(cli: EngineCli, path: Path, pairs: int, cwd: Path) -> None:
    """One opening per game pair, in play order, as EPD (module doc)."""
    chess960 = cli.variant == "chess960"
    fens: list[str]
    if cli.openings is None:
        if chess960:
            rng = random.Random(cli.srand)
            fens = [chess.Board.from_chess960_pos(rng.randrange(960)).fen() for _ in range(pairs)]
        else:
            fens = [chess.STARTING_FEN] * pairs
    else:
        o = cli.openings
        book_path = (cwd / Path(o.file).expanduser()).resolve()
        suffix = book_path.suffix.lower()
        if (o.format == "pgn") != (suffix == ".pgn"):
            raise EngineCliError(
                f"-openings file={o.file} format={o.format}: tourney reads a book by its suffix "
                f"(.pgn for PGN, anything else EPD); name the file accordingly"
            )
        try:
            book = read_book(book_path, plies=o.plies, chess960=chess960)
            shuffled = select(book, order=o.order, seed=cli.srand)
        except BookError as err:
            raise EngineCliError(f"-openings: {err}") from None
        if o.start > len(book):
            raise EngineCliError(f"-openings start={o.start}: the book has {len(book)} openings")
        # as fastchess: shuffled (order=random), then rotated to start, then cycled
        chosen = shuffled[o.start - 1 :] + shuffled[: o.start - 1]
        fens = [chosen[k % len(chosen)].fen for k in range(pairs)]
    lines = []
    for fen in fens:
        fields = fen.split()
        lines.append(" ".join(fields[:4]) + f" hmvc {fields[4]}; fmvn {fields[5]};")
    text = "\n".join(lines) + "\n"
    if not path.is_file() or path.read_text() != text:
        path.write_text(text)


def _openings(cli: EngineCli, pairs: int) -> dict[str, Any]:
    """The book, and for ``-concurrency`` above 2 the openings a match that give one pairing a
    match per slot (``per_match``'s default, ``auto``, makes 2 matches of a pairing: enough for
    2 slots, too few for more; docs/engines.md, "Openings")."""
    openings: dict[str, Any] = {"file": BOOK_FILE}
    per_slot = max(1, pairs // max(1, cli.concurrency))  # at least a match a slot
    if cli.concurrency > 2 and per_slot < auto_per_match(pairs):
        openings["per_match"] = per_slot
    return openings


def _stage(cli: EngineCli, pairs: int, names: list[str]) -> dict[str, Any]:
    if cli.sprt is not None:
        s = cli.sprt
        stage: dict[str, Any] = {
            "name": "sprt",
            "planner": "sprt",
            "boards": ["openings"],
            "elo0": s.elo0,
            "elo1": s.elo1,
            "alpha": s.alpha,
            "beta": s.beta,
            "model": s.model,
            "max_pairs": pairs,
            "engine": names[0],
            "baseline": names[1],
        }
        if cli.concurrency > 1:
            stage["concurrency"] = min(cli.concurrency, 1024)
        return stage
    return {
        "name": "match",
        "planner": "gauntlet" if cli.tournament == "gauntlet" else "round_robin",
        "boards": ["openings"],
        "games_per_pairing": 2,
        "penta": True,
    }


def _adjudication(cli: EngineCli, cwd: Path) -> dict[str, Any]:
    out: dict[str, Any] = {}
    try:
        if cli.resign is not None:
            r = cli.resign
            out["resign"] = {
                "movecount": int(r.get("movecount", "1")),
                "score": int(r.get("score", "0")),
                "twosided": r.get("twosided", "false").lower() == "true",
            }
        if cli.draw is not None:
            d = cli.draw
            out["draw"] = {
                "movenumber": int(d.get("movenumber", "0")),
                "movecount": int(d.get("movecount", "1")),
                "score": int(d.get("score", "0")),
            }
    except ValueError as err:
        raise EngineCliError(f"-resign/-draw: expected whole numbers ({err})") from None
    if cli.maxmoves is not None:
        out["maxmoves"] = cli.maxmoves
    if cli.tb is not None:
        dirs = [str((cwd / Path(d).expanduser()).resolve()) for d in cli.tb.paths]
        out["tb"] = {"path": os.pathsep.join(dirs), "pieces": cli.tb.pieces, "ignore_50": cli.tb.ignore_50}
    return out
