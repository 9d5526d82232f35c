"""One registry shape: games, protocols, sandboxes and planners are each a ``Registry``
(name -> implementation) with one lookup whose error names the known names."""

from __future__ import annotations

import pytest

from runner.config import PLANNERS
from runner.domain.games import BUILTIN_GAMES, GAME_NAMES, GameLoadError
from runner.domain.games.plugins import game_registry
from runner.domain.registry import PROTOCOL_NAMES, SANDBOX_KINDS, Registry
from runner.domain.stages import PLANNERS as PLANNER_FUNCTIONS
from workers.protocols import PROTOCOLS
from workers.sandbox import SANDBOXES, HostError, PlainHostFactory, host_factory


def test_the_four_registries_have_one_shape_and_the_names_their_sources_give() -> None:
    games = game_registry()
    for registry in (games, PROTOCOLS, SANDBOXES, PLANNER_FUNCTIONS):
        assert isinstance(registry, Registry)
    assert PROTOCOLS.names() == PROTOCOL_NAMES
    assert SANDBOXES.names() == SANDBOX_KINDS
    assert PLANNER_FUNCTIONS.names() == PLANNERS
    assert set(GAME_NAMES) <= set(games.names()) and list(games.names()) == sorted(games.names())
    assert games.get("boxing") == BUILTIN_GAMES["boxing"]
    assert isinstance(host_factory("none"), PlainHostFactory)


@pytest.mark.parametrize(
    ("lookup", "error", "message"),
    [
        (
            lambda: PROTOCOLS.get("telnet"),
            KeyError,
            "unknown protocol 'telnet'; known protocols: gomocup, icfp98, json, mnk, potm-arena, text, uci, "
            "xboard",
        ),
        (lambda: host_factory("chroot"), HostError, "unknown sandbox 'chroot'; known sandboxes: bwrap, none"),
        (
            lambda: PLANNER_FUNCTIONS.get("roundrobin"),
            KeyError,
            "unknown planner 'roundrobin'; known planners: gauntlet, knockout, permutations, "
            "potm_elimination, round_robin, seeding, sprt, spsa, swiss, system_test",
        ),
        (
            lambda: game_registry().get("checkers"),
            GameLoadError,
            "unknown game 'checkers'; known games: boxing, chess, gomoku, mnk, pousse",
        ),
    ],
    ids=["protocol", "sandbox", "planner", "game"],
)
def test_an_unknown_name_raises_the_registrys_own_error_listing_the_known_names(
    lookup: object, error: type[Exception], message: str
) -> None:
    with pytest.raises(error) as raised:
        lookup()  # type: ignore[operator]
    assert message in str(raised.value)


def test_an_unknown_game_says_an_import_path_would_do() -> None:
    with pytest.raises(GameLoadError, match=r"\(or an import path package\.module:ClassName\)$"):
        game_registry().get("checkers")
