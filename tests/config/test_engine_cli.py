"""The fastchess / cutechess-cli command lines, read (runner/config/engine_cli.py) and written as
a tourney config (runner/config/engine_cli_run.py); docs/engines.md lists every flag."""

from __future__ import annotations

import shutil
import stat
from pathlib import Path

import chess
import pytest
import yaml

from runner.config import load_config
from runner.config.engine_cli import (
    EngineCliError,
    pairs_per_encounter,
    parse_engine_cli,
    split_flags,
)
from runner.config.engine_cli_run import write_cli_config
from runner.domain.stages.tournament import advance, match_spec

ROOT = Path(__file__).resolve().parents[2]
BOOK = ROOT / "configs" / "openings.epd"
SF = "/usr/games/stockfish"


def two(*rest: str) -> list[str]:
    return ["-engine", f"cmd={SF}", "name=new", "-engine", f"cmd={SF}", "name=base", *rest]


def test_flags_take_the_words_up_to_the_next_flag_and_a_negative_number_is_a_word() -> None:
    assert split_flags(["-engine", "cmd=a", "name=x", "-sprt", "elo0=-2", "elo1=3", "-repeat"]) == [
        ("-engine", ["cmd=a", "name=x"]),
        ("-sprt", ["elo0=-2", "elo1=3"]),
        ("-repeat", []),
    ]
    assert split_flags(["-resign", "movecount=3", "score=-0.5"])[0][1] == ["movecount=3", "score=-0.5"]
    with pytest.raises(EngineCliError, match="expected a flag"):
        split_flags(["cmd=a"])


def test_a_fastchess_sprt_command_line_reads_as_fastchess_reads_it() -> None:
    cli = parse_engine_cli(
        "fastchess",
        [
            "-engine", f"cmd={SF}", "name=New", "option.Threads=1", "nodes=2000000", 'args=--a "b c"',
            "-engine", f"cmd={SF}", "name=Base", "option.Threads=2", "plies=12",
            "-openings", f"file={BOOK}", "format=epd", "order=random", "start=3",
            "-each", "tc=300+5", "option.Hash=64", "timemargin=50", "restart=on",
            "-resign", "movecount=3", "score=600", "-draw", "movenumber=34", "movecount=8", "score=20",
            "-sprt", "elo0=0", "elo1=2", "alpha=0.05", "beta=0.05", "model=logistic",
            "-rounds", "100", "-concurrency", "3", "-pgnout", "notation=san", "nodes=true", "file=sprt.pgn",
            "-srand", "7", "-ratinginterval", "5", "-recover", "-maxmoves", "150",
        ],
    )  # fmt: skip
    new, base = cli.playing()
    assert (new.name, new.args, new.options) == ("New", ["--a", "b c"], {"Hash": "64", "Threads": "1"})
    assert new.settings == {"tc": "300+5", "timemargin": "50", "restart": "on", "nodes": "2000000"}
    assert base.settings["depth"] == "12"  # plies= is depth=
    assert cli.openings is not None and (cli.openings.order, cli.openings.start) == ("random", 3)
    assert cli.sprt is not None and (cli.sprt.elo1, cli.sprt.model) == (2.0, "logistic")
    assert (cli.rounds, cli.concurrency, cli.srand, cli.ratinginterval, cli.maxmoves) == (100, 3, 7, 5, 150)
    assert cli.pgnout == "sprt.pgn"
    assert pairs_per_encounter(cli) == 100
    assert any("-recover" in w for w in cli.warnings)


def test_cutechess_defaults_and_its_games_times_rounds() -> None:
    cli = parse_engine_cli(
        "cutechess",
        [*two(), "-each", "proto=uci", "arg=--x", "arg=y z", "-games", "2", "-rounds", "50", "-repeat"],
    )
    assert (cli.output, cli.ratinginterval, cli.report_penta) == ("cutechess", 0, False)
    assert cli.playing()[0].args == ["--x", "y z"]  # one argument per arg=
    assert pairs_per_encounter(cli) == 50
    # the chess-tuning-tools command line: -rounds N -games 2 -repeat -recover -debug
    assert pairs_per_encounter(parse_engine_cli("cutechess", [*two(), "-rounds", "8", "-games", "2"])) == 8
    with pytest.raises(EngineCliError, match="even number"):
        parse_engine_cli("cutechess", [*two(), "-rounds", "3"])


