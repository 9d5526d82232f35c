"""Whether each entry's program is there: ``run[0]`` of its ``entry.yaml`` (``tourney validate``).

An entry whose program is missing would otherwise pass validation and lose every
game as a crash. ``run[0]`` is looked up as the sandbox runs it (docs/config.md,
"entries"): a path (``./runme``, ``bin/player``) in the entry directory, an absolute
path on this machine, or a bare command name (``python3``) on this machine's
``PATH``. A path that the entry's ``build`` may make is checked only once built
(``tourney validate --build``: ``built_program_problem``).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from pathlib import Path

from runner.domain.entries import EntrySpec, yaml_position


def located(entry_dir: Path, loc: tuple[str | int, ...], message: str) -> str:
    """``<entry dir>/entry.yaml:line:col: run[0]: message``."""
    f = entry_dir / "entry.yaml"
    line, col = yaml_position(f.read_text(), loc)
    where = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in loc).lstrip(".")
    return f"{f}:{line}:{col}: {where}: {message}"


def _is_path(program: str) -> bool:
    return "/" in program


def program_problem(entry_dir: Path, program: str, build: str | None, path_env: str | None) -> str | None:
    """What is wrong with ``program`` (an entry's ``run[0]``), or None."""
    if "{" in program:
        return None  # filled per game (runner.domain.placeholders): nothing to look up yet
    if not _is_path(program):
        if shutil.which(program, path=path_env) is not None:
            return None
        hint = f"; did you mean ./{program}?" if (entry_dir / program).is_file() else ""
        return (
            f"{program!r} is not a command on PATH; expected a program name on PATH "
            f"or a path in the entry directory such as ./{program}{hint}"
        )
    target = Path(program) if os.path.isabs(program) else entry_dir / program
    if target.is_file():
        if build is None and not os.access(target, os.X_OK):
            return f"{program!r} is not executable ({target}); expected an executable file (chmod +x)"
        return None
    if build is not None:
        return None  # the build may make it: `tourney validate --build` checks
    where = "on this machine" if os.path.isabs(program) else f"in the entry directory {entry_dir}"
    return (
        f"{program!r} does not exist {where}; expected the entry's program, "
        "or a `build:` command that makes it"
    )


def missing_programs(specs: Iterable[EntrySpec], path_env: str | None = None) -> list[str]:
    """One located line per entry directory whose ``run[0]`` is not there (variants share it)."""
    problems: list[str] = []
    seen: set[Path] = set()
    for spec in specs:
        if spec.path in seen:
            continue
        seen.add(spec.path)
        problem = program_problem(spec.path, spec.run[0], spec.build, path_env)
        if problem is not None:
            problems.append(located(spec.path, ("run", 0), problem))
    return problems


def built_program_problem(built_dir: Path, spec: EntrySpec) -> str | None:
    """After a successful build (in ``built_dir``): a path ``run[0]`` must be an executable there."""
    program = spec.run[0]
    if "{" in program or not _is_path(program) or os.path.isabs(program):
        return None
    target = built_dir / program
    if not target.is_file():
        return f"{program!r} does not exist after the build ({spec.build!r}); expected the build to make it"
    if not os.access(target, os.X_OK):
        return f"{program!r} is not executable after the build; expected an executable file"
    return None
