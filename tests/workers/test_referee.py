"""A game whose rules are a program in another language (examples/nim-referee, awk),
spoken to in JSON lines, in the sandbox, playing real entries."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from runner.domain.games import GameParamsError, get_game
from runner.domain.games.base import BoardError, IllegalMove
from runner.domain.match_values import VerdictKind
from workers.artifacts import ArtifactCache
from workers.referee import RefereeError, RefereeProgram

from .conftest import play

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures"
REFEREE = "workers.referee:RefereeProgram"


def nim_params(sandbox: str, **over: Any) -> dict[str, Any]:
    program = str(ROOT / "examples" / "nim-referee")
    return {
        "program": program,
        "run": ["mawk", "-W", "interactive", "-f", "nim.awk"],
        "name": "nim",
        "sandbox": sandbox,
        **over,
    }


def test_the_referee_answers_every_question_of_the_game_interface(cache: ArtifactCache) -> None:
    game = get_game(REFEREE, **nim_params(cache.hosts.name))
    assert isinstance(game, RefereeProgram) and game.name == "nim"
    assert game.default_board() == "10"
    with pytest.raises(BoardError, match="pile size"):
        game.validate_board("ten")
    state = game.new_game("5", 2)
    assert game.to_move(state) == 0 and game.legal_moves(state) == ["1", "2", "3"]
    assert game.render(state) == "pile 5\n" and game.outcome(state) is None
    with pytest.raises(IllegalMove, match="cannot take 4 from 5"):
        game.play(state, game.parse_move("4"))
    state = game.play(game.play(state, "3"), "2")
    outcome = game.outcome(state)
    assert outcome is not None and outcome.winners == (1,) and outcome.reason == "took the last"
    forfeited = game.outcome(game.forfeit(game.new_game("5", 2), 0))
    assert forfeited is not None and forfeited.winners == (1,)


def test_entries_play_a_referee_game(cache: ArtifactCache) -> None:
    params = nim_params(cache.hosts.name)
    generic = FIXTURES / "generic"
    result = play(cache, REFEREE, "10", [generic / "take-one", generic / "optimal"], game_params=params)
    (g,) = result.games
    assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
    assert [m.move for m in g.moves] == ["1", "1", "1", "3", "1", "3"]
    assert g.winner == "optimal" and g.reason == "took the last"
    # an illegal move is the referee's answer to play, charged to the entry
    illegal = play(cache, REFEREE, "10", [generic / "take-one", generic / "illegal"], game_params=params)
    (bad,) = illegal.games
    assert bad.verdict.kind is VerdictKind.ILLEGAL_MOVE and "cannot take 9 from 9" in bad.verdict.detail


def test_a_failing_referee_is_a_system_error_naming_it(cache: ArtifactCache) -> None:
    """It answers the first request (default_board, at set-up) and dies on the next."""
    params = {
        "program": str(FIXTURES / "referees" / "crashing"),
        "run": ["./referee.sh"],
        "sandbox": cache.hosts.name,
    }
    game = get_game(REFEREE, **params)
    with pytest.raises(RefereeError, match=r"referee \./referee\.sh: no answer to new_game"):
        game.new_game("10", 2)
    generic = FIXTURES / "generic"
    result = play(cache, REFEREE, "10", [generic / "take-one", generic / "optimal"], game_params=params)
    (g,) = result.games
    assert g.verdict.kind is VerdictKind.SYSTEM_ERROR and g.verdict.player is None
    assert "referee ./referee.sh: no answer to new_game" in g.verdict.detail


def test_a_referee_that_cannot_start_is_a_parameter_error(cache: ArtifactCache) -> None:
    params = nim_params(cache.hosts.name, run=["./no-such-referee"])
    with pytest.raises(GameParamsError, match=r"referee \./no-such-referee: no answer to default_board"):
        get_game(REFEREE, **params)
    with pytest.raises(GameParamsError, match="does not exist here"):
        get_game(REFEREE, **nim_params(cache.hosts.name, program="/no/such/dir"))
