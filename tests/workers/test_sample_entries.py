"""The sample entries in entries/<game>/ speak their protocol: a few moves each, no verdict.

Each plays the first moves of a game against a fixture entry of its game (both
seat orders), through PlainHost; the game is cut at a move cap, which scores a
draw with a ``normal`` verdict. Entries that misbehave on purpose live in
``entries/_faulty`` and are not collected here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from runner.domain.entries import read_entry_yaml
from runner.domain.match_values import Limits, VerdictKind
from workers.artifacts import ArtifactCache

from .conftest import play

ENTRIES = Path(__file__).resolve().parents[2] / "entries"
SAMPLES = sorted(p.parent for p in ENTRIES.glob("[!_]*/*/entry.yaml"))
#: every shipped entry under every host, builds included: the full suite's job; the fast lane
#: still runs the shipped entries through tests/entries
pytestmark = pytest.mark.integration

OPPONENT = {
    "boxing": ("boxing/native", "--------\n" * 4),
    "pousse": ("pousse/t1", "5"),
    "mnk": ("mnk/first_empty", "5 5 4"),
    "gomoku": ("mnk/first_empty", "9 9 5"),
    # the fake engine's fool's-mate script: f2f3 g2g4 as white, e7e5 first as black
    "chess": ("chess/fake-uci", "startpos"),
}
#: the opponent's variant, where it has one
OPPONENT_ARGS = {"chess": ["fools-mate"]}
#: a game's moves to play: the chess script's black d8h4 (move 4) could meet a blocked diagonal
MOVES = {"chess": 3}


@pytest.mark.skipif(not SAMPLES, reason="no sample entries in entries/ yet")
@pytest.mark.parametrize("entry", SAMPLES, ids=[f"{p.parent.name}/{p.name}" for p in SAMPLES])
def test_sample_entry_plays_its_first_moves(cache: ArtifactCache, entry: Path) -> None:
    spec = read_entry_yaml(entry)
    game = spec.game
    program = spec.argv()[0]
    if program.startswith("/") and not Path(program).exists():
        pytest.skip(f"{program} is not installed")  # a system engine (entries/chess)
    if cache.hosts.name == "none" and program.startswith("/") and Path(program).stat().st_mode & 0o6000:
        # Debian's phalanx is set-group-id: without the sandbox no limit can be put on it
        pytest.skip(f"{program} is set-id: only the sandbox can run it (docs/engines.md)")
    opponent, board = OPPONENT[game]
    name = spec.name
    opp_name = read_entry_yaml(Path(__file__).resolve().parents[1] / "fixtures" / opponent).name
    result = play(
        cache,
        game,
        board,
        [entry, (opponent, OPPONENT_ARGS.get(game, []))],
        orders=[[name, opp_name], [opp_name, name]],
        limits=Limits(move_wall_s=10.0),
        max_moves=MOVES.get(game, 4),
    )
    for g in result.games:
        assert g.verdict.kind is VerdictKind.NORMAL, g.verdict
        assert any(m.player == name for m in g.moves)
