"""What tourney does with the fastchess/cutechess flags it does not play as the tools do: those it
refuses and those it accepts without effect, each with the reason printed (docs/engines.md,
"tourney fastchess and tourney cutechess"); read by ``runner.config.engine_cli``."""

from __future__ import annotations

#: flags tourney refuses, and why (each is listed in docs/engines.md)
UNSUPPORTED = {
    "-quick": "name the engines with -engine and the book with -openings",
    "-epdout": "tourney writes PGN only (-pgnout); every game's final FEN is in it",
    "-noswap": "tourney plays every opening as a colour-swapped pair",
    "-reverse": "tourney plays every opening as a colour-swapped pair",
    "-config": "run the same command again: it resumes its run directory (--run-dir)",
    "-bookmode": "Polyglot books are not read; use -openings with an EPD or PGN book",
    "-resultformat": "the printed lines are fixed to the tool's default format",
    "-outcomeinterval": "not printed; `tourney standings RUN` shows every verdict",
    "-engines": "no engines.json is read; define engines with -engine",
    "-tbadjudicate": "tablebase adjudication decides both wins and draws",
    "--compliance": "not a match; run the engine with `tourney play`",
}
#: engine keys tourney refuses, and why
UNSUPPORTED_ENGINE_KEYS = {
    "conf": "no engines.json is read; give cmd= (and name=, proto=, option.X=) instead",
    "ponder": "engines are frozen between their turns: there is no pondering",
    "book": "Polyglot books are not read; use -openings",
    "bookdepth": "Polyglot books are not read; use -openings",
    "whitepov": "scores are read from the side to move, as UCI and xboard send them",
    "initstr": "nothing is sent to an engine but the protocol",
    "tscale": "the protocol's timeouts are fixed (5 s for uciok/readyok)",
    "stderr": "an engine's stderr is kept with its games (tourney matches, the report)",
    "trust": "every result is re-judged by the coordinator; no claim is trusted",
}
#: flags accepted that change nothing here, and why (docs/engines.md)
IGNORED = {
    "-recover": "always: a crashed engine is a verdict, and a run resumes after a crash",
    "-force-concurrency": "the local worker plays at most one game per core, -concurrency or not",
    "-autosaveinterval": "every result is saved as it comes",
    "-wait": "engines are frozen between games, nothing needs to settle",
    "-site": "the PGN's Site is tourney",
    "-strict": "tourney's warnings go to stderr and the run's log",
    "-testEnv": "no effect",
    "-show-latency": "the worker's own measure is each move's time in the PGN",
    "-startup-ms": "the protocol's start timeouts are fixed (5 s for uciok, readyok)",
    "-ucinewgame-ms": "the protocol's timeouts are fixed",
    "-ping-ms": "the protocol's timeouts are fixed",
    "-check-mate-pvs": "not checked",
    "-crc32": "not computed",
}
