"""Chess engine settings in a config (docs/config.md, "Engine settings"): `each:` and an entry's
`engine:` reach the match's EntryRef over entry.yaml's options; a bad clock is a located error."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
import yaml

from runner.config import ConfigError, load_config
from runner.domain.adjudication import Adjudication, DrawRule, ResignRule
from runner.domain.engine_clock import EngineSettings, TimeControl
from runner.domain.entries import EntryError, load_entry
from runner.domain.match_values import MatchSpec
from runner.domain.stages.tournament import match_spec
from runner.domain.wire import decode, encode
from tests.stages.sim import simulate


def engine_dir(root: Path, name: str, **over: object) -> Path:
    d = root / "entries" / name
    d.mkdir(parents=True)
    data = {"name": name, "game": "chess", "protocol": "uci", "command": "/usr/games/stockfish", **over}
    (d / "entry.yaml").write_text(yaml.safe_dump(data))
    return d


def config(root: Path, body: str) -> Path:
    path = root / "engines.yaml"
    path.write_text(
        textwrap.dedent(
            """\
            name: t
            game: chess
            """
        )
        + textwrap.dedent(body)
    )
    return path


def test_each_and_engine_merge_over_the_entry_yaml_options(tmp_path: Path) -> None:
    engine_dir(tmp_path, "sf", options={"Hash": 16, "Threads": 1})
    engine_dir(tmp_path, "other")
    cfg = load_config(
        config(
            tmp_path,
            """\
            each: {tc: 40/60, timemargin: 20, options: {Hash: 32}}
            entries:
              - path: entries/sf
                engine: {st: 0.1, options: {Threads: 2}}
              - path: entries/other
            stages: [{name: s, planner: round_robin}]
            """,
        )
    )
    refs = cfg.player_refs(["sf", "other"])
    sf = EngineSettings.from_dict(refs["sf"].engine)
    assert sf.tc == TimeControl.parse("40/60") and sf.st_s == 0.1 and sf.timemargin_ms == 20
    assert sf.options == {"Hash": 32, "Threads": 2}
    other = EngineSettings.from_dict(refs["other"].engine)
    assert (other.tc, other.st_s, other.options) == (TimeControl.parse("40/60"), None, {"Hash": 32})


def test_restart_is_off_unless_on_under_each_or_an_entrys_engine(tmp_path: Path) -> None:
    """fastchess's ``restart=on|off``, off by default (docs/config.md): YAML's on/off are booleans."""
    engine_dir(tmp_path, "sf")
    engine_dir(tmp_path, "other")
    engine_dir(tmp_path, "third")
    cfg = load_config(
        config(
            tmp_path,
            """\
            each: {nodes: 2000, restart: off}
            entries:
              - path: entries/sf
                engine: {restart: on}
              - path: entries/other
              - path: entries/third
                engine: {restart: "on"}
            stages: [{name: s, planner: round_robin}]
            """,
        )
    )
    refs = cfg.player_refs(["sf", "other", "third"])
    restarts = {name: EngineSettings.from_dict(ref.engine).restart for name, ref in refs.items()}
    assert restarts == {"sf": True, "other": False, "third": True}
    assert EngineSettings().restart is False


def test_a_restart_that_is_neither_on_nor_off_is_reported_at_its_line(tmp_path: Path) -> None:
    engine_dir(tmp_path, "sf")
    path = config(
        tmp_path,
        """\
        each: {restart: sometimes}
        entries: [{path: entries/sf}]
        stages: [{name: s, planner: round_robin}]
        """,
    )
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert "engines.yaml:3:" in str(e.value) and "restart is on or off, got 'sometimes'" in str(e.value)


def test_a_bad_time_control_is_reported_at_its_line(tmp_path: Path) -> None:
    engine_dir(tmp_path, "sf")
    path = config(
        tmp_path,
        """\
        each: {tc: "ten seconds"}
        entries: [{path: entries/sf}, {path: entries/sf, engine: {depth: 0}}]
        stages: [{name: s, planner: round_robin}]
        """,
    )
    with pytest.raises(ConfigError) as e:
        load_config(path)
    text = str(e.value)
    assert "engines.yaml:3:" in text and "is not MOVES/SECONDS" in text
    assert "engines.yaml:4:" in text and "depth" in text


def test_an_entry_names_a_system_engine_by_absolute_command_or_run_but_not_both(tmp_path: Path) -> None:
    d = engine_dir(tmp_path, "sf")
    assert load_entry(d)[0].run == ["/usr/games/stockfish"]
    with pytest.raises(EntryError, match="absolute path"):
        load_entry(engine_dir(tmp_path, "rel", command="stockfish"))
    with pytest.raises(EntryError, match="exactly one of run"):
        load_entry(engine_dir(tmp_path, "both", run=["./x"]))


def test_a_missing_system_engine_is_named_in_one_line_with_its_package(tmp_path: Path) -> None:
    engine_dir(tmp_path, "gone", command="/usr/games/no-such-engine-here")
    path = config(tmp_path, "entries: [{path: entries/gone}]\nstages: [{name: s, planner: round_robin}]\n")
    with pytest.raises(ConfigError) as e:
        load_config(path)
    assert (
        str(e.value)
        .splitlines()[0]
        .endswith(
            "entries[0].path: /usr/games/no-such-engine-here is not installed on this machine "
            "(apt-get install no-such-engine-here)"
        )
    )


def test_the_shipped_engines_config_validates_where_the_engines_are_installed() -> None:
    root = Path(__file__).resolve().parents[2]
    if not all(Path(f"/usr/games/{p}").exists() for p in ("stockfish", "gnuchess", "phalanx")):
        pytest.skip("the Debian engines are not installed")
    cfg = load_config(root / "configs" / "engines.yaml")
    assert sorted(cfg.entry_specs()) == ["gnuchess", "phalanx", "stockfish"]


def test_adjudication_rules_reach_every_match_spec(tmp_path: Path) -> None:
    engine_dir(tmp_path, "a")
    engine_dir(tmp_path, "b")
    cfg = load_config(
        config(
            tmp_path,
            """\
            adjudication:
              resign: {movecount: 3, score: 600, twosided: true}
              draw: {movenumber: 34, movecount: 8, score: 20}
              maxmoves: 150
            entries: [{path: entries/a}, {path: entries/b}]
            stages: [{name: s, planner: round_robin}]
            """,
        )
    )
    state, _ = simulate(cfg)
    spec = match_spec(cfg, state.matches[0])
    assert Adjudication.from_dict(spec.adjudication) == Adjudication(
        ResignRule(3, 600, True), DrawRule(34, 8, 20), 150
    )
    assert decode(encode(spec), MatchSpec) == spec
