"""``tourney validate CONFIG``: exit 0 with a summary, or 2 with every ``file:line:col: message``."""

from __future__ import annotations

import argparse
import sys

from runner.config import ConfigError, TournamentConfig, load_config


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
    from runner.domain.stages.requirements import planned_games

    counts = planned_games(list(config.stages), len(config.entry_specs()), len(config.seed_opponent_specs()))
    known = [c for c in counts if c is not None]
    parts = [
        f"{st.name} {c:,}" if c is not None else f"{st.name} (depends on results)"
        for st, c in zip(config.stages, counts, strict=True)
    ]
    more = " or more" if len(known) < len(counts) else ""
    return f"  games: at most {sum(known):,}{more} ({'; '.join(parts)})"


def cmd_validate(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as e:
        for p in e.problems:
            print(p)
        print(f"{len(e.problems)} problem(s) in {args.config}", file=sys.stderr)
        return 2
    for w in config.warnings:
        print(w)
    print(f"OK: {config.name}: {len(config.entry_specs())} entries, {len(config.stages)} stages")
    if config.seed_opponent_specs():
        print(f"  seed opponents: {', '.join(config.seed_opponent_specs())}")
    for line in describe(config):
        print(line)
    print(games_summary(config))
    return 0
