"""The layout's rules, read from the source: one exception root, no dead ``ImportError``
fallbacks, one way a command reports an error. Which package may import which is the import
contracts' business (tests/core/test_import_contracts.py)."""

from __future__ import annotations

import argparse
import ast
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


def sources(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def parsed(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"))


def test_no_dead_import_error_fallbacks() -> None:
    named = ("ImportError", "ModuleNotFoundError")
    found = [
        f"{p.relative_to(ROOT)}:{node.lineno}"
        for pkg in ("runner", "workers", "tests", "bench")
        for p in sources(pkg)
        if any(n in p.read_text(encoding="utf-8") for n in named)  # only those can hold one: parsing is slow
        for node in ast.walk(parsed(p))
        if isinstance(node, ast.ExceptHandler) and isinstance(node.type, ast.Name) and node.type.id in named
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


def test_a_config_error_keeps_its_located_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``file:line:col: message`` lines locate themselves: printed without the command prefix."""
    config = tmp_path / "bad.yaml"
    config.write_text("name: t\nstages: 3\n")
    assert cli.main(["run", str(config), "--inline", "--no-progress"]) == 2
    lines = capsys.readouterr().err.splitlines()
    assert lines and all(line.startswith(f"{config}:") for line in lines)
