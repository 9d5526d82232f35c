"""Clocks scaled to the machine (docs/engines.md, "Clocks scaled to the machine"): the config's
``scale_nps`` reaches the match's EntryRef, a scaled clock is the nominal times the factor,
the factor travels with the game and the PGN shows the clock as played."""

from __future__ import annotations

import io
from pathlib import Path

import chess.pgn
import pytest

from runner.config import ConfigError, load_config
from runner.domain.engine_clock import EngineSettings, TimeControl
from runner.domain.match_values import (
    ClockScale,
    EntryRef,
    GameRecord,
    Limits,
    MatchResult,
    MatchSpec,
    MoveRecord,
    Verdict,
    VerdictKind,
)
from runner.domain.wire import decode, encode
from runner.report.pgn import game_pgn
from tests.config.test_engine_settings import config, engine_dir


def test_a_scaled_clock_multiplies_base_increment_and_movetime_not_nodes() -> None:
    s = EngineSettings(tc=TimeControl.parse("40/60+0.5"), st_s=0.2, nodes=5000, scale_nps=250_000)
    half = s.scaled(0.5)
    assert half.tc == TimeControl(40, 30.0, 0.25) and half.st_s == 0.1 and half.nodes == 5000
    assert EngineSettings.from_dict(half.to_dict()) == half  # scale_nps survives the spec's dict


def test_scale_nps_and_log_from_each_reach_the_engines_ref(tmp_path: Path) -> None:
    engine_dir(tmp_path, "sf")
    engine_dir(tmp_path, "other")
    cfg = load_config(
        config(
            tmp_path,
            """\
            each: {tc: 10+0.1, scale_nps: 250000, log: engine}
            entries:
              - path: entries/sf
              - path: entries/other
                engine: {log: off}
            stages: [{name: s, planner: round_robin}]
            """,
        )
    )
    refs = cfg.player_refs(["sf", "other"])
    sf, other = (EngineSettings.from_dict(refs[n].engine) for n in ("sf", "other"))
    assert (sf.scale_nps, sf.log) == (250_000, True)
    assert (other.scale_nps, other.log) == (250_000, False)


def test_scale_nps_on_an_xboard_engine_is_a_located_error(tmp_path: Path) -> None:
    engine_dir(tmp_path, "ph", protocol="xboard", command="/bin/true")
    engine_dir(tmp_path, "sf")
    with pytest.raises(ConfigError) as e:
        load_config(
            config(
                tmp_path,
                """\
                entries:
                  - path: entries/ph
                    engine: {tc: 10+0.1, scale_nps: 250000}
                  - path: entries/sf
                stages: [{name: s, planner: round_robin}]
                """,
            )
        )
    assert "scale_nps measures an engine's speed over UCI; protocol xboard" in str(e.value)
    assert "entries[0]" in str(e.value) or "entries.0" in str(e.value) or "line" in str(e.value)


def _spec() -> MatchSpec:
    engine = {"tc": "10+0.1", "scale_nps": 200_000}
    entries = {
        "sf": EntryRef("sf", "0" * 64, "uci", ["sf"], engine=engine),
        "gc": EntryRef("gc", "1" * 64, "uci", ["gc"], engine={"tc": "10+0.1"}),
    }
    return MatchSpec.of("m", "chess", "default", "startpos", [["sf", "gc"]], entries, Limits(), 1)


def test_the_factor_travels_with_the_game_and_the_pgn_shows_the_clock_as_played() -> None:
    moves = [MoveRecord("sf", "e2e4", 120.0, 100.0), MoveRecord("gc", "e7e5", 300.0, 290.0)]
    scale = ClockScale(0.5, 400_000, 200_000)
    record = GameRecord(
        ["sf", "gc"], None, {"sf": 0, "gc": 0}, Verdict(VerdictKind.NORMAL, None, "x"), moves, "x",
        clock_scale={"sf": scale},
    )  # fmt: skip
    back = decode(encode(MatchResult("m", [record])), MatchResult)  # as a remote worker's result
    assert back.games[0].clock_scale == {"sf": scale}
    game = chess.pgn.read_game(io.StringIO(str(game_pgn("e", _spec(), 1, back.games[0]))))
    assert game is not None
    h = game.headers
    assert (h["WhiteTimeControl"], h["BlackTimeControl"]) == ("5+0.05", "10+0.1")  # as each played it
    assert (h["TimeControlScale"], h["TimeControlNominal"]) == ("0.5 / 1", "10+0.1")
    first, second = game.mainline()
    assert first.clock() == pytest.approx(5.0 - 0.12 + 0.05)  # white's scaled clock
    assert second.clock() == pytest.approx(10.0 - 0.3 + 0.1)
