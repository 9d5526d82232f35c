"""The sample entries as a tournament config sees them: entry.yaml, names, languages."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import pytest

from runner.domain.entries import EntrySpec, load_entry, read_entry_yaml
from tests.entries.harness import ENTRIES, entry_dirs

PROTOCOL = {"boxing": "potm-arena", "pousse": "icfp98", "mnk": "mnk", "gomoku": "gomocup"}
GAMES = sorted(PROTOCOL)


def specs(game: str) -> list[EntrySpec]:
    return [s for d in entry_dirs(game) for s in load_entry(d)]


def is_c(d: Path) -> bool:
    build = read_entry_yaml(d).build or ""
    return build.startswith("cc ") and (d / "main.c").is_file()


def is_python(d: Path) -> bool:
    run = read_entry_yaml(d).run
    if run[0] == "python3":
        return True
    runme = d / "runme"
    return run == ["./runme"] and "python3 main.py" in runme.read_text()


@pytest.mark.parametrize("game", GAMES)
def test_every_entry_loads_with_its_games_protocol(game: str) -> None:
    dirs = entry_dirs(game)
    assert dirs, f"no entries under entries/{game}"
    for d in dirs:
        model = read_entry_yaml(d)
        assert model.game == game, d
        assert model.protocol == PROTOCOL[game], d


@pytest.mark.parametrize("game", GAMES)
def test_names_are_unique_within_a_game_variants_included(game: str) -> None:
    names = [s.name for s in specs(game)]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)


@pytest.mark.parametrize("game", ["boxing", "pousse", "mnk"])
def test_three_entries_per_game_in_c_and_python(game: str) -> None:
    dirs = entry_dirs(game)
    assert len(dirs) >= 3
    assert any(is_c(d) for d in dirs), "no C entry"
    assert any(is_python(d) for d in dirs), "no Python entry"


def test_gomoku_has_a_c_brain_and_a_python_brain() -> None:
    dirs = entry_dirs("gomoku")
    assert any(is_c(d) for d in dirs) and any(is_python(d) for d in dirs)


def test_boxing_variants_make_a_population_of_64() -> None:
    assert len(specs("boxing")) >= 64


def test_pousse_entries_start_with_an_executable_runme() -> None:
    for d in entry_dirs("pousse"):
        assert read_entry_yaml(d).run[0] == "./runme"
        runme = d / "runme"
        assert runme.is_file() and os.access(runme, os.X_OK), runme
        assert runme.read_text().startswith("#!/bin/sh")


def python_sources() -> list[Path]:
    return sorted(p for game in GAMES for p in (ENTRIES / game).glob("*/*.py"))


@pytest.mark.parametrize("source", python_sources(), ids=lambda p: str(p.relative_to(ENTRIES)))
def test_python_entries_use_only_the_standard_library(source: Path) -> None:
    text = source.read_text()
    assert text.startswith("#!/usr/bin/env python3\n")
    for node in ast.walk(ast.parse(text)):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module]
        for name in names:
            assert name.split(".")[0] in sys.stdlib_module_names, f"{source}: imports {name}"
