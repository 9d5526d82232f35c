"""Config loading: every kind of problem is reported as file:line:col: message, exit 2."""

from __future__ import annotations

import argparse
import os
import textwrap
from pathlib import Path

import pytest
import yaml

from runner.commands.validate import cmd_validate
from runner.config import ConfigError, load_config
from runner.domain.registry import sandbox_bind_problem

ENTRY = {
    "boxing": ("potm-arena", ["./a.out", "{mark}"]),
    "pousse": ("icfp98", ["./runme"]),
    "mnk": ("mnk", ["./a.out"]),
}


def make_entry(root: Path, game: str, name: str, **over: object) -> Path:
    d = root / "entries" / game / name
    d.mkdir(parents=True)
    protocol, run = ENTRY[game]
    data = {"name": name, "game": game, "protocol": protocol, "run": run, **over}
    (d / "entry.yaml").write_text(yaml.safe_dump(data))
    (d / "main.c").write_text("int main(void) { return 0; }\n")
    program = d / str(data["run"][0])  # type: ignore[index]
    if not program.exists() and "build" not in over:  # validate checks that run[0] is there
        program.write_text("#!/bin/sh\n")
        program.chmod(0o755)
    return d


@pytest.fixture
def project(tmp_path: Path) -> Path:
    for name in ("alpha", "beta", "gamma", "delta", "eps"):
        make_entry(tmp_path, "boxing", name)
    make_entry(
        tmp_path, "boxing", "multi", variants={"multi-a": {"args": ["-a"]}, "multi-b": {"args": ["-b"]}}
    )
    make_entry(tmp_path, "pousse", "pusher")
    (tmp_path / "configs").mkdir()
    return tmp_path


GOOD = """\
name: t
seed: 3
game: boxing
boards:
  X: {generate: {blocked: 10}}
entries:
  - path: ../entries/boxing/alpha
  - path: ../entries/boxing/beta
  - path: ../entries/boxing/gamma
stages:
  - name: rr
    planner: round_robin
    boards: [X]
"""


def write(project: Path, text: str) -> Path:
    p = project / "configs" / "t.yaml"
    p.write_text(textwrap.dedent(text))
    return p


def problems(project: Path, text: str) -> list[str]:
    p = write(project, text)
    with pytest.raises(ConfigError) as exc:
        load_config(p)
    return [f"{q.line}:{q.col}: {q.message}" for q in exc.value.problems]


def edit(old: str, new: str) -> str:
    assert old in GOOD
    return GOOD.replace(old, new)


def test_a_good_config_loads(project: Path) -> None:
    cfg = load_config(write(project, GOOD))
    assert list(cfg.entry_specs()) == ["alpha", "beta", "gamma"]
    assert cfg.stage_names() == ["rr"] and cfg.sandbox == "bwrap"
    assert cfg.limits_obj.move_wall_s == 1.0


def test_unknown_key_with_did_you_mean(project: Path) -> None:
    assert problems(project, edit("seed: 3", "sede: 3")) == [
        "2:1: (top level): unknown key 'sede' (did you mean 'seed'?)"
    ]
    got = problems(project, edit("    boards: [X]", "    board: [X]"))
    assert got == ["13:5: stages[0]: unknown key 'board' (did you mean 'boards'?)"]


def test_wrong_type(project: Path) -> None:
    got = problems(project, edit("    boards: [X]", "    boards: [X]\n    games_per_pairing: two"))
    assert got == [
        "14:24: stages[0].games_per_pairing: Input should be a valid integer, unable to parse string "
        "as an integer (got 'two')"
    ]


def test_missing_entry_directory(project: Path) -> None:
    got = problems(project, edit("../entries/boxing/beta", "../entries/boxing/bet"))
    assert len(got) == 1 and got[0].startswith(
        "8:11: entries[1].path: missing entry directory '../entries/boxing/bet'"
    )


def test_unknown_game(project: Path) -> None:
    got = problems(project, edit("game: boxing", "game: boxin"))
    assert (
        got[0] == "3:7: game: unknown game 'boxin' (did you mean 'boxing'?); "
        "known: boxing, chess, gomoku, mnk, pousse"
    )


def test_unknown_protocol_in_entry_yaml(project: Path) -> None:
    make_entry(project, "boxing", "weird", protocol="potm-arna")
    got = problems(project, edit("../entries/boxing/gamma", "../entries/boxing/weird"))
    assert len(got) == 1 and got[0].startswith("9:11: entries[2].path: ")
    assert "unknown protocol 'potm-arna'" in got[0]


