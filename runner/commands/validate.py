"""``tourney validate CONFIG [--build]``: exit 0 with a summary, or 2 with every
``file:line:col: message`` (the config's, and each entry's ``entry.yaml``: its program,
and with ``--build`` its build, made in the sandbox as a worker makes it)."""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from runner.config import ConfigError, TournamentConfig, load_config
from runner.config.programs import built_program_problem, located, missing_programs
from runner.domain.entries import EntrySpec
from runner.domain.inert import inert
from runner.domain.placeholders import has_placeholders
from runner.domain.registry import SANDBOX_BINDS_ENV, merged_binds
from runner.domain.stages.requirements import planned_games


def describe(config: TournamentConfig) -> list[str]:
    """One line per stage."""
    lines = []
    for i, st in enumerate(config.stages, 1):
        adv = st.advance if isinstance(st.advance, str) else f"top {st.advance.top}"
        cond = "" if st.when == "always" else f", only when {st.when.replace('_', ' ')}"
        lines.append(f"  {i}. {st.name}: {st.planner} on {', '.join(st.boards)}; advance {adv}{cond}")
    return lines


def games_summary(config: TournamentConfig) -> str:
    """How many games the config implies at most, stage by stage."""
    counts = planned_games(list(config.stages), len(config.entry_specs()), len(config.seed_opponent_specs()))
    known = [c for c in counts if c is not None]
    parts = [
        f"{st.name} {c:,}" if c is not None else f"{st.name} (depends on results)"
        for st, c in zip(config.stages, counts, strict=True)
    ]
    if not known:  # every stage depends on results (an sprt without max_pairs ...)
        return f"  games: known only as the run goes ({'; '.join(parts)})"
    more = " or more" if len(known) < len(counts) else ""
    return f"  games: at most {sum(known):,}{more} ({'; '.join(parts)})"


def _all_specs(config: TournamentConfig) -> list[EntrySpec]:
    return [*config.entry_specs().values(), *config.seed_opponent_specs().values()]


def build_problems(config: TournamentConfig) -> list[str]:
    """Build every entry directory once, in the config's sandbox, as a worker would: one
    located line per build that fails (with the compiler's first error line) or that does
    not make the program ``run[0]`` names."""
    # local: only `validate --build` builds; a plain validate starts without redis, psutil and workers
    from runner.orchestration.workers_gate import build_here

    first_of_dir: dict[Path, EntrySpec] = {}
    for spec in _all_specs(config):
        # a build filled per game (its placeholders) is made by the workers, game by game
        if spec.build and not has_placeholders([spec.build]):
            first_of_dir.setdefault(spec.path, spec)
    if not first_of_dir:
        return []
    if config.sandbox_binds:  # the run's workers get them too (runner.commands.run)
        binds = merged_binds(os.environ.get(SANDBOX_BINDS_ENV, ""), config.sandbox_binds)
        os.environ[SANDBOX_BINDS_ENV] = binds
    with tempfile.TemporaryDirectory(prefix="tourney-validate-") as cache:
        wanted = {s.name: (s.ref(), s.path) for s in first_of_dir.values()}
        built = build_here(wanted, config.sandbox, config.limits_obj, Path(cache) / "artifacts")
        problems = []
        for spec in first_of_dir.values():
            got = built[spec.name]
            if got.built_dir is None:
                problems.append(located(spec.path, ("build",), _build_failure(got.failure, got.first_error)))
                continue
            problem = built_program_problem(got.built_dir, spec)
            if problem is not None:
                problems.append(located(spec.path, ("run", 0), problem))
    return problems


def _build_failure(failure: str, first_error: str) -> str:
    """``the build failed (exit code 1): main.c:2:11: error: ...``: how it ended, then the
    compiler's first error line (its later ones are often consequences of the first)."""
    if first_error and first_error in failure:
        how = failure[: failure.index(first_error)].rstrip(": ")
        return f"the build failed ({how}): {first_error}" if how else f"the build failed: {first_error}"
    return f"the build failed: {failure}"


def _refuse(problems: list[str], config_path: str) -> int:
    for p in problems:
        print(inert(p))  # problems quote values from entry.yaml files
    if len(problems) > 1:  # one problem is its own one line
        print(f"{len(problems)} problems in {config_path}", file=sys.stderr)
    return 2


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as e:
        return _refuse([str(p) for p in e.problems], args.config)
    missing = missing_programs(_all_specs(config))
    if missing:
        return _refuse(missing, args.config)
    if getattr(args, "build", False):
        failed = build_problems(config)  # SandboxUnavailable: exit 3
        if failed:
            return _refuse(failed, args.config)
    for w in config.warnings:
        print(inert(str(w)))
    entries = (
        "entries from submissions (each team's counting version, resolved by tourney run)"
        if config.entries_from_submissions
        else f"{len(config.entry_specs())} entries"
    )
    print(f"OK: {config.name}: {entries}, {len(config.stages)} stages")
    if config.seed_opponent_specs():
        print(f"  seed opponents: {', '.join(config.seed_opponent_specs())}")
    for line in describe(config):
        print(line)
    print(games_summary(config))
    if getattr(args, "build", False):
        print(f"  builds: every entry built in the {config.sandbox} sandbox")
    else:
        built = sorted({s.path.name for s in _all_specs(config) if s.build})
        if built:  # a build that fails would be charged build_failed in every game of its entry
            which = f"{len(built)} entr{'y has' if len(built) == 1 else 'ies have'} a build command"
            print(
                f"  builds: not tried ({which}); `tourney validate {args.config} --build` builds them "
                "in the sandbox, as a worker would"
            )
    return 0
