"""Replay every record of the real ICFP 1998 Pousse tournament (phase 1).

The records come from ``../shared/conformance/icfp98/games`` (see its README):
a normally ended game must end on exactly its last listed move with the
recorded winner; a game the judge stopped (time limit, invalid move, ...)
must have only legal moves, none of which ends it.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from runner.domain.games.judge import judge_transcript
from runner.domain.games.pousse import Pousse

RECORD = re.compile(r'winner: ([XO]) end: "([^"]*)" .*game: \((\d+)((?: [LRTB]\d+)*) \)\)\s*$')


@dataclass(frozen=True)
class Record:
    line: int
    winner: str
    end: str
    size: int
    moves: tuple[str, ...]


def load(path: Path) -> list[Record]:
    records = []
    for number, line in enumerate(path.read_text().splitlines(), start=1):
        m = RECORD.search(line)
        assert m, f"line {number} is not a game record: {line[:80]}"
        records.append(Record(number, m[1], m[2], int(m[3]), tuple(m[4].split())))
    return records


def test_every_record_agrees(icfp98_games: Path) -> None:
    records = load(icfp98_games)
    assert len(records) == 2352
    game = Pousse()
    reasons: Counter[str] = Counter()
    started = time.perf_counter()
    for rec in records:
        state = game.new_game(str(rec.size), 2)
        for i, text in enumerate(rec.moves, start=1):
            state = game.play(state, game.parse_move(text))
            outcome = game.outcome(state)
            if outcome is not None:
                assert rec.end == "game ended normally" and i == len(rec.moves), (
                    f"record {rec.line} ({rec.end}) ended early at move {i} of {len(rec.moves)}: "
                    f"{outcome.reason}"
                )
                assert "XO"[outcome.winners[0]] == rec.winner, f"record {rec.line}: {outcome.reason}"
                reasons["repetition" if "repeated" in outcome.reason else "straights"] += 1
        if rec.end == "game ended normally":
            assert game.outcome(state) is not None, f"record {rec.line} never ended"
    elapsed = time.perf_counter() - started
    # The README's own count: 354 of 1347 normal ends are repetitions.
    assert reasons == {"repetition": 354, "straights": 1347 - 354}
    assert elapsed < 20, f"replaying the tournament took {elapsed:.1f}s"


def test_judge_agrees_on_a_sample(icfp98_games: Path) -> None:
    # Every 25th record through the transcript judge, in the contest's stdin format.
    for rec in load(icfp98_games)[::25]:
        transcript = "\n".join([str(rec.size), *rec.moves]) + "\n"
        verdict = judge_transcript("pousse", transcript)
        assert verdict["moves"] == len(rec.moves)
        if rec.end == "game ended normally":
            assert verdict["over"] is True and verdict["winner"] == rec.winner
        else:
            assert verdict["over"] is False and verdict["winner"] is None


def test_record_pattern_reads_a_known_line() -> None:
    line = (
        '("Tue Sep  8 12:11:33 1998" X: 1 O: 2 winner: X end: "game ended normally" '
        "time: 1554062 game: (6 L3 T3 L3 ))"
    )
    m = RECORD.search(line)
    assert m is not None
    assert (m[1], m[2], m[3], m[4].split()) == ("X", "game ended normally", "6", ["L3", "T3", "L3"])
