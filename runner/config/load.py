"""Loading a config: parse the YAML, check it against the schema and beyond, bind what was found.

Every problem from every pass is collected (a broken stage does not hide a
missing entry directory elsewhere), sorted by position and raised together
as one ``ConfigError``.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from runner.config.bound_run import TournamentConfig
from runner.config.checks import Checker
from runner.config.errors import ConfigError, ConfigProblem
from runner.config.schema_errors import schema_problem
from runner.config.source_map import parse_yaml


def load_config_text(text: str, *, file: str = "<config>", base_dir: Path | None = None) -> TournamentConfig:
    """Parse and check a config held in memory; relative paths resolve against ``base_dir``."""
    base = (base_dir or Path.cwd()).resolve()
    data, smap, problems = parse_yaml(text, file)
    if not problems and not isinstance(data, dict):
        problems.append(
            ConfigProblem(file, 1, 1, "a config must be a mapping (name, game, entries, stages ...)")
        )
    if problems:
        raise ConfigError(problems)
    assert isinstance(data, dict)
    config: TournamentConfig | None = None
    try:
        config = TournamentConfig.model_validate(data)
    except ValidationError as e:
        problems.extend(schema_problem(err, smap) for err in e.errors())
    checker = Checker(data, smap, base)
    checker.run()
    problems.extend(checker.problems)
    if problems or config is None:
        problems.sort(key=lambda p: (p.line, p.col))
        raise ConfigError(problems)
    bound = config.bind(
        base_dir=base,
        entries=checker.entries,
        seed_opponents=checker.opponents,
        config_path=Path(file) if file != "<config>" else None,
    )
    bound._warnings = sorted(checker.warnings, key=lambda p: (p.line, p.col))
    return bound


def load_config(path: str | Path, *, base_dir: Path | None = None) -> TournamentConfig:
    """Load and check ``path``; relative paths inside resolve against its directory (or ``base_dir``)."""
    p = Path(path)
    try:
        text = p.read_text()
    except OSError as e:
        raise ConfigError([ConfigProblem(str(path), 1, 1, f"cannot read config: {e.strerror or e}")]) from e
    config = load_config_text(text, file=str(path), base_dir=base_dir or p.resolve().parent)
    config._config_path = p.resolve()
    return config
