"""``resolved.json``: a run keeps what its config resolved to, and reads itself back from it."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

import runner.domain.entries
from runner.config import TournamentConfig, load_config
from runner.domain.stages.tournament import advance, match_spec
from runner.storage.resolved import RESOLVED_FILE, ResolvedRun, read_resolved
from runner.storage.run_dir import RunDir, create_run, load_run_config, open_for_resume
from tests.config.test_openings import SHIPPED_BOOK, chess_project
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


def _book_run(tmp_path: Path, per_match: object = None) -> tuple[Path, RunDir]:
    """A chess config on 4 book openings (``auto``: 2 a match), made into a run."""
    path = chess_project(tmp_path, SHIPPED_BOOK.read_text(), order="sequential", count=4)
    if per_match is not None:
        raw = json.loads(path.read_text())
        raw["openings"]["per_match"] = per_match
        path.write_text(json.dumps(raw))
    rd = RunDir(tmp_path / "run")
    create_run(rd, path, load_config(path), "r1").close()
    return path, rd


def _plan(config: TournamentConfig) -> list[str]:
    return [m.board_id for m in advance(config, {}).matches]


def test_a_run_keeps_its_openings_a_match_when_read_and_resumed(tmp_path: Path) -> None:
    """``openings_per_match`` in the record: the run's grouping, read back and on resume."""
    path, rd = _book_run(tmp_path)
    assert json.loads(rd.resolved.read_text())["openings_per_match"] == 2
    grouped = ["opening-001+opening-002", "opening-003+opening-004"]
    assert sorted(set(_plan(load_run_config(rd.path)))) == grouped
    live = load_config(path)
    open_for_resume(rd, path, live).close()
    assert sorted(set(_plan(live))) == grouped


@pytest.mark.parametrize("record", [True, False])
def test_a_run_begun_with_one_opening_a_match_keeps_it_under_the_auto_default(
    tmp_path: Path, record: bool
) -> None:
    """A run from before ``auto`` (issue 35, item 8) recorded no number, or no record at all:
    it began with the default of then, one opening a match, and resuming it with today's
    default plans those same matches, not groups that would play its openings again."""
    path, rd = _book_run(tmp_path)
    raw = json.loads(rd.resolved.read_text())
    del raw["openings_per_match"]
    rd.resolved.write_text(json.dumps(raw))
    if not record:
        rd.resolved.unlink()
    singles = [f"opening-00{i}" for i in (1, 2, 3, 4)]
    assert sorted(set(_plan(load_run_config(rd.path)))) == singles
    live = load_config(path)
    assert sorted(set(_plan(live))) != singles  # today's default alone would group them
    open_for_resume(rd, path, live).close()
    assert sorted(set(_plan(live))) == singles
    assert all(match_spec(live, m).boards == () for m in advance(live, {}).matches)


def test_a_run_with_its_own_number_keeps_it_without_a_recorded_one(tmp_path: Path) -> None:
    _, rd = _book_run(tmp_path, per_match=3)
    raw = json.loads(rd.resolved.read_text())
    del raw["openings_per_match"]
    rd.resolved.write_text(json.dumps(raw))
    assert sorted(set(_plan(load_run_config(rd.path)))) == [
        "opening-001+opening-002+opening-003",
        "opening-004",
    ]
