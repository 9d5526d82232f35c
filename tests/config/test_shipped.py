"""The shipped contest configs: they validate, their schema is current, their docs complete,
and each runs to the end on synthetic results (every stage, every bracket)."""

from __future__ import annotations

import argparse
import json
import random
from pathlib import Path
from typing import Any

import pytest

from runner.commands.validate import cmd_validate
from runner.config import PLANNERS, json_schema, load_config
from runner.domain.match_values import GameRecord, MatchPlan, Verdict, VerdictKind
from runner.domain.scoring import RANK_KEYS
from runner.domain.stages.tournament import matches_rows, standings_document
from tests.stages.audit import check_elimination
from tests.stages.sim import simulate

ROOT = Path(__file__).resolve().parents[2]
CONFIGS = sorted((ROOT / "configs").glob("*.yaml"))


def test_the_four_contest_configs_ship() -> None:
    assert {"potm94.yaml", "potm-finals.yaml", "icfp98.yaml", "tryst98.yaml"} <= {p.name for p in CONFIGS}


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_config_validates(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cmd_validate(argparse.Namespace(config=str(path))) == 0, capsys.readouterr().out
    out = capsys.readouterr().out.splitlines()
    warnings = [line for line in out if ": warning: " in line]
    assert out[len(warnings)].startswith("OK: ")
    # the only departure from a seed a shipped config makes: potm-finals' 16x8 arenas (short games)
    assert all("the arena is 16x8; seed 002's" in w for w in warnings)
    assert len(warnings) == (5 if path.name == "potm-finals.yaml" else 0)


def test_schema_json_is_up_to_date() -> None:
    """Regenerate with: python -m runner.commands.schema > configs/schema.json"""
    assert json.loads((ROOT / "configs" / "schema.json").read_text()) == json_schema()


def _fields(schema: dict[str, Any]) -> set[str]:
    names = set(schema.get("properties", {}))
    for d in schema.get("$defs", {}).values():
        names |= set(d.get("properties", {}))
    return names


def test_every_field_is_documented() -> None:
    doc = (ROOT / "docs" / "config.md").read_text()
    schema = json_schema()
    missing = sorted(f for f in _fields(schema) if f"`{f}`" not in doc)
    assert missing == []
    for d in [schema, *schema["$defs"].values()]:
        for name, prop in d.get("properties", {}).items():
            assert prop.get("description"), f"{name} has no description in the schema"
    for word in [*RANK_KEYS, *PLANNERS, "tied_for_first", "all", "survivors"]:
        assert f"`{word}`" in doc, word


def _game(m: MatchPlan, order: tuple[str, ...], rng: random.Random) -> GameRecord:
    winner = rng.choice(order) if rng.random() > 0.1 else None
    return GameRecord(
        list(order),
        winner,
        {p: (rng.randint(1, 99) if p == winner else 0) for p in order},
        Verdict(VerdictKind.NORMAL, None, ""),
        [],
    )


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.name)
def test_shipped_config_plays_to_the_end_on_synthetic_results(path: Path) -> None:
    cfg = load_config(path)
    state, results = simulate(cfg, 1, _game)
    assert state.finished and len(state.final_ranking) == len(cfg.entry_specs())
    for m in state.matches:  # every board a match names exists
        cfg.board_text(m.board_id)
        cfg.player_refs(m.players)
    summary = standings_document(state)
    rows = matches_rows(state, results, cfg)
    for stage, st in zip(summary["stages"], cfg.stages, strict=True):
        if st.planner == "potm_elimination":
            facts = check_elimination(stage, rows, st.k)  # type: ignore[union-attr]
            assert facts["rounds"] >= 5 and 4 <= facts["survivors"] <= 6
            assert any(r["byes"] for r in stage["rounds"]) and {r["bracket"] for r in stage["rounds"]} == {
                "winners",
                "losers",
            }


def test_icfp98_gives_each_match_the_machine_as_seed_003_does() -> None:
    """Seed 003: "The program will have the entire machine to itself when it runs": each match
    holds a CPU of its own (docs/config.md, readings of seed 003), and the run's preflight accepts
    it on any machine, one CPU included (no reserved cores)."""
    from runner.domain.timing import split_cores

    timing = load_config(ROOT / "configs" / "icfp98.yaml").timing
    assert timing.exclusive_cores and timing.reserved_cores == 0
    split_cores({0}, timing.reserved_cores)  # refused (ValueError) when it would leave no CPU