@pytest.mark.parametrize(
    ("words", "message"),
    [
        (["-engine", f"cmd={SF}"], "at least two -engine"),
        (two("-games", "3"), "-games 3: tourney plays every opening as a colour-swapped pair"),
        (two("-sprt", "elo0=5", "elo1=0"), "elo1 (0) must be above elo0 (5)"),
        (two("-sprt", "elo0=0", "elo1=400"), "elo1 (400) is beyond what a normalized SPRT can test"),
        (two("-sprt", "elo0=0", "elo1=5", "model=bayesian"), "model=bayesian: not supported by tourney"),
        (two("-noswap"), "-noswap: not supported by tourney"),
        (two("-each", "ponder"), "ponder: not supported by tourney: engines are frozen"),
        (two("-each", "conf=sf"), "conf: not supported by tourney"),
        (two("-each", "tc=inf"), "tc=inf: not supported"),
        (two("-tournament", "knockout"), "roundrobin or gauntlet"),
        (two("-frobnicate"), "-frobnicate: unknown fastchess flag"),
        (two("-each", "colour=red"), "-each colour: unknown fastchess engine key"),
        (["-engine", f"cmd={SF}", "-engine", f"cmd={SF}"], "the name 'stockfish' is taken"),
        (two("-rounds", "x"), "-rounds 'x': expected a whole number"),
        (two("-log", "engine=true"), "file= is required"),
        (two("-openings", "format=epd"), "file= is required"),
        (two("-variant", "crazyhouse"), "standard or fischerandom"),
    ],
)
def test_what_cannot_be_run_is_refused_naming_the_flag(words: list[str], message: str) -> None:
    with pytest.raises(EngineCliError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_engine_cli("fastchess", words)


@pytest.mark.skipif(not Path(SF).is_file(), reason="stockfish is not installed")
def test_log_engine_true_keeps_every_engine_line_of_the_run(tmp_path: Path) -> None:
    cli = parse_engine_cli("fastchess", [*two("-each", "nodes=500"), "-log", "file=run.log", "engine=true"])
    path = write_cli_config(cli, tmp_path / "run", tmp_path)
    each = load_config(path).each
    assert each is not None and each.log == "engine"
    assert cli.log_file == "run.log"


def test_the_name_defaults_to_the_program_file_name() -> None:
    cli = parse_engine_cli("fastchess", ["-engine", f"cmd={SF}", "-engine", "cmd=./engines/dev.exe"])
    assert [e.display_name() for e in cli.playing()] == ["stockfish", "dev"]


@pytest.mark.skipif(not Path(SF).is_file(), reason="stockfish is not installed")
def test_the_config_written_is_a_valid_tourney_config_of_the_same_match(tmp_path: Path) -> None:
    cli = parse_engine_cli(
        "fastchess",
        [
            *two("option.Hash=32"),
            "-each", "nodes=1000", "option.Threads=1",
            "-openings", f"file={BOOK}", "format=epd", "order=sequential", "start=19",
            "-rounds", "5", "-resign", "movecount=3", "score=600", "-maxmoves", "150",
            "-sprt", "elo0=0", "elo1=5", "-variant", "standard", "-srand", "3", "-concurrency", "4",
        ],
    )  # fmt: skip
    path = write_cli_config(cli, tmp_path / "run", tmp_path)
    config = load_config(path)
    assert config.game == "chess" and config.seed == 3
    assert list(config.entry_specs()) == ["new", "base"]
    raw = yaml.safe_load(path.read_text())
    assert raw["each"] == {"nodes": 1000, "options": {"Threads": 1}}
    assert raw["entries"][1]["engine"] == {"options": {"Hash": 32}}  # only its own words
    assert raw["limits"] == {"move_wall_s": 60.0}  # nodes only: no clock bounds a move
    stage = raw["stages"][0]
    assert (stage["planner"], stage["max_pairs"], stage["concurrency"], stage["engine"]) == (
        "sprt",
        5,
        4,
        "new",
    )
    assert raw["adjudication"] == {
        "resign": {"movecount": 3, "score": 600, "twosided": False},
        "maxmoves": 150,
    }
    # the book: one opening a pair, from the 19th of 20, wrapping around as fastchess does
    book = [line for line in (path.parent / "book.epd").read_text().splitlines() if line]
    source = [line for line in BOOK.read_text().splitlines() if line.strip() and not line.startswith("#")]
    assert len(book) == 5
    fen = [chess.Board(line.split(" hmvc")[0] + " 0 1").board_fen() for line in book]
    want = [chess.Board(" ".join(source[i].split()[:4])).board_fen() for i in (18, 19, 0, 1, 2)]
    assert fen == want
    # written again from the same command line: the same bytes (the same command resumes)
    before = {p: p.read_bytes() for p in (tmp_path / "run").rglob("*") if p.is_file()}
    write_cli_config(cli, tmp_path / "run", tmp_path)
    assert {p: p.read_bytes() for p in (tmp_path / "run").rglob("*") if p.is_file()} == before


def test_an_engine_outside_the_sandbox_view_is_copied_into_its_entry(tmp_path: Path) -> None:
    engine = tmp_path / "home" / "dev"
    engine.parent.mkdir()
    shutil.copy(ROOT / "tests" / "fixtures" / "chess" / "fake-uci" / "engine.py", engine)
    engine.chmod(engine.stat().st_mode | stat.S_IXUSR)
    (tmp_path / "home" / "net.bin").write_bytes(b"weights")
    cli = parse_engine_cli(
        "fastchess",
        [
            "-engine",
            "cmd=./dev",
            "dir=home",
            "name=dev",
            "-engine",
            "cmd=home/dev",
            "name=plain",
            "-rounds",
            "1",
        ],
    )
    path = write_cli_config(cli, tmp_path / "run", tmp_path)
    dev = yaml.safe_load((path.parent / "engines" / "dev" / "entry.yaml").read_text())
    plain = yaml.safe_load((path.parent / "engines" / "plain" / "entry.yaml").read_text())
    assert dev["run"] == ["./engine/dev"] and plain["run"] == ["./engine/dev"]
    # dir=: the whole directory (the engine's network beside it); without: the program alone
    assert (path.parent / "engines" / "dev" / "engine" / "net.bin").read_bytes() == b"weights"
    assert not (path.parent / "engines" / "plain" / "engine" / "net.bin").exists()
    book = (path.parent / "book.epd").read_text().splitlines()
    assert book == [
        "rnbqkbnr/pppppppp/8/8/8/8/PPPPPPPP/RNBQKBNR w KQkq - hmvc 0; fmvn 1;"
    ]  # no book: the start


def test_a_book_whose_suffix_disagrees_with_its_format_is_refused(tmp_path: Path) -> None:
    cli = parse_engine_cli("fastchess", two("-openings", f"file={BOOK}", "format=pgn"))
    with pytest.raises(EngineCliError, match="reads a book by its suffix"):
        write_cli_config(cli, tmp_path / "run", tmp_path)


@pytest.mark.parametrize(
    ("concurrency", "matches"),
    [("1", 2), ("2", 2), ("3", 4), ("4", 5), ("8", 10), ("16", 10)],
)
def test_a_match_s_concurrency_has_a_match_for_each_slot(
    tmp_path: Path, concurrency: str, matches: int
) -> None:
    """``-rounds 10``: the default grouping (2 matches of 5 pairs) fills 2 slots; ``-concurrency``
    above 2 gets a match a slot, as fastchess plays a game a slot (issue 35, item 8)."""
    cli = parse_engine_cli(
        "fastchess",
        [*two(), "-each", "nodes=1000", "-openings", f"file={BOOK}", "format=epd", "-rounds", "10",
         "-concurrency", concurrency],
    )  # fmt: skip
    config = load_config(write_cli_config(cli, tmp_path / "run", tmp_path))
    state = advance(config, {})
    assert len(state.matches) == matches
    games = [g.board_id for m in state.matches for g in match_spec(config, m).planned_games()]
    assert len(games) == 20 and len(set(games)) == 10  # every opening, both colours, once
