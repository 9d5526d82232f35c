"""The fastchess and cutechess-cli command lines, read into one typed value (docs/engines.md,
"tourney fastchess and tourney cutechess").

``parse_engine_cli("fastchess", argv)`` reads the flags the two tools share (and a few of
their own) the way they read them: a flag starts with ``-`` and a letter, and takes the words
up to the next flag; ``-engine`` and ``-each`` take ``key=value`` words (``option.Hash=64``,
``args="a b"``; cutechess's repeatable ``arg=``), ``-openings``, ``-sprt``, ``-resign``,
``-draw``, ``-pgnout`` and ``-log`` too. What tourney cannot do is refused in one line that
names the flag and says why (``UNSUPPORTED``); what changes nothing here (``-recover``: always)
is accepted. ``runner.config.engine_cli_run`` turns the value into a tourney config.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass, field
from typing import Literal

from runner.config.engine_cli_flags import IGNORED, UNSUPPORTED, UNSUPPORTED_ENGINE_KEYS
from runner.domain.sprt import elo_bound_problem
from runner.errors import UsageError

Tool = Literal["fastchess", "cutechess"]
TOOLS: tuple[Tool, ...] = ("fastchess", "cutechess")

#: the engine keys that become a tourney engine setting (``EngineModel``)
SETTING_KEYS = ("tc", "st", "nodes", "depth", "timemargin", "restart")
_FLAG = re.compile(r"^--?[A-Za-z]")


class EngineCliError(UsageError):
    """A fastchess/cutechess command line tourney cannot run, with the flag at fault."""


@dataclass
class EngineArgs:
    """One ``-engine`` (or ``-each``): what the tool's key=value words said."""

    name: str | None = None
    cmd: str | None = None
    proto: str | None = None
    args: list[str] = field(default_factory=list)
    dir: str | None = None
    options: dict[str, str] = field(default_factory=dict)
    settings: dict[str, str] = field(default_factory=dict)  # tc, st, nodes, depth, timemargin, restart

    def over(self, each: EngineArgs) -> EngineArgs:
        """This engine with ``each`` filled in where it said nothing (-each)."""
        return EngineArgs(
            name=self.name,
            cmd=self.cmd or each.cmd,
            proto=self.proto or each.proto,
            args=self.args or list(each.args),
            dir=self.dir or each.dir,
            options={**each.options, **self.options},
            settings={**each.settings, **self.settings},
        )

    def display_name(self) -> str:
        """``name=``, else the program's file name without extension (as both tools do)."""
        if self.name:
            return self.name
        base = os.path.basename(self.cmd or "")
        return os.path.splitext(base)[0] or base


@dataclass
class OpeningsArgs:
    file: str
    format: str = "epd"
    order: str = "sequential"
    plies: int | None = None
    start: int = 1


@dataclass
class SprtArgs:
    elo0: float
    elo1: float
    alpha: float = 0.05
    beta: float = 0.05
    model: str = "normalized"


@dataclass
class TbArgs:
    paths: list[str]
    pieces: int | None = None
    ignore_50: bool = False


@dataclass
class EngineCli:
    """A whole fastchess/cutechess command line, read (module doc)."""

    tool: Tool
    engines: list[EngineArgs] = field(default_factory=list)
    each: EngineArgs = field(default_factory=EngineArgs)
    openings: OpeningsArgs | None = None
    games: int = 2
    rounds: int = 2
    repeat: int | None = None  # -repeat [N]: an opening is played N times (2: a colour-swapped pair)
    concurrency: int = 1
    tournament: str = "roundrobin"
    seeds: int = 1
    sprt: SprtArgs | None = None
    resign: dict[str, str] | None = None
    draw: dict[str, str] | None = None
    maxmoves: int | None = None
    tb: TbArgs | None = None
    pgnout: str | None = None
    ratinginterval: int = 10
    scoreinterval: int = 1
    srand: int = 0
    variant: str = "standard"
    log_file: str | None = None
    engine_log: bool = False  # -log engine=true: every engine line kept per game (logs/engines/)
    event: str | None = None
    output: str = "fastchess"  # the printed lines' format: fastchess or cutechess
    report_penta: bool = True
    use_affinity: bool = False
    warnings: list[str] = field(default_factory=list)

    def playing(self) -> list[EngineArgs]:
        """The engines with ``-each`` filled in."""
        return [e.over(self.each) for e in self.engines]


