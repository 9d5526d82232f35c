"""Each registry has one source; everything else that names its members is derived from it."""

from __future__ import annotations

from typing import ClassVar

import pytest

import runner.domain.entries
from runner.config import ELIMINATION_PLANNERS, PLANNERS, STAGE_MODELS, TournamentConfig, planner_name
from runner.domain.games import GAME_NAMES, get_game
from runner.domain.registry import PROTOCOL_GAMES, PROTOCOL_NAMES, SANDBOX_KINDS
from runner.domain.scoring import RANK_KEYS
from runner.domain.stages import PLANNERS as PLANNER_FUNCTIONS


def test_every_protocol_name_has_exactly_one_worker_adapter_with_the_registry_games() -> None:
    from workers.protocols import PROTOCOLS

    assert list(PROTOCOLS) == list(PROTOCOL_NAMES)
    for name, cls in PROTOCOLS.items():
        assert cls.games == PROTOCOL_GAMES[name]


def test_protocols_carry_only_registered_games_and_every_game_has_a_protocol() -> None:
    carried = set().union(*PROTOCOL_GAMES.values())
    assert carried == set(GAME_NAMES)


def test_an_adapter_for_an_unregistered_protocol_is_refused_at_definition() -> None:
    from workers.protocols.common import PerMoveProtocol

    with pytest.raises(TypeError, match=r"'smoke-signals' is not in runner\.domain\.registry"):

        class SmokeSignals(PerMoveProtocol):  # pragma: no cover - the class statement itself fails
            name: ClassVar[str] = "smoke-signals"


def test_entry_yaml_accepts_the_registry_names() -> None:
    assert runner.domain.entries.PROTOCOLS == PROTOCOL_NAMES
    assert runner.domain.entries.GAMES == GAME_NAMES


def test_sandbox_kinds_are_the_configs_and_the_workers() -> None:
    import workers.sandbox

    assert workers.sandbox.SANDBOX_KINDS is SANDBOX_KINDS
    assert SANDBOX_KINDS == ("bwrap", "none")
    schema = TournamentConfig.model_json_schema()["properties"]["sandbox"]
    assert tuple(schema["enum"]) == SANDBOX_KINDS


def test_every_stage_model_has_a_planner_function_under_its_name() -> None:
    assert list(PLANNER_FUNCTIONS) == list(PLANNERS) == [planner_name(m) for m in STAGE_MODELS]
    assert len(set(PLANNERS)) == len(PLANNERS)
    assert {"potm_elimination", "knockout"} == ELIMINATION_PLANNERS


def test_rank_keys_are_the_literal_the_config_accepts() -> None:
    assert RANK_KEYS == ("wins", "score", "points", "head_to_head", "buchholz", "seed", "name")


def test_default_move_time_comes_from_the_game() -> None:
    assert {name: get_game(name).default_move_wall_s for name in GAME_NAMES} == {
        "boxing": 1.0,
        "chess": 1.0,
        "gomoku": 1.0,
        "mnk": 1.0,
        "pousse": 2.0,
    }
