"""Games from outside the package: import paths, the ``tourney.games`` entry points,
parameters validated against the constructor, and errors that say what went wrong."""

from __future__ import annotations

import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.config import ConfigError, load_config
from runner.domain.games import (
    BUILTIN_GAMES,
    ENTRY_POINT_GROUP,
    GameLoadError,
    GameParamsError,
    game_names,
    game_params,
    get_game,
    is_game_reference,
    load_game_class,
    plugins,
    same_game,
)

PLUGINS = Path(__file__).resolve().parents[1] / "fixtures" / "plugins"
GENERIC = Path(__file__).resolve().parents[1] / "fixtures" / "generic"


@pytest.fixture(autouse=True)
def plugin_path(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The fixture plugins importable, and no registry cache carried between tests."""
    monkeypatch.syspath_prepend(str(PLUGINS))
    plugins.plugin_games.cache_clear()
    load_game_class.cache_clear()
    yield
    plugins.plugin_games.cache_clear()
    load_game_class.cache_clear()


def test_an_import_path_gives_the_class_with_its_parameters() -> None:
    game = get_game("nim_game:Nim", max_take=2)
    assert game.name == "nim"
    state = game.new_game("5", 2)
    assert game.legal_moves(state) == [1, 2]
    assert game_params("nim_game:Nim") == {"max_take", "label"}
    # converted to the annotated type, as a config's YAML may write it
    assert get_game("nim_game:Nim", max_take="4").legal_moves(state) == [1, 2, 3, 4]


def test_the_builtin_games_are_import_paths_too() -> None:
    assert set(BUILTIN_GAMES) == {"boxing", "chess", "pousse", "mnk", "gomoku"}
    for name, path in BUILTIN_GAMES.items():
        assert load_game_class(name) is load_game_class(path)
        assert get_game(path).name == name
    assert same_game("mnk", "runner.domain.games.mnk:Mnk") and not same_game("mnk", "gomoku")
    assert game_params("boxing") == {"max_box"}


def test_parameters_are_checked_before_the_constructor_runs() -> None:
    with pytest.raises(GameParamsError) as exc:
        get_game("nim_game:Nim", max_take="lots", colour="red")
    faults = {f.loc: f.message for f in exc.value.faults}
    assert set(faults) == {("max_take",), ("colour",)}
    assert "valid integer" in faults[("max_take",)]
    assert faults[("colour",)] == "unknown parameter colour for nim_game:Nim (known: label, max_take)"
    # a value of the right type that the game itself refuses: its own message
    with pytest.raises(GameParamsError, match="max_take must be at least 1"):
        get_game("nim_game:Nim", max_take=0)


@pytest.mark.parametrize(
    ("reference", "message"),
    [
        (
            "broken_game:Whatever",
            "game 'broken_game:Whatever': cannot import broken_game: "
            "ModuleNotFoundError: No module named 'tourney_no_such_dependency'",
        ),
        ("no_such_module:Game", "cannot import no_such_module: ModuleNotFoundError"),
        ("nim_game:Nimm", "module nim_game has no Nimm"),
        ("nim_game:NotAGame", "nim_game:NotAGame is not a subclass of runner.domain.games.base.Game"),
        ("nim_game:HalfAGame", "nim_game:HalfAGame does not define forfeit, format_move, legal_moves"),
        ("checkers", "unknown game 'checkers'; known games: boxing, chess, gomoku, mnk, pousse"),
    ],
)
def test_a_broken_reference_says_what_went_wrong(reference: str, message: str) -> None:
    with pytest.raises(GameLoadError, match=message.replace("(", r"\(").replace(")", r"\)")):
        get_game(reference)


def test_an_installed_distribution_registers_names_by_entry_point(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A real (if hand-made) installed distribution on sys.path, as pip leaves one."""
    dist = tmp_path / "nim_plugin-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: nim-plugin\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(
        f"[{ENTRY_POINT_GROUP}]\nnim = nim_game:Nim\nbroken = broken_game:Game\nboxing = nim_game:Nim\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    plugins.plugin_games.cache_clear()
    assert {"nim", "broken"} <= set(game_names())
    assert get_game("nim", max_take=2).name == "nim"
    assert same_game("nim", "nim_game:Nim")
    # a plugin cannot take a seed game's name
    assert get_game("boxing").name == "boxing"
    with pytest.raises(GameLoadError, match=r"game 'broken' \(broken_game:Game\): cannot import broken_game"):
        get_game("broken")


def test_a_reference_is_recognised_without_importing() -> None:
    assert is_game_reference("boxing") and is_game_reference("pkg.mod:Cls")
    assert (
        not is_game_reference("checkers")
        and not is_game_reference("pkg.mod")
        and not is_game_reference("a:b:c")
    )


# -- configs: located errors ---------------------------------------------------

CONFIG = """\
name: t
game: "nim_game:Nim"
game_params: {max_take: 3}
boards:
  small: {text: "10"}
entries:
  - path: {generic}/take-one
  - path: {generic}/optimal
stages:
  - name: rr
    planner: round_robin
    boards: [small]
"""


def problems(tmp_path: Path, text: str) -> list[str]:
    p = tmp_path / "t.yaml"
    p.write_text(textwrap.dedent(text).replace("{generic}", str(GENERIC)))
    with pytest.raises(ConfigError) as exc:
        load_config(p)
    return [f"{q.line}:{q.col}: {q.message}" for q in exc.value.problems]


def test_a_config_with_a_plugin_game_loads(tmp_path: Path) -> None:
    p = tmp_path / "t.yaml"
    p.write_text(CONFIG.replace("{generic}", str(GENERIC)))
    cfg = load_config(p)
    assert cfg.game_rules().name == "nim"
    assert list(cfg.entry_specs()) == ["take-one", "optimal"]
    assert {s.protocol for s in cfg.entry_specs().values()} == {"text", "json"}


def test_a_bad_parameter_is_reported_at_its_place(tmp_path: Path) -> None:
    got = problems(tmp_path, CONFIG.replace("{max_take: 3}", "{max_take: many, colour: red}"))
    assert got == [
        "3:25: game_params.max_take: Input should be a valid integer, unable to parse string as an integer",
        "3:39: game_params.colour: unknown parameter colour for nim_game:Nim (known: label, max_take)",
    ]


def test_a_broken_plugin_is_reported_at_game_with_the_import_error(tmp_path: Path) -> None:
    got = problems(tmp_path, CONFIG.replace('"nim_game:Nim"', "broken_game:Nim"))
    assert got[0] == (
        "2:7: game: game 'broken_game:Nim': cannot import broken_game: "
        "ModuleNotFoundError: No module named 'tourney_no_such_dependency'"
    )


def test_a_seed_protocol_cannot_carry_a_plugin_game(tmp_path: Path) -> None:
    entry = tmp_path / "mnkish"
    entry.mkdir()
    (entry / "entry.yaml").write_text('name: mnkish\ngame: "nim_game:Nim"\nprotocol: mnk\nrun: [x]\n')
    got = problems(tmp_path, CONFIG.replace("{generic}/optimal", str(entry)))
    assert got[0] == "8:11: entries[1].path: entry 'mnkish': protocol mnk cannot carry nim_game:Nim"
