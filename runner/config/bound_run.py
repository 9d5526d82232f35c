"""A tournament config bound to what loading found: ``TournamentConfig``, what the rest of
the runner reads.

Loading (``runner.config.load``) fills in what the schema cannot know (the
entry specs found on disk, the config's directory, its warnings) through
``bind``; the accessors here answer from both halves (docs/config.md, "Paths").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from pydantic import PrivateAttr

from runner.config.errors import ConfigProblem
from runner.config.models import TournamentSchema
from runner.domain.boards import BoardResolver, BoardSpec
from runner.domain.entries import EntrySpec
from runner.domain.games import get_game
from runner.domain.games.base import Game
from runner.domain.match_values import EntryRef, Limits, NamedBoard
from runner.domain.openings import OPENINGS_BOARD, auto_per_match, groups
from runner.domain.stage_models import (
    DERIVED_SEATS,
    AnyStage,
    GauntletStage,
    RoundRobinStage,
    SeedingStage,
    SprtStage,
    SpsaStage,
)


class TournamentConfig(TournamentSchema):
    """A whole contest: game, boards, entries, limits and stages."""

    _base_dir: Path = PrivateAttr(default_factory=Path.cwd)
    _config_path: Path | None = PrivateAttr(default=None)
    _entries: dict[str, EntrySpec] = PrivateAttr(default_factory=dict)
    _opponents: dict[str, EntrySpec] = PrivateAttr(default_factory=dict)
    _boards: BoardResolver | None = PrivateAttr(default=None)
    #: a board that stands for several (``openings.per_match``) -> the boards it plays in turn
    _board_groups: dict[str, list[str]] = PrivateAttr(default_factory=dict)
    #: each stage's boards as the config lists them, before ``openings`` was expanded (None
    #: until it is): what ``regroup_openings`` expands again
    _listed_boards: tuple[tuple[str, ...], ...] | None = PrivateAttr(default=None)
    #: the openings a match that the expansion used (``openings_per_match``)
    _per_match: int | None = PrivateAttr(default=None)
    #: how many openings the book's selection holds (0 until expanded)
    _opening_count: int = PrivateAttr(default=0)
    _warnings: list[ConfigProblem] = PrivateAttr(default_factory=list)  # set by load_config

    # -- what the coordinator uses --------------------------------------
    def bind(
        self,
        *,
        base_dir: Path,
        entries: dict[str, EntrySpec],
        seed_opponents: dict[str, EntrySpec] | None = None,
        config_path: Path | None = None,
    ) -> TournamentConfig:
        """Attach what loading resolved (entry specs, base directory); tests bind synthetic entries."""
        self._base_dir = base_dir
        self._config_path = config_path
        self._entries = dict(entries)
        self._opponents = dict(seed_opponents or {})
        self._boards = None
        if self._listed_boards is None:  # bound again: the stages keep their expansion
            self._expand_openings()
        return self

    def _expand_openings(self, per_match: int | None = None) -> None:
        """The book's selected positions as boards, and ``openings`` in a stage's boards as their
        names (idempotent: a config bound again stays the same). With ``per_match`` K (``auto``, the
        default, K from the number of openings: ``runner.domain.openings.auto_per_match``; the
        argument, when given, instead), a stage lists a board per K openings instead
        (``runner.domain.openings.groups``), whose text is its first opening's and whose match
        plays all K (``match_boards``); which stages group them: ``_groups_openings``."""
        if self.openings is None or not any(OPENINGS_BOARD in listed for listed in self._stages_as_listed()):
            return
        if self._listed_boards is None:
            self._listed_boards = tuple(tuple(st.boards) for st in self.stages)
        else:  # expanded before: from the stages' own lists again, without the old groups
            for st, listed in zip(self.stages, self._listed_boards, strict=True):
                st.boards = list(listed)
            for group in self._board_groups:
                self.boards.pop(group, None)
            self._board_groups = {}
            self._boards = None
        chess960 = self.game_params.get("variant") == "chess960"
        chosen = self.openings.load(self._base_dir, self.seed, chess960)
        for o in chosen:
            self.boards.setdefault(o.name, BoardSpec(text=o.fen))
        names = [o.name for o in chosen]
        self._opening_count = len(chosen)
        self._per_match = per_match if per_match is not None else self.openings.openings_a_match(len(chosen))
        grouped: list[str] = []
        for group, members in groups(chosen, self._per_match):
            grouped.append(group)
            if len(members) > 1:
                self.boards.setdefault(group, BoardSpec(text=members[0].fen))
                self._board_groups[group] = [o.name for o in members]
        for st in self.stages:
            if OPENINGS_BOARD in st.boards:
                i = st.boards.index(OPENINGS_BOARD)
                played = grouped if self._groups_openings(st) else names
                st.boards = [*st.boards[:i], *played, *st.boards[i + 1 :]]

    def _groups_openings(self, stage: AnyStage) -> bool:
        """Whether ``stage`` plays its openings ``per_match`` a match: never an sprt or spsa
        stage (it decides, or tunes, after each pair); under ``auto`` only the stages that play
        every pairing on every board (round robin, gauntlet, seeding), so that a stage playing
        a board a round (elimination, knockout, swiss...) keeps one opening a round as before."""
        if isinstance(stage, SprtStage | SpsaStage):
            return False
        if self.openings is not None and self.openings.per_match == "auto":
            return isinstance(stage, RoundRobinStage | GauntletStage | SeedingStage)
        return True

    def _stages_as_listed(self) -> list[list[str]]:
        if self._listed_boards is None:
            return [list(st.boards) for st in self.stages]
        return [list(listed) for listed in self._listed_boards]

    @property
    def openings_per_match(self) -> int | None:
        """The openings a match the stages were planned with (``openings.per_match`` resolved),
        None without a book the stages play."""
        return self._per_match

    def regroup_openings(self, per_match: int) -> None:
        """Plan the stages' openings ``per_match`` a match whatever the config says: a run keeps
        the grouping it began with (``runner.storage.resolved``), so that resuming it, or reading
        it with a later tourney whose default differs, plans the same matches."""
        if self._per_match is not None and self._per_match != per_match:
            self._expand_openings(per_match)

    def fit_openings_to_slots(self, slots: int) -> None:
        """A new run's ``per_match: auto`` for the matches its own workers play at once
        (``slots``): fewer openings a match where the config's rule would leave slots idle (a
        two-engine test of 10 openings on 8 local slots: 2 matches of 5 under the config's rule,
        8 slots busy with 1 or 2 each now). The slots are shared by a stage's pairings, at least
        entries - 1 of them in every stage that groups openings. Only as a run begins: it records
        the number (``runner.storage.resolved``), and resuming it keeps that."""
        if self.openings is None or self.openings.per_match != "auto" or self._per_match is None:
            return
        per_pairing = -(-slots // max(1, len(self._entries) - 1))
        self.regroup_openings(auto_per_match(self._opening_count, per_pairing))

    def match_boards(self, board_id: str) -> tuple[NamedBoard, ...]:
        """``MatchSpec.boards`` of a match on ``board_id``: the openings it plays in turn when it
        stands for several (``openings.per_match``), else none (the match's board alone)."""
        return tuple(NamedBoard(name, self.board_text(name)) for name in self._board_groups.get(board_id, ()))

    @property
    def base_dir(self) -> Path:
        return self._base_dir

    @property
    def config_path(self) -> Path | None:
        return self._config_path

    @property
    def warnings(self) -> list[ConfigProblem]:
        """What ``load_config`` found that departs from a seed's rules without stopping the run."""
        return list(self._warnings)

    @property
    def limits_obj(self) -> Limits:
        return self.limits.to_limits()

    def entry_specs(self) -> dict[str, EntrySpec]:
        """The tournament's entrants, names unique, in config (= initial seed) order."""
        return dict(self._entries)

    def seed_opponent_specs(self) -> dict[str, EntrySpec]:
        return dict(self._opponents)

    def resolve_player(self, name: str) -> EntrySpec:
        """The entry behind any name a match can seat: an entrant, a seed opponent, or a seat
        derived from an entrant: '<entrant>~mirror' (system-test self-play), '<entrant>~plus' and
        '~minus' (spsa's two perturbed engines): the same program under a second name."""
        if name in self._entries:
            return self._entries[name]
        if name in self._opponents:
            return self._opponents[name]
        for suffix in DERIVED_SEATS:
            if name.endswith(suffix) and name[: -len(suffix)] in self._entries:
                return replace(self._entries[name[: -len(suffix)]], name=name)
        raise KeyError(f"no entry named {name!r} in this config")

    def player_refs(self, names: Sequence[str]) -> dict[str, EntryRef]:
        """``MatchSpec.entries`` for the players of a match."""
        return {n: self.resolve_player(n).ref() for n in dict.fromkeys(names)}

    def board_text(self, board_id: str) -> str:
        if self._boards is None:
            self._boards = BoardResolver(self.game, self.game_params, self.boards, self.seed, self._base_dir)
        return self._boards.text(board_id)

    def stage_names(self) -> list[str]:
        return [s.name for s in self.stages]

    def stage(self, name: str) -> AnyStage:
        for s in self.stages:
            if s.name == name:
                return s
        raise KeyError(name)

    def game_rules(self) -> Game[Any, Any]:
        return get_game(self.game, **self.game_params)


def json_schema() -> dict[str, Any]:
    """The JSON schema of tournament configs (``configs/schema.json``)."""
    return TournamentConfig.model_json_schema()
