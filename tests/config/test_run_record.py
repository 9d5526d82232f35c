"""``resolved.json``: a run keeps what its config resolved to, and reads itself back from it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import runner.domain.entries
from runner.config import load_config
from runner.domain.stages.tournament import advance, match_spec
from runner.storage.resolved import RESOLVED_FILE, ResolvedRun, read_resolved
from runner.storage.run_dir import RunDir, create_run, load_run_config, open_for_resume
from tests.config.test_validate import make_entry

CONFIG = """\
name: rec
seed: 5
game: boxing
boards:
  drawn: {file: ../boards/drawn.txt}
  gen: {generate: {width: 10, height: 5, blocked: 7}}
  fresh: {generate: {width: 10, height: 5, blocked: 7}, per_round: true}
entries:
  - path: ../entries/boxing/*
  - path: ../entries/boxing/alpha
    include: [alpha]
    variants: {prefix: rnd, count: 2, args: ["--seed", "{i}"]}
seed_opponents:
  - path: ../entries/boxing/beta
    include: [beta]
    variants: {prefix: old-beta, count: 1, args: ["--weak"]}
stages:
  - name: st
    planner: system_test
    boards: [drawn]
  - name: rr
    planner: round_robin
    boards: [gen, drawn]
"""
DRAWN = "----------\n--o-------\n----------\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    tree = tmp_path / "tree"
    for name in ("alpha", "beta", "gamma"):
        make_entry(tree, "boxing", name)
    make_entry(tree, "boxing", "multi", variants={"multi-a": {"args": ["-a"]}})
    (tree / "boards").mkdir()
    (tree / "boards" / "drawn.txt").write_text(DRAWN)
    (tree / "configs").mkdir()
    (tree / "configs" / "rec.yaml").write_text(CONFIG)
    return tree


def test_a_run_reads_its_config_back_without_the_entries_tree(project: Path, tmp_path: Path) -> None:
    live = load_config(project / "configs" / "rec.yaml")
    rd = RunDir(tmp_path / "run")
    create_run(rd, project / "configs" / "rec.yaml", live, "r1").close()
    shutil.move(project, tmp_path / "moved")

    recorded = load_run_config(rd.path)
    assert list(recorded.entry_specs()) == list(live.entry_specs())  # seed order kept
    assert recorded.entry_specs() == live.entry_specs()  # digests, argv, variants' args, paths
    assert recorded.seed_opponent_specs() == live.seed_opponent_specs()
    assert recorded.resolve_player("alpha~mirror").digest == live.entry_specs()["alpha"].digest
    assert recorded.board_text("drawn") == DRAWN
    # the same plan, and every match the same spec, as the live config gives
    state, again = advance(live, {}), advance(recorded, {})
    assert [m.match_id for m in again.matches] == [m.match_id for m in state.matches]
    assert [match_spec(recorded, m) for m in again.matches] == [match_spec(live, m) for m in state.matches]


def test_reading_a_run_hashes_no_entry(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    live = load_config(project / "configs" / "rec.yaml")
    rd = RunDir(tmp_path / "run")
    create_run(rd, project / "configs" / "rec.yaml", live, "r1").close()

    def no_hashing(root: Path) -> str:
        raise AssertionError(f"hashed {root} again")

    monkeypatch.setattr(runner.domain.entries, "directory_digest", no_hashing)
    assert load_run_config(rd.path).entry_specs() == live.entry_specs()


def test_the_record_round_trips_and_names_what_it_holds(project: Path, tmp_path: Path) -> None:
    live = load_config(project / "configs" / "rec.yaml")
    rd = RunDir(tmp_path / "run")
    create_run(rd, project / "configs" / "rec.yaml", live, "r1").close()
    raw = json.loads(rd.resolved.read_text())
    assert [e["name"] for e in raw["entries"]] == list(live.entry_specs())
    assert {"name", "digest", "protocol", "run", "args", "path"} <= set(raw["entries"][0])
    assert raw["boards"] == {"drawn": DRAWN, "gen": live.board_text("gen")}  # per_round boards are made
    assert read_resolved(rd.path) == ResolvedRun.of(live)


def test_a_run_made_before_the_record_reads_the_tree_and_gets_one_on_resume(
    project: Path, tmp_path: Path
) -> None:
    config = project / "configs" / "rec.yaml"
    live = load_config(config)
    rd = RunDir(tmp_path / "run")
    create_run(rd, config, live, "r1").close()
    (rd.path / RESOLVED_FILE).unlink()
    assert load_run_config(rd.path).entry_specs() == live.entry_specs()  # from the tree, as before
    open_for_resume(rd, config, live).close()
    assert read_resolved(rd.path) == ResolvedRun.of(live)
