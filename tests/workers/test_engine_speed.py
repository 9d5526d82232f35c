"""``scale_nps`` on a worker (workers/engine_speed.py): a real stockfish measured once in the
sandbox, its clocks scaled by scale_nps / measured, the factor recorded with every game."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from runner.domain.engine_clock import EngineSettings
from runner.domain.entries import load_entry
from runner.domain.match_values import EntryRef, Limits, MatchSpec, VerdictKind
from tests.integration.conftest import bwrap_problem
from tests.integration.helpers import ROOT
from workers import engine_speed
from workers.artifacts import local_fetch
from workers.executor import execute_match
from workers.sandbox.base import HostFactory

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not Path("/usr/games/stockfish").exists(), reason="apt-get install stockfish"),
    pytest.mark.skipif(bwrap_problem() is not None, reason=f"no sandbox: {bwrap_problem()}"),
]


def test_stockfish_is_measured_once_and_its_clocks_scaled_in_every_game(tmp_path: Path) -> None:
    base = load_entry(ROOT / "entries" / "chess" / "stockfish")[0]
    refs: dict[str, EntryRef] = {}
    for name, scale in (("sf-a", 300_000), ("sf-b", None)):
        # short moves, but a wide margin: on a loaded machine a 50 ms move waits for the
        # scheduler past the default 50 ms margin (a timeout the worker rightly gives:
        # docs/engines.md); this test is about the scaling, not about flags
        engine = {
            **base.engine,
            "st_s": 0.05,
            "timemargin_ms": 5000,
            **({"scale_nps": scale} if scale else {}),
        }
        refs[name] = EntryRef(name, base.digest, base.protocol, base.run, engine=engine)
    spec = MatchSpec.of(
        "speed", "chess", "default", "startpos", [["sf-a", "sf-b"], ["sf-b", "sf-a"]], refs,
        Limits(move_wall_s=30.0), 1, sandbox="bwrap",
    )  # fmt: skip
    spec = dataclasses.replace(spec, adjudication={"maxmoves": 4})
    engine_speed._measured.clear()
    result = execute_match(spec, local_fetch({base.digest: base.path}), tmp_path / "cache", worker="w")
    assert result.system_error is None, result.system_error
    verdicts = [g.verdict for g in result.games]
    assert len(verdicts) == 2 and all(v.kind is VerdictKind.NORMAL for v in verdicts), verdicts
    scales = [g.clock_scale for g in result.games]
    assert all(set(s) == {"sf-a"} for s in scales), scales  # sf-b asked for no scaling
    a = scales[0]["sf-a"]
    assert scales[1]["sf-a"] == a  # measured once for the match, the same factor in both games
    assert 10_000 < a.measured_nps < 100_000_000 and a.scale_nps == 300_000
    assert a.factor == pytest.approx(300_000 / a.measured_nps, rel=1e-3)
    assert len(engine_speed._measured) == 1  # cached on this worker for the next match
    played = engine_speed.scale_clocks(spec, {"sf-a": base.path, "sf-b": base.path}, _hosts())[0]
    st = EngineSettings.from_dict(played.entries["sf-a"].engine).st_s
    assert st == pytest.approx(0.05 * a.factor, rel=1e-3)  # the next match is scaled without measuring
    assert played.entries["sf-b"].engine == refs["sf-b"].engine


def _hosts() -> HostFactory:
    from workers.sandbox import game_host_factory

    return game_host_factory("bwrap")