def split_flags(argv: list[str]) -> list[tuple[str, list[str]]]:
    """``[-flag, word, word, -flag ...]`` as (flag, words) in order; a word before any flag
    is an error. A negative number (``-0.5``) is a word, not a flag."""
    out: list[tuple[str, list[str]]] = []
    for word in argv:
        if _FLAG.match(word):
            out.append((word, []))
        elif not out:
            raise EngineCliError(f"{word!r}: expected a flag (-engine, -each, -rounds ...) first")
        else:
            out[-1][1].append(word)
    return out


def key_values(flag: str, words: list[str], *, bare: tuple[str, ...] = ()) -> list[tuple[str, str]]:
    """``key=value`` words in order (a value may hold ``=``); ``bare`` keys stand alone."""
    out: list[tuple[str, str]] = []
    for word in words:
        key, eq, value = word.partition("=")
        if not eq:
            if word in bare or word in UNSUPPORTED_ENGINE_KEYS:
                out.append((word, ""))
                continue
            raise EngineCliError(f"{flag} {word!r}: expected key=value")
        out.append((key, value))
    return out


def _int(flag: str, text: str, *, low: int = 0) -> int:
    try:
        value = int(text)
    except ValueError:
        raise EngineCliError(f"{flag} {text!r}: expected a whole number") from None
    if value < low:
        raise EngineCliError(f"{flag} {text!r}: expected at least {low}")
    return value


