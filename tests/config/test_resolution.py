"""What a loaded config resolves: entries (paths, globs, variants), players, boards, limits."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from runner.config import load_config, load_config_text
from tests.config.test_validate import make_entry, problems, write

BASE = """\
name: t
seed: 11
game: boxing
boards:
  fixed: {text: "----\\n----\\n"}
  gen: {generate: {width: 10, height: 5, blocked: 7}}
  fresh: {generate: {width: 10, height: 5, blocked: 7}, per_round: true}
entries:
ENTRIES
seed_opponents:
  - path: ../entries/boxing/alpha
    include: [alpha]
    variants: {prefix: old-alpha, count: 1, args: ["--weak"]}
stages:
  - name: st
    planner: system_test
  - name: rr
    planner: round_robin
    boards: [gen]
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("alpha", "beta", "gamma"):
        make_entry(tmp_path, "boxing", name)
    make_entry(
        tmp_path, "boxing", "multi", variants={"multi-a": {"args": ["-a"]}, "multi-b": {"args": ["-b"]}}
    )
    (tmp_path / "entries" / "boxing" / "notes").mkdir()  # no entry.yaml: a glob skips it
    (tmp_path / "configs").mkdir()
    return tmp_path


def config_with(project: Path, entries: str) -> str:
    return BASE.replace("ENTRIES", entries)


def test_glob_include_and_variants_in_config_order(project: Path) -> None:
    text = config_with(
        project,
        """\
  - path: ../entries/boxing/m*
    include: [multi-b, multi]
  - path: ../entries/boxing/[bg]*
  - path: ../entries/boxing/alpha
    variants: {prefix: rnd, count: 12, start: 1, args: ["--seed", "{i}"]}""",
    )
    cfg = load_config(write(project, text))
    specs = cfg.entry_specs()
    names = list(specs)
    assert names[:4] == ["multi", "multi-b", "beta", "gamma"]
    assert names[4:] == [f"rnd-{i:02d}" for i in range(1, 13)]
    assert specs["multi-b"].args == ["-b"]
    assert specs["rnd-07"].args == ["--seed", "7"] and specs["rnd-07"].digest == specs["rnd-01"].digest
    assert specs["rnd-07"].path == (project / "entries" / "boxing" / "alpha").resolve()
    assert list(cfg.seed_opponent_specs()) == ["old-alpha-1"]
    assert cfg.seed_opponent_specs()["old-alpha-1"].args == ["--weak"]


def test_keep_original_and_name_clashes(project: Path) -> None:
    text = config_with(
        project,
        """\
  - path: ../entries/boxing/beta
    variants: {count: 2, keep_original: true}
  - path: ../entries/boxing/beta""",
    )
    got = problems(project, text)
    assert got == ["11:5: entries[1]: entry name 'beta' is already used by entries[0]"]
    ok = config_with(
        project, "  - path: ../entries/boxing/beta\n    variants: {count: 2, keep_original: true}"
    )
    assert list(load_config(write(project, ok)).entry_specs()) == ["beta", "beta-1", "beta-2"]


def test_a_clash_of_many_variant_names_is_one_problem(project: Path) -> None:
    """Two sources making the same 300 names: one located problem naming a few of them,
    not 300 lines that bury everything else."""
    text = config_with(
        project,
        """\
  - path: ../entries/boxing/beta
    variants: {count: 300}
  - path: ../entries/boxing/beta
    variants: {count: 300}""",
    )
    got = problems(project, text)
    assert len(got) == 1
    assert got == [
        "11:5: entries[1]: entry names 'beta-001', 'beta-002', 'beta-003' and 297 more"
        " are already used by entries[0]"
    ]


