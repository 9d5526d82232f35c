"""The whole tournament as a pure function of (config, results so far).

``advance(config, results)`` runs the stages in order. A stage starts once
the stage before it is done; a running stage stops everything after it
("waiting"). Each stage gets its entrants in seed order:

- ``when: always`` (default): the previous stage's advancing entrants, in
  that stage's ranking order (the first stage: the config's entries, in
  config order). That order is the seeding.
- ``when: tied_for_first``: only if the ranking so far has two or more
  entrants tied for first on every rank key of the stage that made it, those
  entrants (else the stage is "skipped"). Such a tiebreak stage reorders them
  and nothing else: who advances does not change.

Who advances from a stage: ``all`` (every entrant not excluded), ``survivors``
(the planner's survivors: elimination/knockout survivors, system-test
passes; else as all), ``{top: N}`` (the first N of the stage's ranking).

The overall ranking composes across stages: after every finished stage it
is that stage's ranking of its own entrants, followed by everyone else in the
order they had before. So the final's ranking comes first, then the
eliminated entries in the order the elimination ranked them, then the
entries the system test excluded; a tiebreak stage reorders the tied group
at the top. ``final_ranking`` is that ranking once every stage is done or
skipped.

Everything is deterministic: randomness (generated boards, per-match seeds)
comes from ``runner.domain.boards.derive_seed`` over the config seed, never from
``hash()`` or the clock.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Protocol

from runner.domain.boards import BoardSpec, derive_seed
from runner.domain.engine_clock import merged
from runner.domain.entries import EntrySpec
from runner.domain.games.base import Game
from runner.domain.match_values import (
    EntryRef,
    GameBound,
    GameRecord,
    Limits,
    MatchPlan,
    MatchSpec,
    NamedBoard,
)
from runner.domain.scoring import Ranking, ScoringModel, effective_winner, match_winner
from runner.domain.stage_models import AdvanceTop, AnyStage, GauntletStage, SeedingStage, SystemTestStage
from runner.domain.stages import PLANNERS
from runner.domain.stages.base import StageState, TournamentState
from runner.domain.stages.common import StageContext, StageOutcome, completed
from runner.domain.stages.memo import StageMemo
from runner.domain.stages.places import TieGroup, compose_groups, final_places, place_labels, stage_groups
from runner.domain.wire import to_builtins

Results = Mapping[str, Sequence[GameRecord]]


class _BoundRule(Protocol):
    def to_bound(self) -> GameBound: ...


class _TimingRule(Protocol):
    @property
    def exclusive_cores(self) -> bool: ...


class _AdjudicationRule(Protocol):
    def to_dict(self) -> dict[str, Any]: ...


class TournamentRules(Protocol):
    """What planning a tournament reads of its config. ``runner.config.TournamentConfig`` is
    one; the domain names the shape it needs rather than import the layer above it
    (docs/architecture.md, "Layers")."""

    @property
    def seed(self) -> int: ...
    @property
    def game(self) -> str: ...
    @property
    def game_params(self) -> Mapping[str, Any]: ...
    @property
    def sandbox(self) -> str: ...
    @property
    def bound(self) -> _BoundRule: ...
    @property
    def timing(self) -> _TimingRule: ...
    @property
    def adjudication(self) -> _AdjudicationRule | None: ...
    @property
    def boards(self) -> Mapping[str, BoardSpec]: ...
    @property
    def stages(self) -> Sequence[AnyStage]: ...
    @property
    def limits_obj(self) -> Limits: ...
    def entry_specs(self) -> Mapping[str, EntrySpec]: ...
    def seed_opponent_specs(self) -> Mapping[str, EntrySpec]: ...
    def player_refs(self, names: Sequence[str]) -> dict[str, EntryRef]: ...
    def board_text(self, board_id: str) -> str: ...
    def match_boards(self, board_id: str) -> tuple[NamedBoard, ...]: ...
    def stage_names(self) -> list[str]: ...
    def stage(self, name: str) -> AnyStage: ...
    def game_rules(self) -> Game[Any, Any]: ...


def match_seed(config: TournamentRules, planned: MatchPlan) -> int:
    """The RNG seed a worker gets for ``planned``: from the config seed and the match id."""
    return derive_seed(config.seed, "match", planned.match_id)


def match_spec(config: TournamentRules, planned: MatchPlan) -> MatchSpec:
    """The ``MatchSpec`` a worker plays for ``planned``."""
    entries = config.player_refs([p for o in planned.orders for p in o])
    for name, ref in entries.items():
        # the plan's own engine options win over the entry's and the config's (spsa's θ ± c·Δ)
        if options := planned.options_of(name):
            entries[name] = replace(ref, engine=merged(ref.engine, {"options": options}))
    return MatchSpec.playing(
        planned,
        game=config.game,
        board_text=config.board_text(planned.board_id),
        entries=entries,
        limits=config.limits_obj,
        seed=match_seed(config, planned),
        sandbox=config.sandbox,
        game_params=dict(config.game_params),
        bound=config.bound.to_bound(),
        exclusive_cores=config.timing.exclusive_cores,
        adjudication=config.adjudication.to_dict() if config.adjudication is not None else {},
        boards=config.match_boards(planned.board_id),
    )


def _advancing(st: AnyStage, out: StageOutcome) -> list[str]:
    eligible = [e for e in out.ranking.order if e not in out.excluded]
    if st.advance == "survivors" and out.survivors is not None:
        keep = set(out.survivors)
        return [e for e in eligible if e in keep]
    if isinstance(st.advance, AdvanceTop):
        return eligible[: st.advance.top]
    return eligible


def advance(
    config: TournamentRules, results: Results, memo: StageMemo | None = None, slots: int = 1
) -> TournamentState:
    """Every match that exists now, each stage's state, and the final ranking once finished.

    With a ``memo`` (``runner.domain.stages.memo``) a stage whose entrants and results are
    unchanged since the last call is not planned again; the state is the same either way.
    ``slots``: the matches the run can play at once (``StageContext.slots``)."""
    ranking = list(config.entry_specs())
    groups = [TieGroup(tuple(ranking), "")] if len(ranking) > 1 else [TieGroup((e,), "") for e in ranking]
    advancing = list(ranking)
    last: Ranking | None = None
    matches: list[MatchPlan] = []
    stages: list[StageState] = []
    blocked = False
    waits_for_every_result = False
    window = None
    max_players = config.game_rules().max_players
    names = config.stage_names()
    for pos, st in enumerate(config.stages):
        if blocked:
            stages.append(StageState(st.name, st.planner, "waiting"))
            continue
        tiebreak = st.when == "tied_for_first"
        if tiebreak:
            group = last.tied_for_first() if last is not None else []
            if len(group) < 2:
                stages.append(StageState(st.name, st.planner, "skipped", notes=["no tie for first place"]))
                continue
            entrants = group
        else:
            entrants = list(advancing)
        opponents: tuple[str, ...] = ()
        if isinstance(st, SeedingStage | GauntletStage | SystemTestStage):
            opponents = tuple(config.seed_opponent_specs())
        ctx = StageContext(
            stage=st,
            seed=config.seed,
            boards=config.boards,
            opponents=opponents,
            max_players=max_players,
            slots=slots,
        )
        planner = PLANNERS.get(st.planner)
        out = planner(ctx, entrants, results) if memo is None else memo.plan(planner, ctx, entrants, results)
        matches.extend(out.matches)
        state = StageState(
            name=st.name,
            planner=st.planner,
            status="done" if out.done else "running",
            entrants=list(entrants),
            rounds=list(out.rounds),
            standings=list(out.standings),
            excluded=dict(out.excluded),
            notes=list(out.notes),
            summary=out.summary,
            tuning=out.tuning,
        )
        stages.append(state)
        if not out.done:
            blocked = True
            waits_for_every_result = out.waits_for_every_result
            window = out.window
            continue
        if out.skipped:
            state.status = "skipped"
            continue
        ranked = set(out.ranking.order)
        ranking = out.ranking.order + [e for e in ranking if e not in ranked]
        own_groups = stage_groups(out.ranking, st.name, st.rank_by)
        state.groups = [list(g.entries) for g in own_groups]
        groups = compose_groups(groups, own_groups)
        if tiebreak:
            keep = set(advancing)
            advancing = [e for e in ranking if e in keep]
        else:
            advancing = _advancing(st, out)
        last = out.ranking
        state.advancing = list(advancing)
        more = pos + 1 < len(names)
        if more:
            adv = set(advancing)
            state.standings = [
                r if r.status else replace(r, status="advanced" if r.entry in adv else "not advanced")
                for r in state.standings
            ]
    finished = not blocked
    places = final_places(groups, stages, {st.name: st.rank_by for st in config.stages}) if finished else []
    return TournamentState(
        matches=matches,
        stages=stages,
        finished=finished,
        final_ranking=ranking if finished else [],
        final_places=places,
        waits_for_every_result=waits_for_every_result,
        window=window,
    )


# -- audit output (tourney matches / standings --json) --------------------------


def _stage_decider(config: TournamentRules | None, stage: str) -> tuple[ScoringModel, list[str]]:
    if config is not None and stage in config.stage_names():
        st = config.stage(stage)
        return st.scoring, list(getattr(st, "match_win_by", ["wins", "score"]))
    return ScoringModel(), ["wins", "score"]


def match_row(
    plan: MatchPlan, games: Sequence[GameRecord] | None, config: TournamentRules | None = None
) -> dict[str, Any]:
    """A match as ``tourney matches --json`` prints it: where it sits in the bracket, its board
    and seat orders, its result.

    ``result`` is None until the match is played (``games`` None); then every game (order,
    winner, scores, verdict) and, for two-player matches, the match winner by the stage's
    ``match_win_by`` (None: tied match).
    """
    row: dict[str, Any] = to_builtins(plan)
    if games is None:
        row["status"] = "pending"
        row["result"] = None
        return row
    row["status"] = "done"
    result: dict[str, Any] = {
        "games": [
            {
                "order": list(g.order),
                "winner": effective_winner(g),
                "scores": dict(g.scores),
                "verdict": to_builtins(g.verdict),
                "reason": g.reason,
                "stopped_by": g.stopped_by,  # "" or the bound that stopped it (config bound)
                "moves": len(g.moves),
                # what entries wrote on stderr (a budget that cut a search ...), only when any did
                **({"stderr": {k: list(v) for k, v in g.stderr.items()}} if g.stderr else {}),
                # clocks scaled to the worker (scale_nps, docs/engines.md), only when any were
                **({"clock_scale": to_builtins(g.clock_scale)} if g.clock_scale else {}),
            }
            for g in games
        ]
    }
    if len(plan.players) == 2:
        table, decide_by = _stage_decider(config, plan.stage)
        result["match_winner"] = match_winner(games, plan.players[0], plan.players[1], table, decide_by)
    row["result"] = result
    return row


def matches_rows(
    state: TournamentState, results: Results, config: TournamentRules | None = None
) -> list[dict[str, Any]]:
    """``match_row`` for every planned match, plan order."""
    return [match_row(m, completed(results, m), config) for m in state.matches]


def standings_document(state: TournamentState) -> dict[str, Any]:
    """Every stage's state and ranking with the numbers behind it, and the overall ranking."""
    return {
        "finished": state.finished,
        "final_ranking": list(state.final_ranking),
        "final_places": [p.to_dict() for p in state.final_places],
        "stages": [
            {
                "name": s.name,
                "planner": s.planner,
                "status": s.status,
                "entrants": list(s.entrants),
                "advancing": list(s.advancing),
                "excluded": dict(s.excluded),
                "notes": list(s.notes),
                **({"summary": s.summary} if s.summary else {}),
                "rounds": [
                    {
                        "round": r.round,
                        "bracket": r.bracket,
                        "board_id": r.board_id,
                        "matches": list(r.match_ids),
                        "byes": list(r.byes),
                    }
                    for r in s.rounds
                ],
                "standings": [
                    {**row.to_dict(), "place": place_labels(s.groups).get(row.entry, str(row.rank))}
                    for row in s.standings
                ],
            }
            for s in state.stages
        ],
    }
