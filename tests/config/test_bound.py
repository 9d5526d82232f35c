"""The game bound and the exit grace in a config: parsed, carried by every match spec, refused
with a location when out of range."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from runner.config import ConfigError, load_config
from runner.domain.match_values import GameBound, MatchSpec
from runner.domain.stages.tournament import advance, match_spec
from runner.domain.wire import decode, encode, from_builtins, to_builtins

ROOT = Path(__file__).resolve().parents[2]


def write(tmp_path: Path, **extra: object) -> Path:
    config = {
        "name": "bounded",
        "game": "pousse",
        "entries": [
            {"path": str(ROOT / "entries" / "pousse" / "random"), "include": ["random-s1", "random-s2"]}
        ],
        "stages": [{"name": "rr", "planner": "round_robin"}],
        **extra,
    }
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def first_spec(path: Path) -> MatchSpec:
    cfg = load_config(path)
    return match_spec(cfg, advance(cfg, {}).matches[0])


def test_the_default_bound_is_explicit_and_travels_in_every_spec(tmp_path: Path) -> None:
    spec = first_spec(write(tmp_path))
    assert spec.bound == GameBound(max_moves=10_000, wall_s=None)
    assert spec.limits.exit_grace_ms == 300
    assert decode(encode(spec), MatchSpec) == spec


def test_a_configured_bound_and_grace_reach_the_spec(tmp_path: Path) -> None:
    path = write(tmp_path, bound={"max_moves": 200, "wall_s": 30}, limits={"exit_grace_ms": 500})
    spec = first_spec(path)
    assert spec.bound == GameBound(max_moves=200, wall_s=30.0)
    assert spec.limits.exit_grace_ms == 500


def test_a_spec_stored_before_bounds_reads_as_the_old_default(tmp_path: Path) -> None:
    d = to_builtins(first_spec(write(tmp_path)))
    del d["bound"]
    del d["limits"]["exit_grace_ms"]
    old = from_builtins(d, MatchSpec)
    assert old.bound == GameBound() and old.limits.exit_grace_ms == 300


@pytest.mark.parametrize(
    ("extra", "where"),
    [
        ({"bound": {"max_moves": 0}}, "max_moves"),
        ({"bound": {"wall_s": -1}}, "wall_s"),
        ({"bound": {"moves": 5}}, "moves"),
        ({"limits": {"exit_grace_ms": -5}}, "exit_grace_ms"),
    ],
)
def test_out_of_range_values_are_refused_where_they_are(
    tmp_path: Path, extra: dict[str, object], where: str
) -> None:
    with pytest.raises(ConfigError) as e:
        load_config(write(tmp_path, **extra))
    assert where in str(e.value) and "c.yaml:" in str(e.value)