def test_one_prefix_over_several_entries_says_how_to_pick_one(project: Path) -> None:
    """``prefix`` names every variant of every entry under the path alike: the config says
    so once, at the prefix, with the way out (``include``), rather than once per name."""
    text = config_with(project, "  - path: ../entries/boxing/multi\n    variants: {prefix: m, count: 50}")
    got = problems(project, text)
    assert len(got) == 1
    assert got[0].startswith("10:24: entries[0].variants.prefix: prefix 'm' would give each of the 3 ")
    assert "entries 'multi', 'multi-a', 'multi-b' found in ../entries/boxing/multi" in got[0]
    assert "the same names (m-01, ...): pick one with `include: [NAME]`" in got[0]
    picked = "  - path: ../entries/boxing/multi\n    include: [multi-b]\n    variants: {prefix: m, count: 2}"
    assert list(load_config(write(project, config_with(project, picked))).entry_specs()) == ["m-1", "m-2"]


def test_include_names_must_exist(project: Path) -> None:
    text = config_with(project, "  - path: ../entries/boxing/multi\n    include: [multi-c]")
    assert problems(project, text) == [
        "10:15: entries[0].include[0]: no entry 'multi-c' in ../entries/boxing/multi "
        "(did you mean 'multi-b'?)"
    ]


def test_paths_are_relative_to_the_config_file_not_the_cwd(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    p = write(
        project, config_with(project, "  - path: ../entries/boxing/beta\n  - path: ../entries/boxing/gamma")
    )
    elsewhere = tmp_path_factory.mktemp("cwd")
    old = os.getcwd()
    os.chdir(elsewhere)
    try:
        cfg = load_config(os.path.relpath(p, elsewhere))
    finally:
        os.chdir(old)
    assert cfg.base_dir == p.parent.resolve()
    # a copy kept elsewhere (a run directory) loads against the original directory
    copy = load_config_text(p.read_text(), file="frozen.yaml", base_dir=p.parent)
    assert list(copy.entry_specs()) == list(cfg.entry_specs())


def test_players_mirrors_and_refs(project: Path) -> None:
    cfg = load_config(
        write(
            project,
            config_with(project, "  - path: ../entries/boxing/beta\n  - path: ../entries/boxing/gamma"),
        )
    )
    mirror = cfg.resolve_player("beta~mirror")
    assert mirror.name == "beta~mirror" and mirror.digest == cfg.resolve_player("beta").digest
    assert cfg.resolve_player("old-alpha-1").args == ["--weak"]
    with pytest.raises(KeyError):
        cfg.resolve_player("nobody")
    refs = cfg.player_refs(["beta", "beta~mirror", "beta"])
    assert list(refs) == ["beta", "beta~mirror"] and refs["beta~mirror"].name == "beta~mirror"


def test_boards_by_id(project: Path) -> None:
    text = config_with(project, "  - path: ../entries/boxing/beta\n  - path: ../entries/boxing/gamma")
    cfg = load_config(write(project, text))
    again = load_config(write(project, text))
    assert cfg.board_text("fixed") == "----\n----\n"
    assert cfg.board_text("default") == cfg.game_rules().default_board()
    gen = cfg.board_text("gen")
    assert gen.count("o") == 7 and gen == again.board_text("gen")
    r1, r2 = cfg.board_text("fresh.rr.r1"), cfg.board_text("fresh.rr.r2")
    assert r1 != r2 and r1 == again.board_text("fresh.rr.r1")
    for bad in ("nope", "fresh", "gen.rr.r1"):
        with pytest.raises(KeyError):
            cfg.board_text(bad)


def test_limits_reach_the_contract(project: Path) -> None:
    text = config_with(project, "  - path: ../entries/boxing/beta\n  - path: ../entries/boxing/gamma")
    text = text.replace("seed: 11\n", "seed: 11\nlimits: {move_wall_s: 0.5, memory_mb: 128}\nsandbox: none\n")
    cfg = load_config(write(project, text))
    lim = cfg.limits.to_limits()
    assert (lim.move_wall_s, lim.cpu_s, lim.memory_mb) == (0.5, 0.5, 128)
    assert cfg.sandbox == "none"