def _float(flag: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise EngineCliError(f"{flag} {text!r}: expected a number") from None


def _bool(flag: str, text: str) -> bool:
    if text.lower() in ("true", "on", "1", "yes"):
        return True
    if text.lower() in ("false", "off", "0", "no"):
        return False
    raise EngineCliError(f"{flag} {text!r}: expected true or false")


def _one(flag: str, words: list[str]) -> str:
    if len(words) != 1:
        raise EngineCliError(f"{flag} takes one value, got {len(words)}: {' '.join(words) or '(none)'}")
    return words[0]


def engine_args(tool: Tool, flag: str, words: list[str]) -> EngineArgs:
    """One ``-engine``/``-each``'s words."""
    e = EngineArgs()
    for key, value in key_values(flag, words):
        where = f"{flag} {key}"
        if key in UNSUPPORTED_ENGINE_KEYS:
            raise EngineCliError(f"{where}: not supported by tourney: {UNSUPPORTED_ENGINE_KEYS[key]}")
        if key == "name":
            e.name = value
        elif key == "cmd":
            e.cmd = value
        elif key == "proto":
            if value not in ("uci", "xboard"):
                raise EngineCliError(f"{where}={value}: expected uci or xboard")
            e.proto = value
        elif key == "dir":
            e.dir = value
        elif key == "args":  # fastchess: args="ARG1 ARG2", split as a shell would
            try:
                e.args.extend(shlex.split(value))
            except ValueError as err:
                raise EngineCliError(f"{where}={value!r}: {err}") from None
        elif key == "arg":  # cutechess: one argument per arg=
            e.args.append(value)
        elif key.startswith("option."):
            if not key[len("option.") :]:
                raise EngineCliError(f"{where}: option.NAME=VALUE needs a name")
            e.options[key[len("option.") :]] = value
        elif key in ("plies", "depth"):  # fastchess takes plies= with depth= as its alias
            e.settings["depth"] = str(_int(where, value, low=1))
        elif key == "nodes":
            e.settings["nodes"] = str(_int(where, value, low=1))
        elif key == "st":
            if _float(where, value) <= 0:
                raise EngineCliError(f"{where}={value}: expected seconds above 0")
            e.settings["st"] = value
        elif key == "timemargin":
            e.settings["timemargin"] = str(_int(where, value))
        elif key == "tc":
            if value == "inf":
                raise EngineCliError(
                    f"{where}=inf: not supported: give nodes= or depth= for an unbounded clock"
                )
            e.settings["tc"] = value
        elif key == "restart":
            if value not in ("on", "off", "auto"):
                raise EngineCliError(f"{where}={value}: expected on, off or auto")
            e.settings["restart"] = (
                "on" if value == "on" else "off"
            )  # auto: the engine's own choice, off here
        elif key == "debug":
            pass  # cutechess's per-engine UCI debug mode: nothing to show it in
        else:
            raise EngineCliError(f"{where}: unknown {tool} engine key")
    return e


def parse_engine_cli(tool: Tool, argv: list[str]) -> EngineCli:
    """Read a fastchess (or cutechess-cli) command line (module doc); ``EngineCliError``
    names the flag at fault."""
    cli = EngineCli(tool)
    if tool == "cutechess":  # cutechess's own defaults
        cli.games, cli.rounds, cli.ratinginterval, cli.output, cli.report_penta = 1, 1, 0, "cutechess", False
    for flag, words in split_flags(argv):
        _apply(cli, flag, words)
    _check(cli)
    return cli


def _apply(cli: EngineCli, flag: str, words: list[str]) -> None:
    tool = cli.tool
    if flag in UNSUPPORTED:
        raise EngineCliError(f"{flag}: not supported by tourney: {UNSUPPORTED[flag]}")
    if flag in IGNORED:
        cli.warnings.append(f"{flag}: accepted, changes nothing here: {IGNORED[flag]}")
        return
    if flag == "-engine":
        cli.engines.append(engine_args(tool, flag, words))
    elif flag == "-each":
        each = engine_args(tool, flag, words)
        if each.name:
            raise EngineCliError("-each name=: every engine needs its own name; give name= on its -engine")
        cli.each = EngineArgs(
            cmd=each.cmd or cli.each.cmd,
            proto=each.proto or cli.each.proto,
            args=each.args or cli.each.args,
            dir=each.dir or cli.each.dir,
            options={**cli.each.options, **each.options},
            settings={**cli.each.settings, **each.settings},
        )
    elif flag == "-openings":
        cli.openings = _openings(tool, words)
    elif flag == "-games":
        cli.games = _int(flag, _one(flag, words), low=1)
    elif flag == "-rounds":
        cli.rounds = _int(flag, _one(flag, words), low=1)
    elif flag == "-repeat":
        cli.repeat = _int(flag, words[0], low=1) if words else 2
        if tool == "fastchess":
            cli.games = 2  # fastchess: -repeat is -games 2
    elif flag == "-concurrency":
        cli.concurrency = _int(flag, _one(flag, words), low=1)
    elif flag == "-tournament":
        kind = _one(flag, words).replace("-", "")
        if kind not in ("roundrobin", "gauntlet"):
            raise EngineCliError(f"{flag} {words[0]}: tourney plays roundrobin or gauntlet")
        cli.tournament = kind
    elif flag == "-seeds":
        cli.seeds = _int(flag, _one(flag, words), low=1)
    elif flag == "-sprt":
        cli.sprt = _sprt(flag, words)
    elif flag == "-resign":
        cli.resign = dict(key_values(flag, words))
    elif flag == "-draw":
        cli.draw = dict(key_values(flag, words))
    elif flag == "-maxmoves":
        cli.maxmoves = _int(flag, _one(flag, words), low=0) or None  # 0: no limit (cutechess)
    elif flag == "-tb":
        paths = [p for w in words for p in re.split(r"[;:]", w) if p]
        if not paths:
            raise EngineCliError("-tb: expected the tablebases' directory")
        cli.tb = TbArgs(paths, cli.tb.pieces if cli.tb else None, cli.tb.ignore_50 if cli.tb else False)
    elif flag == "-tbpieces":
        pieces = _int(flag, _one(flag, words), low=3)
        cli.tb = TbArgs(cli.tb.paths if cli.tb else [], pieces, cli.tb.ignore_50 if cli.tb else False)
    elif flag == "-tbignore50":
        cli.tb = TbArgs(cli.tb.paths if cli.tb else [], cli.tb.pieces if cli.tb else None, True)
    elif flag == "-pgnout":
        cli.pgnout = _pgnout(tool, flag, words)
    elif flag == "-ratinginterval":
        cli.ratinginterval = _int(flag, _one(flag, words))
    elif flag == "-scoreinterval":
        cli.scoreinterval = _int(flag, _one(flag, words), low=1)
    elif flag == "-srand":
        cli.srand = _int(flag, _one(flag, words))
    elif flag == "-variant":
        variant = _one(flag, words)
        if variant not in ("standard", "fischerandom", "chess960"):
            raise EngineCliError(f"{flag} {variant}: tourney plays standard or fischerandom")
        cli.variant = "standard" if variant == "standard" else "chess960"
    elif flag == "-log":
        cli.log_file, cli.engine_log = _log(flag, words)
    elif flag == "-debug":  # cutechess: every engine line on stdout
        cli.warnings.append("-debug: engine traffic is not printed (tourney keeps each game's PGN)")
    elif flag == "-event":
        cli.event = " ".join(words)
    elif flag == "-output":
        kv = dict(key_values(flag, words))
        fmt = kv.get("format", "fastchess")
        if fmt not in ("fastchess", "cutechess"):
            raise EngineCliError(f"{flag} format={fmt}: expected fastchess or cutechess")
        cli.output = fmt
    elif flag == "-report":
        kv = dict(key_values(flag, words))
        cli.report_penta = _bool(f"{flag} penta", kv.get("penta", "true"))
    elif flag == "-use-affinity":
        cli.use_affinity = True
    else:
        raise EngineCliError(f"{flag}: unknown {tool} flag (docs/engines.md lists what tourney reads)")


def _openings(tool: Tool, words: list[str]) -> OpeningsArgs:
    kv = dict(key_values("-openings", words))
    unknown = set(kv) - {"file", "format", "order", "plies", "start", "policy"}
    if unknown:
        raise EngineCliError(f"-openings {sorted(unknown)[0]}=: unknown key")
    if "file" not in kv:
        raise EngineCliError("-openings: file= is required")
    fmt = kv.get("format", "pgn" if tool == "cutechess" else "epd")  # cutechess's default: pgn
    if fmt not in ("epd", "pgn"):
        raise EngineCliError(f"-openings format={fmt}: expected epd or pgn")
    order = kv.get("order", "sequential")
    if order not in ("sequential", "random"):
        raise EngineCliError(f"-openings order={order}: expected sequential or random")
    if kv.get("policy", "default") not in ("default", "round", "encounter"):
        raise EngineCliError(f"-openings policy={kv['policy']}: expected default, round or encounter")
    plies = _int("-openings plies", kv["plies"]) if "plies" in kv else None
    start = _int("-openings start", kv.get("start", "1"), low=1)
    return OpeningsArgs(kv["file"], fmt, order, plies, start)


def _sprt(flag: str, words: list[str]) -> SprtArgs:
    kv = dict(key_values(flag, words))
    unknown = set(kv) - {"elo0", "elo1", "alpha", "beta", "model"}
    if unknown:
        raise EngineCliError(f"{flag} {sorted(unknown)[0]}=: unknown key")
    for key in ("elo0", "elo1"):
        if key not in kv:
            raise EngineCliError(f"{flag}: {key}= is required")
    model = kv.get("model", "normalized")
    if model == "bayesian":
        raise EngineCliError(
            f"{flag} model=bayesian: not supported by tourney: its SPRT runs on game pairs "
            "(pentanomial), where BayesElo has no model; use model=normalized or model=logistic"
        )
    if model not in ("normalized", "logistic"):
        raise EngineCliError(f"{flag} model={model}: expected normalized or logistic")
    s = SprtArgs(
        _float(f"{flag} elo0", kv["elo0"]),
        _float(f"{flag} elo1", kv["elo1"]),
        _float(f"{flag} alpha", kv.get("alpha", "0.05")),
        _float(f"{flag} beta", kv.get("beta", "0.05")),
        model,
    )
    bounds = elo_bound_problem(s.elo0, s.elo1, s.model)
    if bounds is not None:
        raise EngineCliError(f"{flag}: {bounds}")
    if not (0 < s.alpha < 1 and 0 < s.beta < 1 and s.alpha + s.beta < 1):
        raise EngineCliError(f"{flag}: alpha and beta are between 0 and 1, their sum below 1")
    return s


def _pgnout(tool: Tool, flag: str, words: list[str]) -> str:
    if not words:
        raise EngineCliError(f"{flag}: expected a file")
    if tool == "cutechess" or "=" not in words[0]:
        return words[0]  # cutechess: -pgnout FILE [min] [fi]; the extras change nothing here
    kv = dict(key_values(flag, words))
    if "file" not in kv:
        raise EngineCliError(f"{flag}: file= is required")
    return kv["file"]


def _log(flag: str, words: list[str]) -> tuple[str, bool]:
    """The log's file and whether engine traffic is kept too (``each: {log: engine}``: each
    game's lines to and from every engine under the run's logs/engines/, docs/engines.md)."""
    kv = dict(key_values(flag, words))
    if "file" not in kv:
        raise EngineCliError(f"{flag}: file= is required")
    return kv["file"], _bool(f"{flag} engine", kv.get("engine", "false"))


def _check(cli: EngineCli) -> None:
    """What the flags say together."""
    if len(cli.engines) < 2:
        raise EngineCliError(f"expected at least two -engine, got {len(cli.engines)}")
    names: set[str] = set()
    for i, e in enumerate(cli.playing(), 1):
        if not e.cmd:
            raise EngineCliError(f"-engine #{i}: cmd= is required")
        name = e.display_name()
        if name in names:
            raise EngineCliError(f"-engine #{i}: the name {name!r} is taken; give each engine its own name=")
        names.add(name)
    if cli.sprt is not None and len(cli.engines) != 2:
        raise EngineCliError(f"-sprt: an SPRT is between two engines, not {len(cli.engines)}")
    if cli.tournament == "gauntlet" and cli.seeds >= len(cli.engines):
        raise EngineCliError(f"-seeds {cli.seeds}: a gauntlet needs an engine that is not a seed")
    if cli.tb is not None and not cli.tb.paths:
        raise EngineCliError("-tbpieces/-tbignore50: -tb PATH names the tablebases")
    if cli.tool == "fastchess" and cli.games != 2:
        raise EngineCliError(
            f"-games {cli.games}: tourney plays every opening as a colour-swapped pair: -games 2 (or -repeat)"
        )
    if cli.tool == "cutechess":
        total = cli.games * cli.rounds
        if cli.repeat not in (None, 2):
            raise EngineCliError(f"-repeat {cli.repeat}: tourney plays every opening twice, colours swapped")
        if total % 2:
            raise EngineCliError(
                f"-games {cli.games} -rounds {cli.rounds}: {total} games an encounter; tourney plays "
                "colour-swapped pairs, so an even number"
            )
        if cli.repeat is None:
            cli.warnings.append("without -repeat: tourney plays every opening twice, colours swapped")

    for key in ("movecount", "score"):
        if cli.resign is not None and key not in cli.resign:
            raise EngineCliError(f"-resign: {key}= is required")


def pairs_per_encounter(cli: EngineCli) -> int:
    """How many colour-swapped game pairs two engines play: fastchess ``-rounds`` (each round
    one opening, ``-games 2``); cutechess ``-games * -rounds`` games, two to an opening."""
    if cli.tool == "fastchess":
        return cli.rounds
    return cli.games * cli.rounds // 2