def test_entry_of_another_game_or_protocol(project: Path) -> None:
    got = problems(project, edit("../entries/boxing/gamma", "../entries/pousse/pusher"))
    assert got == ["9:11: entries[2].path: entry 'pusher' play pousse, but this tournament's game is boxing"]
    make_entry(project, "boxing", "wrongproto", protocol="icfp98")
    got = problems(project, edit("../entries/boxing/gamma", "../entries/boxing/wrongproto"))
    assert got == ["9:11: entries[2].path: entry 'wrongproto': protocol icfp98 cannot carry boxing"]


def test_board_size_out_of_range(project: Path) -> None:
    got = problems(project, edit("X: {generate: {blocked: 10}}", "X: {generate: {width: 500}}"))
    assert got == ["5:17: boards.X.generate: board 'X': arena sides must be 1..200, got 500x16"]
    text = (
        GOOD.replace("game: boxing", "game: pousse")
        .replace("X: {generate: {blocked: 10}}", 'X: {text: "30"}')
        .replace("../entries/boxing/alpha", "../entries/pousse/pusher")
    )
    text = "\n".join(line for line in text.splitlines() if "boxing/" not in line) + "\n"
    got = problems(project, text)
    assert got[0] == "5:13: boards.X.text: board 'X': pousse board size must be 4..20, got 30"


def test_reference_to_an_undefined_board(project: Path) -> None:
    got = problems(project, edit("    boards: [X]", "    boards: [X, Y]"))
    assert got == ["13:17: stages[0].boards[1]: undefined board 'Y'"]
    got = problems(project, edit("    boards: [X]", "    boards: [x]"))
    assert got == ["13:14: stages[0].boards[0]: undefined board 'x' (did you mean 'X'?)"]


def test_impossible_final_of_8_from_5_entries(project: Path) -> None:
    text = edit(
        "    boards: [X]", "    boards: [X]\n    advance: {top: 8}\n  - name: final\n    planner: round_robin"
    )
    got = problems(project, text)
    assert got == [
        "14:20: stages[0].advance.top: cannot advance the top 8: at most 3 entrant(s) come out of stage 'rr'"
    ]


def test_impossible_elimination(project: Path) -> None:
    text = edit("X: {generate: {blocked: 10}}", "X: {generate: {blocked: 10}, per_round: true}")
    text = text.replace("planner: round_robin", "planner: potm_elimination")
    got = problems(project, text)
    assert len(got) == 1 and "with k=2 the winners bracket stops at 4, so no round would be played" in got[0]


def test_unknown_planner_and_rank_key(project: Path) -> None:
    got = problems(project, edit("planner: round_robin", "planner: roundrobin"))
    assert got[0].startswith(
        "12:14: stages[0].planner: unknown planner 'roundrobin' (did you mean 'round_robin'?)"
    )
    got = problems(project, edit("    boards: [X]", "    boards: [X]\n    rank_by: [wins, scores]"))
    assert got[0].startswith("14:21: stages[0].rank_by[1]: 'scores' is not allowed (did you mean 'score'?)")


def test_missing_required_key(project: Path) -> None:
    got = problems(project, edit("  - name: rr\n", "  - \n"))
    assert got == ["12:5: stages[0]: missing required key 'name'"]


def test_yaml_syntax_and_duplicate_keys(project: Path) -> None:
    got = problems(project, edit("seed: 3", "seed: [3"))
    assert len(got) == 1 and got[0].startswith("3:5: not valid YAML")
    got = problems(project, edit("seed: 3", "seed: 3\nseed: 4"))
    assert got == ["3:1: seed: duplicate key (first at line 2)"]


def test_every_problem_is_reported_at_once(project: Path) -> None:
    text = GOOD.replace("seed: 3", "sede: 3").replace("[X]", "[Y]").replace("boxing/beta", "boxing/nope")
    assert len(problems(project, text)) == 3


def test_cmd_validate_prints_and_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = write(project, edit("seed: 3", "sede: 3"))
    assert cmd_validate(argparse.Namespace(config=str(p))) == 2
    out = capsys.readouterr().out
    assert out == f"{p}:2:1: (top level): unknown key 'sede' (did you mean 'seed'?)\n"
    assert cmd_validate(argparse.Namespace(config=str(write(project, GOOD)))) == 0
    assert capsys.readouterr().out.startswith("OK: t: 3 entries, 1 stages\n")
    assert cmd_validate(argparse.Namespace(config=str(project / "missing.yaml"))) == 2
    assert "cannot read config" in capsys.readouterr().out


