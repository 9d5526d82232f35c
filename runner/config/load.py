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
from runner.config.schema_errors import relevant_errors, schema_problem
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
        problems.extend(schema_problem(err, smap) for err in relevant_errors(e.errors()))
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


def utf8_text(raw: bytes, file: str) -> str:
    """The text of a YAML file, which must be UTF-8; ``ConfigError`` at the first byte that is
    not (its line and column), never a ``UnicodeDecodeError``."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as e:
        before = raw[: e.start]
        line = before.count(b"\n") + 1
        col = e.start - (before.rfind(b"\n") + 1) + 1
        message = f"not UTF-8 text: byte 0x{raw[e.start]:02x} is no character; save the file as UTF-8"
        raise ConfigError([ConfigProblem(file, line, col, message)]) from None


def load_config(path: str | Path, *, base_dir: Path | None = None) -> TournamentConfig:
    """Load and check ``path``; relative paths inside resolve against its directory (or ``base_dir``)."""
    p = Path(path)
    try:
        raw = p.read_bytes()
    except OSError as e:
        raise ConfigError([ConfigProblem(str(path), 1, 1, f"cannot read config: {e.strerror or e}")]) from e
    text = utf8_text(raw, str(path))
    config = load_config_text(text, file=str(path), base_dir=base_dir or p.resolve().parent)
    config._config_path = p.resolve()
    return config
