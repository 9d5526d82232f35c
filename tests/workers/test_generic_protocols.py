"""The generic ``text`` and ``json`` protocols: a game from outside the package
(the nim fixture plugin) played by real processes, under each host."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from runner.domain.games import get_game, load_game_class
from runner.domain.match_values import Limits, VerdictKind
from runner.domain.registry import GENERIC_PROTOCOLS, protocol_carries
from tests import forked_cli
from workers.artifacts import ArtifactCache
from workers.protocols import JsonProtocol, TextProtocol, make_protocol, protocol_class
from workers.protocols.base import Seat

from .conftest import EASY, play

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
NIM = "nim_game:Nim"


@pytest.fixture(autouse=True)
def nim_importable(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.syspath_prepend(str(FIXTURES / "plugins"))
    load_game_class.cache_clear()
    yield
    load_game_class.cache_clear()


def generic(name: str) -> Path:
    return FIXTURES / "generic" / name


def test_the_generic_protocols_are_registered_and_carry_any_game() -> None:
    assert protocol_class("text") is TextProtocol and protocol_class("json") is JsonProtocol
    assert {"text", "json"} == GENERIC_PROTOCOLS
    assert protocol_carries("text", "nim") and protocol_carries("json", "boxing")
    assert not protocol_carries("mnk", "nim")
    with pytest.raises(ValueError, match="cannot play 'nim'"):
        make_protocol("mnk", get_game(NIM), None, [], Seat("x", 0, "X"), EASY, "10")  # type: ignore[arg-type]


def test_text_against_json_to_the_end(cache: ArtifactCache) -> None:
    result = play(cache, NIM, "10", [generic("take-one"), generic("optimal")])
    (g,) = result.games
    assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
    # 10: take-one 1 -> 9: optimal 1 -> 8: 1 -> 7: 3 -> 4: 1 -> 3: 3 -> 0
    assert [m.move for m in g.moves] == ["1", "1", "1", "3", "1", "3"]
    assert g.winner == "optimal" and g.reason == "took the last"


def test_one_json_process_sees_start_every_turn_and_the_whole_history(cache: ArtifactCache) -> None:
    for seats in ([generic("persistent"), generic("take-one")], [generic("take-one"), generic("persistent")]):
        result = play(cache, NIM, "10", seats)  # type: ignore[arg-type]
        (g,) = result.games
        assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
        assert len(g.moves) == 10


def test_game_params_reach_the_referee_on_the_worker(cache: ArtifactCache) -> None:
    """Taking 9 is illegal with the default max_take 3 (below), legal with max_take 9."""
    result = play(cache, NIM, "10", [generic("illegal"), generic("optimal")], game_params={"max_take": 9})
    (g,) = result.games
    assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
    assert [m.move for m in g.moves] == ["9", "1"] and g.winner == "optimal"


@pytest.mark.parametrize(
    ("entry", "kind", "detail"),
    [
        ("illegal", VerdictKind.ILLEGAL_MOVE, "cannot take 9"),
        ("garbage", VerdictKind.BAD_OUTPUT, "not JSON: 'take two please'"),
        ("wrong-shape", VerdictKind.BAD_OUTPUT, 'not {"move": "<text>"}'),
        ("silent", VerdictKind.TIMEOUT, ""),
        ("crasher", VerdictKind.CRASH, "cannot think about this"),
    ],
)
def test_what_an_entry_does_wrong_is_its_verdict(
    cache: ArtifactCache, entry: str, kind: VerdictKind, detail: str
) -> None:
    # the silent entry's wait is also the limit of the other's first move, which starts Python
    limits = Limits(move_wall_s=3.0) if entry == "silent" else EASY
    result = play(cache, NIM, "10", [generic("take-one"), generic(entry)], limits=limits)
    (g,) = result.games
    assert g.verdict.kind is kind, g.verdict
    assert g.verdict.player == entry
    assert detail in g.verdict.detail
    assert g.winner == "take-one"


def test_a_worker_without_the_plugin_answers_a_system_error_naming_the_import_error(
    cache: ArtifactCache,
) -> None:
    """Never charged to an entry: the coordinator retries the match on another worker."""
    result = play(cache, "broken_game:Nim", "10", [generic("take-one"), generic("optimal")])
    (g,) = result.games
    assert g.verdict.kind is VerdictKind.SYSTEM_ERROR and g.verdict.player is None
    assert "cannot import broken_game: ModuleNotFoundError" in g.verdict.detail
    assert "tourney_no_such_dependency" in g.verdict.detail


def test_tourney_play_takes_an_import_path(tmp_path: Path) -> None:
    """`tourney play --game package.module:Class`, as a user runs it (a real subprocess)."""
    environment = {
        **os.environ,
        "TOURNEY_WORK_DIR": str(tmp_path / "cache"),
        "PYTHONPATH": os.pathsep.join([str(FIXTURES / "plugins"), os.environ.get("PYTHONPATH", "")]),
    }
    entries = [str(generic("take-one")), str(generic("optimal"))]

    def tourney_play(*args: str) -> subprocess.CompletedProcess[str]:
        generous = ["--move-time", "10"]  # the default 1 s: less than Python may take to start when loaded
        command = [*forked_cli.TOURNEY, "play", "--sandbox", "none", *generous, *args]
        return forked_cli.run(command, capture_output=True, text=True, env=environment, timeout=120)

    played = tourney_play("--game", NIM, "--games", "2", "--json", *entries)
    assert played.returncode == 0, played.stderr
    games = json.loads(played.stdout)["games"]
    assert [g["verdict"]["kind"] for g in games] == ["normal", "normal"]
    assert [g["winner"] for g in games] == ["optimal", "optimal"]

    broken = tourney_play("--game", "broken_game:Nim", *entries)
    assert broken.returncode == 2
    assert "cannot import broken_game: ModuleNotFoundError" in broken.stderr