def test_sandbox_binds_are_absolute_and_never_private(project: Path) -> None:
    ok = load_config(write(project, edit("seed: 3", "seed: 3\nsandbox_binds: [/opt/ghc/]")))
    assert ok.sandbox_binds == ["/opt/ghc"]
    got = problems(project, edit("seed: 3", "seed: 3\nsandbox_binds: [opt/ghc, /home/me/ghc, /]"))
    assert got == ["3:16: sandbox_binds: 'opt/ghc' is not an absolute path without '..'"], got
    got = problems(project, edit("seed: 3", "seed: 3\nsandbox_binds: [/home/me/ghc]"))
    assert got == ["3:16: sandbox_binds: /home/me/ghc is under /home, which entries must never see"], got


@pytest.mark.parametrize(
    "spelling", ["//root", "///root", "/./root", "/root/", "//root//.ssh/", "/usr/../root"]
)
def test_a_refused_bind_is_refused_however_it_is_spelled(project: Path, spelling: str) -> None:
    """Issue 34 item 7: compared as the kernel reads the path, not as written."""
    got = problems(project, edit("seed: 3", f"seed: 3\nsandbox_binds: ['{spelling}']"))
    assert len(got) == 1 and got[0].startswith("3:16: sandbox_binds: "), got
    assert "is under /root, which entries must never see" in got[0] or "without '..'" in got[0], got
    # the worker's own check (``--sandbox-bind``, ``TOURNEY_SANDBOX_BINDS``) is the same rule
    assert sandbox_bind_problem(spelling) is not None


def test_a_bind_whose_links_lead_somewhere_refused_is_refused(project: Path) -> None:
    """``/etc/mtab`` is a link into ``/proc`` on Linux: where a path leads is what the sandbox shows."""
    if not os.path.islink("/etc/mtab") or not os.path.realpath("/etc/mtab").startswith("/proc/"):
        pytest.skip("no /etc/mtab link into /proc here")
    got = problems(project, edit("seed: 3", "seed: 3\nsandbox_binds: [/etc/mtab]"))
    assert len(got) == 1 and "(where /etc/mtab leads) is under /proc" in got[0], got
    assert sandbox_bind_problem("/usr/bin") is None and sandbox_bind_problem("/bin") is None  # usr/bin


# -- what the seeds allow ----------------------------------------------------------

SIX = GOOD.replace(
    "  - path: ../entries/boxing/gamma\n",
    "  - path: ../entries/boxing/gamma\n  - path: ../entries/boxing/delta\n  - path: ../entries/boxing/eps\n"
    "  - path: ../entries/boxing/multi\n",
)


def elimination(k: int) -> str:
    text = SIX.replace("X: {generate: {blocked: 10}}", "X: {generate: {blocked: 10}, per_round: true}")
    return text.replace("planner: round_robin", f"planner: potm_elimination\n    k: {k}")


def test_k_giving_too_few_finalists_is_refused_naming_seed_000(project: Path) -> None:
    got = problems(project, elimination(1))
    assert any(
        "k=1 gives 3..3 finalists, never 4..8 (seed 000: 'there will be no fewer than 4 and no more than 8"
        in g
        for g in got
    ), got


def test_k_that_can_give_more_than_8_finalists_warns(project: Path) -> None:
    assert load_config(write(project, elimination(2))).warnings == []
    warned = [str(w) for w in load_config(write(project, elimination(3))).warnings]  # 7 entries
    assert len(warned) == 1, warned
    assert ":warning: stages[0].k: k=3 gives 5..9 finalists, which can fall outside 4..8 (seed 000" in (
        warned[0].replace(": warning", ":warning")
    )


def test_arena_with_a_players_mark_is_refused(project: Path) -> None:
    arena = "-" * 31 + "A\n" + ("-" * 32 + "\n") * 15
    (project / "configs" / "a.txt").write_text(arena)
    got = problems(project, edit("X: {generate: {blocked: 10}}", "X: {file: a.txt}"))
    assert len(got) == 1 and "line 1 column 32 holds 'A'" in got[0] and "seed 002" in got[0]


