"""The layout's rules, read from the source: which package may import which, one
exception root, no dead ``ImportError`` fallbacks, one way a command reports an error."""

from __future__ import annotations

import argparse
import ast
import functools
import importlib
import inspect
import pkgutil
from pathlib import Path

import pytest

import runner
import workers
from runner import cli
from runner.errors import CommandError, TourneyError, UsageError

ROOT = Path(__file__).resolve().parents[2]

#: the one module through which runner reaches into workers (DESIGN §3)
DOOR_TO_WORKERS = "runner/orchestration/dispatch.py"
#: what workers may import from runner: the shared domain and the exception root
WORKERS_MAY_IMPORT = ("runner.domain", "runner.errors")


def sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@functools.cache
def parsed(path: Path) -> ast.Module:
    """A source file's tree, parsed once for every rule below (the parse is most of their cost)."""
    return ast.parse(path.read_text(encoding="utf-8"))


def imported_modules(path: Path) -> set[str]:
    """Every module an ``import`` or ``from ... import`` names, at any depth (lazy ones too)."""
    out: set[str] = set()
    for node in ast.walk(parsed(path)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def test_runner_reaches_workers_only_through_the_dispatcher() -> None:
    leaks = {
        str(p.relative_to(ROOT)): sorted(m for m in imported_modules(p) if m.split(".")[0] == "workers")
        for p in sources("runner")
        if str(p.relative_to(ROOT)) != DOOR_TO_WORKERS
    }
    assert {p: m for p, m in leaks.items() if m} == {}


def test_the_dispatcher_does_reach_workers() -> None:
    """The rule above is not vacuous: the door exists and is used."""
    assert any(m.startswith("workers.") for m in imported_modules(ROOT / DOOR_TO_WORKERS))


def test_workers_import_only_the_domain_and_the_errors_from_runner() -> None:
    bad = {
        str(p.relative_to(ROOT)): sorted(
            m
            for m in imported_modules(p)
            if m.split(".")[0] == "runner"
            and m != "runner"
            and not any(m == ok or m.startswith(ok + ".") for ok in WORKERS_MAY_IMPORT)
        )
        for p in sources("workers")
    }
    assert {p: m for p, m in bad.items() if m} == {}


#: runner's layers, lowest first: a module imports only its own layer and those below it
#: (domain and config share a rank: the stage models are config, their planners domain)
LAYER_RANK = {
    "runner.errors": 0,
    "runner.domain": 1,
    "runner.games": 1,  # the public path of the game API for plugins (DESIGN §4.2)
    "runner.config": 1,
    "runner.storage": 2,
    "runner.report": 3,
    "runner.orchestration": 4,
    "runner.commands": 5,
    "runner.cli": 6,
}


def layer_of(module: str) -> str | None:
    return next((layer for layer in LAYER_RANK if module == layer or module.startswith(layer + ".")), None)


def test_runner_layers_import_only_downwards() -> None:
    bad: dict[str, list[str]] = {}
    for p in sources("runner"):
        if p.name == "__init__.py" and p.parent == ROOT / "runner":
            continue
        own = layer_of(".".join(p.relative_to(ROOT).with_suffix("").parts))
        assert own is not None, p  # every module sits in a layer
        up = [
            m
            for m in imported_modules(p)
            if (layer := layer_of(m)) is not None and LAYER_RANK[layer] > LAYER_RANK[own]
        ]
        if up:
            bad[str(p.relative_to(ROOT))] = sorted(up)
    assert bad == {}


def test_no_dead_import_error_fallbacks() -> None:
    found = [
        f"{p.relative_to(ROOT)}:{node.lineno}"
        for pkg in ("runner", "workers", "tests", "bench")
        for p in sources(pkg)
        for node in ast.walk(parsed(p))
        if isinstance(node, ast.ExceptHandler)
        and isinstance(node.type, ast.Name)
        and node.type.id in ("ImportError", "ModuleNotFoundError")
    ]
    assert found == []


def every_exception_class() -> list[type[BaseException]]:
    classes: list[type[BaseException]] = []
    for package in (runner, workers):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("celery_app") or info.name.startswith("workers.tasks"):
                continue  # importing them configures Celery (they define no exception classes)
            module = importlib.import_module(info.name)
            classes += [
                c
                for _, c in inspect.getmembers(module, inspect.isclass)
                if issubclass(c, BaseException) and c.__module__ == info.name
            ]
    return classes


def test_every_exception_class_hangs_on_the_one_root() -> None:
    classes = every_exception_class()
    assert len(classes) >= 15  # the walk found the classes, not nothing
    assert sorted(c.__qualname__ for c in classes if not issubclass(c, TourneyError)) == []


def test_user_errors_exit_2_and_keep_their_historical_base() -> None:
    from runner.config import ConfigError
    from runner.domain.match_record import UnknownMatch
    from runner.storage.store import StoreError

    assert issubclass(ConfigError, UsageError) and issubclass(ConfigError, ValueError)
    assert issubclass(UnknownMatch, UsageError) and issubclass(UnknownMatch, KeyError)
    assert UsageError("x").exit_code == 2 and ConfigError([]).exit_code == 2
    assert not issubclass(StoreError, CommandError)


def test_cli_prints_a_command_error_once_with_its_exit_code(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def failing(args: argparse.Namespace) -> int:
        raise CommandError("the broker went away", exit_code=7)

    monkeypatch.setattr(importlib.import_module("runner.commands.judge"), "cmd_judge", failing)
    assert cli.main(["judge", "--game", "pousse", "t.txt"]) == 7
    assert capsys.readouterr().err == "tourney judge: the broker went away\n"


def test_a_real_usage_error_is_reported_by_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["judge", "--game", "no-such-game", "t.txt"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("tourney judge: ") and err.count("\n") == 1


def test_every_cli_handler_imports() -> None:
    for target in cli.HANDLERS.values():
        module, func = target.split(":")
        assert callable(getattr(importlib.import_module(module), func)), target


def test_a_config_error_keeps_its_located_lines(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``file:line:col: message`` lines locate themselves: printed without the command prefix."""
    config = tmp_path / "bad.yaml"
    config.write_text("name: t\nstages: 3\n")
    assert cli.main(["run", str(config), "--inline", "--no-progress"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith(f"{config}:") for line in lines)