def test_arena_of_another_size_warns_and_validate_prints_it(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    p = write(project, edit("{blocked: 10}", "{width: 16, height: 8, blocked: 10}"))
    cfg = load_config(p)
    assert [w.message for w in cfg.warnings] == [
        "boards.X.generate: board 'X': the arena is 16x8; seed 002's 'is 32x16 and remains 32x16 always'"
    ]
    assert cmd_validate(argparse.Namespace(config=str(p))) == 0
    out = capsys.readouterr().out
    assert ": warning: boards.X.generate: board 'X': the arena is 16x8" in out and "OK: t" in out


def test_a_tie_too_big_for_the_game_warns(project: Path) -> None:
    for name in ("p2", "p3"):
        make_entry(project, "pousse", name)
    text = """\
    name: t
    game: pousse
    boards: {six: {text: "6"}}
    entries:
      - path: ../entries/pousse/*
    stages:
      - {name: rr, planner: round_robin, boards: [six]}
      - {name: perm, planner: permutations, when: tied_for_first, boards: [six], max_entrants: 2}
    """
    cfg = load_config(write(project, text))
    assert [w.message for w in cfg.warnings] == [
        "stages[1]: up to 3 entrants can reach stage 'perm', but a game seats at most 2: "
        "a tie among more would be left unbroken (shared places)"
    ]


def test_an_unknown_placeholder_in_entry_yaml_is_located_in_both_files(project: Path) -> None:
    d = project / "entries" / "boxing" / "seeded"
    d.mkdir(parents=True)
    (d / "entry.yaml").write_text(
        "name: seeded\ngame: boxing\nprotocol: potm-arena\n"
        "build: cc -DSEED={seed} -o a.out main.c\n"
        'run: [./a.out, "{mark}", "--seed", "{sede}"]\n'
    )
    got = problems(project, edit("../entries/boxing/gamma", "../entries/boxing/seeded"))
    assert len(got) == 1 and got[0].startswith("9:11: entries[2].path: ")
    assert f"{d / 'entry.yaml'}:4:8: build: {{seed}} is per game" in got[0]
    assert f"{d / 'entry.yaml'}:5:36: run[3]: unknown placeholder {{sede}}" in got[0]


def test_an_unknown_placeholder_in_config_variants_is_located(project: Path) -> None:
    text = edit(
        "  - path: ../entries/boxing/gamma",
        "  - path: ../entries/boxing/gamma\n"
        '    variants: {count: 2, args: ["--seed", "{i}", "--size", "{sise}"]}',
    )
    got = problems(project, text)
    assert len(got) == 1 and got[0].startswith(
        "10:60: entries[2].variants.args[3]: unknown placeholder {sise}"
    )


def test_sprt_stage_problems_are_located(project: Path) -> None:
    sprt = "planner: sprt\n    elo0: 0\n    elo1: 5"
    got = problems(project, edit("planner: round_robin", sprt))
    assert got == [
        "11:5: stages[0]: an sprt stage plays exactly two entries, but up to 3 reach stage 'rr': "
        "name the two with engine and baseline"
    ]
    got = problems(project, edit("planner: round_robin", sprt + "\n    engine: alpah\n    baseline: beta"))
    assert got == ["15:13: stages[0].engine: no entry 'alpah' (did you mean 'alpha'?)"]
    got = problems(project, edit("planner: round_robin", "planner: sprt\n    elo0: 5\n    elo1: 5"))
    assert got == ["11:5: stages[0]: elo1 (5) must be above elo0 (5)"]
    named = sprt + "\n    engine: gamma\n    baseline: beta"
    assert load_config(write(project, edit("planner: round_robin", named))).stages[0].planner == "sprt"


def test_validate_names_validate_build_when_entries_have_builds(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 38: an entry that fails to compile passed a plain `validate` with "OK" and nothing
    more; a plain validate cannot build, so it says that it did not and how to."""
    p = write(project, GOOD)
    assert cmd_validate(argparse.Namespace(config=str(p))) == 0
    assert "builds:" not in capsys.readouterr().out  # no entry here has a build command
    make_entry(project, "boxing", "compiled", build="cc -o a.out main.c")
    p = write(project, GOOD.replace("boxing/alpha", "boxing/compiled"))
    assert cmd_validate(argparse.Namespace(config=str(p))) == 0
    out = capsys.readouterr().out
    assert (
        f"  builds: not tried (1 entry has a build command); `tourney validate {p} --build` builds them "
        "in the sandbox, as a worker would\n"
    ) in out


def test_spsa_stage_problems_are_located(project: Path) -> None:
    spsa = (
        "planner: spsa\n    pairs: 10\n    engine: alpha\n"
        "    params: [{name: Skill Level, start: 5, min: 0, max: 20, c_end: 2, r_end: 0.05}]"
    )
    got = problems(project, edit("planner: round_robin", spsa))
    assert got == [
        "14:13: stages[0].engine: spsa tunes engine options (uci or xboard), but 'alpha' speaks potm-arena"
    ]
    got = problems(project, edit("planner: round_robin", spsa.replace("engine: alpha", "engine: alpah")))
    assert got == ["14:13: stages[0].engine: no entry 'alpah' (did you mean 'alpha'?)"]
    got = problems(project, edit("planner: round_robin", spsa.replace("start: 5", "start: 25")))
    assert got == ["15:14: stages[0].params[0]: 'Skill Level': start (25) must lie in [0, 20]"]
